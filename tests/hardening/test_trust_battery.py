"""Trust and credential bad input: damaged ``trust.json`` files, concurrent ``pi trust`` writers,
failing ``!command`` keys. Nothing may be trusted by a damaged file, no decision or file lost,
no command output shown."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

from battery import Battery
from battery import both_sizes_within
from battery import tries
from data_harness import PI
from data_harness import make_env

from piko.config.trust_store import TrustFileError
from piko.config.trust_store import TrustStore


class _NoServer:
    base_url = "http://127.0.0.1:9"


def _damaged(rng: random.Random) -> str:
    """A trust file that must not count: not JSON, not an object, or a value that is no decision."""
    good = json.dumps({"/work": True, "/work/sub": False})
    kinds = [
        lambda: good[: rng.randrange(1, len(good) - 1)],  # cut short
        lambda: "".join(chr(rng.randrange(1, 0x2FF)) for _ in range(rng.randrange(1, 40))),
        lambda: json.dumps(rng.choice([[], [True], "yes", 1, None, 3.5])),
        lambda: json.dumps({"/work": rng.choice(["yes", 1, 0, [], {}, "true"])}),
        lambda: "\ufeff{" + "x" * rng.randrange(0, 10),
        lambda: good.replace(":", rng.choice(["=", ";", ""]), 1),
    ]
    text: str = rng.choice(kinds)()
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if isinstance(data, dict) and all(isinstance(v, bool) or v is None for v in data.values()):
        return text + "}"  # parsed as a valid file after all: break it
    return text


@both_sizes_within(900)
def test_damaged_trust_files_trust_nothing_and_are_kept(battery: Battery, tmp_path: Path, slow: bool) -> None:
    rng = random.Random(18)
    in_process = battery.case("trust: damaged trust.json (store)", tries=tries(200, 2000, slow=slow))
    agent = tmp_path / "agent"
    agent.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    for n in range(in_process.tries):
        text = _damaged(rng)
        path = agent / "trust.json"
        path.write_bytes(text.encode())
        store = TrustStore(agent)
        if store.decision(work) is not False or store.error is None:
            in_process.fail(f"{n}: {text!r} gave {store.decision(work)!r}, error {store.error!r}")
        try:
            store.set(work, True)
            in_process.fail(f"{n}: {text!r} was written over")
        except TrustFileError:
            pass
        if path.read_bytes() != text.encode():
            in_process.lose(1, f"{n}: {text!r} changed")

    runs = battery.case("trust: damaged trust.json (pi -p runs)", tries=tries(3, 20, slow=slow))
    env = make_env(tmp_path / "env", _NoServer())
    (env.work / ".pi" / "prompts").mkdir(parents=True)
    (env.work / ".pi" / "prompts" / "hi.md").write_text("EXPANDED\n")
    for n in range(runs.tries):
        text = _damaged(rng)
        (env.home / "trust.json").write_bytes(text.encode())
        done = subprocess.run(
            [PI, "--offline", "--provider", "faux", "-p", "/hi"], cwd=env.work, env=env.environment(),
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        said = [line for line in done.stderr.splitlines() if "trust file" in line]
        skipped = [line for line in done.stderr.splitlines() if "Project resources in" in line]
        if done.returncode != 0 or len(said) != 1 or len(skipped) != 1 or "EXPANDED" in done.stdout:
            runs.fail(f"{n}: {text!r}: exit {done.returncode}, stderr {done.stderr[-300:]!r}")
        if (env.home / "trust.json").read_bytes() != text.encode():
            runs.lose(1, f"{n}: {text!r} changed")


@both_sizes_within(1800)
def test_concurrent_pi_trust_runs_keep_every_decision(battery: Battery, tmp_path: Path, slow: bool) -> None:
    writers = battery.case("trust: concurrent pi trust / untrust", tries=tries(6, 40, slow=slow))
    env = make_env(tmp_path / "env", _NoServer())
    folders = [tmp_path / f"p{n}" for n in range(writers.tries)]
    started = []
    for n, folder in enumerate(folders):
        folder.mkdir()
        verb = "trust" if n % 2 == 0 else "untrust"
        started.append((n, subprocess.Popen(
            [PI, verb, str(folder)], cwd=env.work, env=env.environment(),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )))  # fmt: skip
    for n, process in started:
        try:
            _out, err = process.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            process.kill()
            _out, err = process.communicate()
        if process.returncode != 0:
            writers.fail(f"{n}: exit {process.returncode}: {err[-300:]}")
    saved = json.loads((env.home / "trust.json").read_text())
    for n, folder in enumerate(folders):
        if saved.get(os.path.realpath(folder)) is not (n % 2 == 0):
            writers.lose(1, f"the decision for p{n} is {saved.get(os.path.realpath(folder))!r}")
    if (env.home / "trust.json.lock").exists():
        writers.fail("the lock was left behind")


@both_sizes_within(900)
def test_failing_key_commands_name_the_provider_and_show_nothing(
    battery: Battery, tmp_path: Path, slow: bool
) -> None:
    rng = random.Random(1818)
    case = battery.case("auth: failing !command keys", tries=tries(4, 30, slow=slow))
    env = make_env(tmp_path / "env", _NoServer())
    for n in range(case.tries):
        secret = f"LEAK{rng.randrange(10**9):09d}"
        command, why = rng.choice(
            [
                (f"echo {secret}; exit {rng.randrange(1, 120)}", "exited with status"),
                (f"echo {secret} >&2", "printed nothing"),
                (f"printf '   \\n'; echo {secret} >&2; false", "exited with status 1"),
                ("exit 0", "printed nothing"),
            ]
        )
        (env.home / "auth.json").write_text(json.dumps({"openai": {"type": "api_key", "key": "!" + command}}))
        os.chmod(env.home / "auth.json", 0o600)
        done = subprocess.run(
            [PI, "auth", "print-api-key", "--provider", "openai"], cwd=env.work, env=env.environment(),
            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        lines = done.stderr.splitlines()
        if done.returncode != 1 or done.stdout or len(lines) != 1:
            case.fail(f"{n}: {command!r}: exit {done.returncode}, out {done.stdout!r}, err {done.stderr!r}")
        elif (
            not lines[0].startswith('Error: The API key command for provider "openai"') or why not in lines[0]
        ):
            case.fail(f"{n}: {command!r}: {lines[0]!r}")
        if secret in done.stdout + done.stderr:
            case.fail(f"{n}: the command's output was shown")
