"""The managed policy in interactive mode: a blocked tool cannot run, a refused model cannot be
chosen, a policy that cannot be read stops the start with one line, and every rule of the table
in ``support/policy_cases.py``."""

from __future__ import annotations

import json

import pytest
from scripted_turns import bash_then_answer
from support.policy_cases import CASES
from support.policy_cases import PROBE_ENV
from support.policy_cases import PolicyCase
from support.policy_cases import check_run


def _policy(t, data) -> None:
    path = t.root / "policy.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    t.env["PIKO_POLICY"] = str(path)


def test_a_blocked_tool_is_refused_and_the_rule_is_named(term) -> None:
    t = term(
        turns=bash_then_answer("echo ran", "could not run it"), env={"ANTHROPIC_API_KEY": "sk-x"}, start=False
    )
    _policy(t, {"tools": {"block": ["bash"]}, "models": {"allow": ["faux/*"]}})
    t.start()
    t.wait_ready()
    t.submit("run it")
    history = t.wait_for(r"could not run it", scrollback=True)
    assert "tool 'bash' is blocked by tools.block of the managed policy" in history
    assert "Tool bash not found" in history
    t.submit("/model anthropic/claude-sonnet-4-5")
    t.wait_for(r"not in models\.allow of the managed policy", scrollback=True)
    assert "faux-1" in t.screen()


def test_a_broken_policy_stops_the_start_with_one_line(term) -> None:
    t = term(start=False)
    path = t.root / "policy.json"
    path.write_text('{"tools": ', encoding="utf-8")
    t.env["PIKO_POLICY"] = str(path)
    t.start()
    t.wait_for(
        lambda _: "the managed policy cannot be used" in t.errors() or "managed policy" in t.history(),
        timeout=20,
    )
    text = t.errors() + t.history()
    assert "the managed policy cannot be used" in text and str(path) in text


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_rule_in_interactive_mode(term, case: PolicyCase) -> None:
    """The table of ``support/policy_cases.py`` (print and RPC: ``tests/packages/test_policy_modes.py``)."""
    t = term(settings=case.settings, agent_files=case.agent_files, env=dict(case.env), start=False)
    policy, probe = t.root / "policy.json", t.root / "facts.json"
    args = case.write(policy, t.agent, t.root)
    t.env.update({"PIKO_POLICY": str(policy), PROBE_ENV: str(probe)})
    t.start(["--provider", "faux", *args])
    if case.starts:
        t.wait_ready()
        t.wait_for(lambda _: probe.exists(), timeout=20)
        line = case.expected_line(policy)
        if line is not None:
            flat = " ".join(line.split())
            t.wait_for(lambda _: flat in " ".join((t.errors() + t.history()).split()), timeout=20)
        returncode = None
    else:
        t.wait_for(r"\[piko exited with 1\]", timeout=20, scrollback=True)
        returncode = 1
    check_run(case, policy, probe, t.errors() + t.history(), returncode)
