"""Many processes writing ``auth.json`` at once (``pi login`` and the auth storage API): every
key kept, removals done, the file valid JSON with mode 0600, nothing left behind."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from battery import Battery
from battery import both_sizes_within
from battery import tries
from data_harness import PI
from data_harness import PiEnv
from data_harness import make_env

WRITER = """
import sys
from piko.plugins.providers.auth_storage import AuthStorage
path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
storage = AuthStorage(path)
for n in range(count):
    storage.set(f"{name}-{n}", {"type": "api_key", "key": f"key-{name}-{n}"})
storage.remove(f"doomed-{name}")
"""


def _providers(env: PiEnv, logins: int) -> None:
    """Providers ``login0``... in models.json (``pi login`` only stores keys of known providers)."""
    models = json.loads((env.home / "models.json").read_text())
    for n in range(logins):
        models["providers"][f"login{n}"] = {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
                                            "apiKey": "unused", "models": [{"id": "m"}]}  # fmt: skip
    (env.home / "models.json").write_text(json.dumps(models))


@both_sizes_within(1800)
def test_concurrent_writers_keep_every_key(battery: Battery, tmp_path: Path, slow: bool) -> None:
    logins = tries(6, 50, slow=slow)
    writers = tries(6, 50, slow=slow)
    keys_each = 10 if slow else 5
    env = make_env(tmp_path, _NoServer())
    _providers(env, logins)
    auth = env.home / "auth.json"
    seeded = {"kept": {"type": "api_key", "key": "kept-key"}}
    seeded.update({f"doomed-w{n}": {"type": "api_key", "key": "gone"} for n in range(writers)})
    auth.write_text(json.dumps(seeded))
    os.chmod(auth, 0o600)

    started = []
    for n in range(logins):
        key_file = tmp_path / f"key{n}.txt"
        key_file.write_text(f"sk-login-{n}\n")
        with key_file.open("rb") as key:  # no terminal: pi reads the key from stdin
            process = subprocess.Popen(
                [PI, "login", f"login{n}", "--api-key"], cwd=env.work, env=env.environment(), stdin=key,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            )  # fmt: skip
        started.append(("login", n, process))
    for n in range(writers):
        process = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(auth), f"w{n}", str(keys_each)],
            cwd=env.work, env=env.environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        started.append(("api", n, process))

    by_login = battery.case("auth writers: pi login processes")
    by_api = battery.case("auth writers: storage API processes")
    for kind, n, process in started:
        try:
            _out, err = process.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            process.kill()
            _out, err = process.communicate()
        tally = by_login if kind == "login" else by_api
        tally.tries += 1
        if process.returncode != 0:
            tally.fail(f"{kind} {n}: exit {process.returncode}: {err.decode()[-300:]}")

    whole = battery.case("auth writers: the file afterwards")
    whole.tries = 1
    mode = stat.S_IMODE(os.stat(auth).st_mode)
    if mode != 0o600:
        whole.fail(f"auth.json has mode {oct(mode)}")
    try:
        stored = json.loads(auth.read_text())
    except ValueError as exc:
        whole.fail(f"auth.json is not JSON: {exc}")
        stored = {}
    expected = {"kept": "kept-key"}
    expected.update({f"login{n}": f"sk-login-{n}" for n in range(logins)})
    expected.update({f"w{n}-{k}": f"key-w{n}-{k}" for n in range(writers) for k in range(keys_each)})
    got = {name: (value or {}).get("key") for name, value in stored.items()}
    by_login.lose(sum(1 for n in range(logins) if got.get(f"login{n}") != f"sk-login-{n}"), "login keys")
    lost_api = [name for name, key in expected.items() if name.startswith("w") and got.get(name) != key]
    by_api.lose(len(lost_api), f"keys missing: {lost_api[:5]}")
    whole.lose(0 if got.get("kept") == "kept-key" else 1, "the key stored before the writers started")
    revived = [name for name in got if name.startswith("doomed-")]
    if revived:
        whole.fail(f"removed keys came back: {revived[:5]}")
    left = [p.name for p in auth.parent.iterdir() if p.name.startswith((".auth.json", "auth.json."))]
    if left:
        whole.fail(f"left behind: {left}")


class _NoServer:
    """No provider is called here; ``make_env`` only needs a base URL."""

    base_url = "http://127.0.0.1:9"
