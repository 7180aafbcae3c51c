"""Each managed-policy rule in print and RPC mode (the table is ``support/policy_cases.py``; the
interactive mode runs it in ``tests/interactive/test_managed_policy.py``)."""

from __future__ import annotations

import json
import subprocess

import pytest
from pkg_env import PiEnv
from support.policy_cases import CASES
from support.policy_cases import PROBE_ENV
from support.policy_cases import PolicyCase
from support.policy_cases import check_run


def _prepare(pienv: PiEnv, case: PolicyCase) -> list[str]:
    if case.settings:
        (pienv.agent_dir / "settings.json").write_text(json.dumps(case.settings), encoding="utf-8")
    return case.write(pienv.policy, pienv.agent_dir, pienv.root)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_rule_in_print_mode(pienv: PiEnv, case: PolicyCase) -> None:
    args = _prepare(pienv, case)
    probe = pienv.root / "facts.json"
    done = pienv.pi("--provider", "faux", "--no-session", *args, "-p", "hi", check=False,
                    **{PROBE_ENV: str(probe)}, **case.env)  # fmt: skip
    assert (done.returncode == 0) is case.starts, done.stderr
    check_run(case, pienv.policy, probe, done.stdout + done.stderr, done.returncode)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_rule_in_rpc_mode(pienv: PiEnv, case: PolicyCase) -> None:
    args = _prepare(pienv, case)
    probe = pienv.root / "facts.json"
    done = subprocess.run(
        [str(pienv.python), "-m", "piko", "--provider", "faux", "--no-session", "--mode", "rpc", *args],
        input=json.dumps({"id": "1", "type": "get_state"}) + "\n", capture_output=True, text=True,
        env=pienv.env(**{PROBE_ENV: str(probe)}, **case.env), cwd=pienv.root, timeout=120,
    )  # fmt: skip
    assert (done.returncode == 0) is case.starts, done.stderr
    if case.starts:
        answers = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        assert any(r.get("id") == "1" and r.get("success") for r in answers), done.stdout
    check_run(case, pienv.policy, probe, done.stdout + done.stderr, done.returncode)
