"""Planted-key leak search: distinctive fake credentials must appear in no output of a run.

Each try plants fresh fake keys (``OPENAI_API_KEY`` in the environment, an ``auth.json`` API key
and OAuth tokens, a ``models.json`` ``apiKey`` and credential header, a ``!command`` key,
``--api-key``) and runs ``pi`` with ``PIKO_TRACE`` (to stderr or a file) in print, json or RPC
mode against the scripted server: a successful turn, or a 401, a 500 (retried) or a mid-stream
error whose message echoes the key back; a careless extension logs the key and fails with it in
its message. The session is then exported to HTML (RPC ``export_html``, else ``pi --export``).
The search covers stdout, stderr, the trace file, the session files, the HTML page and every
other file the run left under its folders, for each planted value. A hit is a failure; so is a
run that did not do what the search relies on (the key never reached the server, no answer, no
session, no page).
"""

from __future__ import annotations

import itertools
import json
import os
import secrets
import string
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from battery import Battery
from battery import both_sizes
from battery import tries
from support.llm_server import LLMServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rpc"))

from rpc_client import PI
from rpc_client import RpcProcess
from rpc_client import hermetic_environment

# Where the key of each provider comes from, and the provider/model it is used with.
SOURCES = ("environment", "auth.json", "models.json", "!command", "--api-key")
MODES = ("print", "json", "rpc")
OUTCOMES = ("answer", "401", "stream error", "500 then answer")
COMBINATIONS = list(itertools.product(SOURCES, MODES, OUTCOMES))
STRIDE = 7  # coprime with len(COMBINATIONS): a small sample covers every source, mode and outcome

PROVIDERS = {
    "environment": ("openai", "gpt-4.1-mini"),
    "auth.json": ("anthropic", "claude-haiku-4-5"),
    "models.json": ("vault", "vault-1"),
    "!command": ("vaultcmd", "vault-cmd-1"),
    "--api-key": ("vaultflag", "vault-flag-1"),
}


class Planted:
    """One try's fake credentials, each with a marker no real output would contain."""

    def __init__(self) -> None:
        tag = "".join(secrets.choice(string.ascii_lowercase) for _ in range(12))  # no "500" to retry on
        self.values = {
            "environment key": f"sk-proj-plantedenv{tag}",
            "auth.json key": f"sk-ant-api03-plantedauth{tag}",
            "auth.json OAuth access token": f"sk-ant-oat01-plantedaccess{tag}",
            "auth.json OAuth refresh token": f"sk-ant-ort01-plantedrefresh{tag}",
            "models.json apiKey": f"mj-plantedmodels{tag}",
            "models.json header": f"hv-plantedheader{tag}",
            "!command key": f"cmd-plantedcommand{tag}",
            "--api-key key": f"fl-plantedflag{tag}",
        }

    def key_of(self, source: str) -> str:
        return self.values[
            {
                "environment": "environment key",
                "auth.json": "auth.json key",
                "models.json": "models.json apiKey",
                "!command": "!command key",
                "--api-key": "--api-key key",
            }[source]
        ]


# A careless extension of the user: it logs the key it finds and fails with it in the message.
CARELESS_EXTENSION = """import os


def activate(pi):
    def careless(event, ctx):
        key = os.environ.get("OPENAI_API_KEY", "")
        pi.logger.warning("careless extension saw %s", key)
        raise RuntimeError(f"careless extension failed with {key}")

    pi.on("before_agent_start", careless)
"""


def _config(agent: Path, server: LLMServer, planted: Planted) -> None:
    """models.json and auth.json with the planted values (these two files are the inputs)."""
    (agent / "extensions").mkdir()
    (agent / "extensions" / "careless.py").write_text(CARELESS_EXTENSION, encoding="utf-8")
    custom = {"api": "openai-completions", "baseUrl": server.base_url + "/v1"}
    models = {
        "providers": {
            "openai": {"baseUrl": server.base_url + "/v1"},
            "anthropic": {"baseUrl": server.base_url},
            "vault": {
                **custom,
                "apiKey": planted.values["models.json apiKey"],
                "headers": {"X-Vault-Auth": planted.values["models.json header"]},
                "models": [{"id": "vault-1"}],
            },
            "vaultcmd": {
                **custom,
                "apiKey": f"!printf %s {planted.values['!command key']}",
                "models": [{"id": "vault-cmd-1"}],
            },
            # models.json wants a key for custom models; --api-key replaces it
            "vaultflag": {**custom, "apiKey": "NOT_SET_PLACEHOLDER", "models": [{"id": "vault-flag-1"}]},
        }
    }
    (agent / "models.json").write_text(json.dumps(models), encoding="utf-8")
    auth = {
        "anthropic": {"type": "api_key", "key": planted.values["auth.json key"]},
        "example-oauth": {
            "type": "oauth",
            "access": planted.values["auth.json OAuth access token"],
            "refresh": planted.values["auth.json OAuth refresh token"],
            "expires": 4102444800000,
        },
    }
    (agent / "auth.json").write_text(json.dumps(auth), encoding="utf-8")
    os.chmod(agent / "auth.json", 0o600)
    # a 500 is retried by the session at once (not silently by the HTTP client)
    retry = {"retry": {"baseDelayMs": 1, "provider": {"maxRetries": 0}}}
    (agent / "settings.json").write_text(json.dumps(retry), encoding="utf-8")


EXPECTED = {  # what each outcome must show somewhere, or the search proves nothing
    "answer": "All good.",
    "401": "Incorrect API key provided",
    "stream error": "was revoked mid-stream",
    "500 then answer": "All good.",
}


def _turns(source: str, outcome: str, planted: Planted) -> list[dict[str, Any]]:
    """The scripted server's answers; the failing ones quote the key (and header) they were sent."""
    answer = {"blocks": [{"text": "All good."}]}
    if outcome == "answer":
        return [answer]
    echoed = planted.key_of(source)
    if source == "models.json":
        echoed += f" (header X-Vault-Auth: {planted.values['models.json header']})"
    message = {
        "401": f"Incorrect API key provided: {echoed}.",
        "stream error": f"The credential {echoed} was revoked mid-stream.",
        "500 then answer": f"Internal failure while checking {echoed}.",
    }[outcome]
    if source == "auth.json":  # the Anthropic wire format
        kind = {"401": "authentication_error", "stream error": "permission_error"}.get(outcome, "api_error")
        body: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
    elif source == "environment" and outcome == "stream error":  # an OpenAI Responses error event
        body = {"code": "invalid_api_key", "message": message, "param": None}
    else:
        body = {"error": {"message": message, "type": "invalid_request_error", "code": "invalid_api_key"}}
    if outcome == "stream error":
        return [{"blocks": [{"text": "Starting the answer"}], "stream_error": {"after": 2, "body": body}}]
    if outcome == "401":
        return [{"status": 401, "error_body": body}]
    return [{"status": 500, "error_body": body}, answer]  # retried by the session (auto_retry_start)


def _files(root: Path, inputs: tuple[Path, ...]) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        if path.is_file() and path not in inputs:
            yield path


class Run:
    """One try: its folders, what it printed, and what it is expected to have done."""

    def __init__(
        self, root: Path, index: int, combination: tuple[str, str, str], *, trace_file: bool
    ) -> None:
        self.source, self.mode, self.outcome = combination
        self.name = f"#{index} {self.source}/{self.mode}/{self.outcome}"
        self.home = root / "home"
        self.agent = self.home / ".pi" / "agent"
        self.work = root / "work"
        self.agent.mkdir(parents=True)
        self.work.mkdir(parents=True)
        self.trace = root / "trace.log" if trace_file else None  # else to stderr
        self.export = self.work / "export.html"
        self.outputs: dict[str, str] = {}

    def env(self, planted: Planted) -> dict[str, str]:
        env = hermetic_environment()
        env.update(
            PI_CODING_AGENT_DIR=str(self.agent),
            PIKO_CACHE_DIR=str(self.agent / "cache"),
            HOME=str(self.home),
            OPENAI_API_KEY=planted.values["environment key"],
            PIKO_TRACE=str(self.trace) if self.trace else "1",
            # a request that is not for the scripted server fails here, never leaves the machine
            HTTP_PROXY="http://127.0.0.1:9",
            HTTPS_PROXY="http://127.0.0.1:9",
            NO_PROXY="127.0.0.1",
        )
        return env

    def args(self, planted: Planted) -> list[str]:
        provider, model = PROVIDERS[self.source]
        args = ["--provider", provider, "--model", model, "--tools", "read"]
        if self.source == "--api-key":
            args += ["--api-key", planted.values["--api-key key"]]
        return args

    def keep_output(self, process: RpcProcess) -> None:
        """What an RPC process wrote, among the outputs searched for planted keys."""
        self.outputs["stdout"] = b"\n".join(process.raw_lines).decode("utf-8", "replace")
        self.outputs["stderr"] = process.stderr

    def execute(self, planted: Planted) -> None:
        env = self.env(planted)
        if self.mode == "rpc":
            with RpcProcess(self.agent, self.work, ["--mode", "rpc", *self.args(planted)], env) as process:
                process.request({"id": "p", "type": "prompt", "message": "say hi"})
                for _attempt in range(2 if self.outcome == "500 then answer" else 1):  # the retry ends again
                    process.wait_for(lambda r: r.get("type") == "agent_end", timeout=60)
                exported = process.request({"id": "x", "type": "export_html", "outputPath": str(self.export)})
                self.outputs["rpc export_html response"] = json.dumps(exported)
                process.close()
            self.keep_output(process)
            return
        flag = ["-p"] if self.mode == "print" else ["--mode", "json"]
        done = subprocess.run(
            [PI, *flag, *self.args(planted), "say hi"],
            cwd=self.work, env=env, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        self.outputs["stdout"], self.outputs["stderr"] = done.stdout, done.stderr
        sessions = sorted((self.agent / "sessions").rglob("*.jsonl"))
        if sessions:
            exported_run = subprocess.run(
                [PI, "--export", str(sessions[-1]), str(self.export)],
                cwd=self.work, env=env, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL,
            )  # fmt: skip
            self.outputs["pi --export stdout"] = exported_run.stdout
            self.outputs["pi --export stderr"] = exported_run.stderr

    def missing(self, server: LLMServer, planted: Planted) -> list[str]:
        """What the run should have done but did not (the search would prove nothing)."""
        problems: list[str] = []
        key = planted.key_of(self.source)
        sent = [str(v) for r in server.requests for v in r["headers"].values()]
        if not any(key in value for value in sent):
            problems.append("the planted key never reached the server")
        if self.source == "models.json" and planted.values["models.json header"] not in sent:
            problems.append("the planted header never reached the server")
        everything = self.outputs.get("stdout", "") + self.outputs.get("stderr", "")
        for expected in (EXPECTED[self.outcome], "careless extension saw", "careless extension failed with"):
            if expected not in everything:
                problems.append(f"{expected!r} is in no output")
        if self.outcome == "500 then answer" and len(server.requests) != 2:
            problems.append(f"{len(server.requests)} requests: the 500 was not retried once")
        traced = (
            self.trace.read_text() if self.trace and self.trace.exists() else self.outputs.get("stderr", "")
        )
        if "[piko-trace]" not in traced or (
            "piko_resolve_api_key" not in traced and self.source != "--api-key"
        ):
            problems.append("no trace of the key lookup")
        if not list((self.agent / "sessions").rglob("*.jsonl")):
            problems.append("no session file")
        if not self.export.exists():
            problems.append("no exported page")
        return problems

    def leaks(self, planted: Planted, root: Path, inputs: tuple[Path, ...] = ()) -> list[str]:
        """Every planted value found in an output or a file the run left (not in its inputs)."""
        inputs = (self.agent / "models.json", self.agent / "auth.json", *inputs)
        texts = dict(self.outputs)
        for path in _files(root, inputs):
            texts[str(path.relative_to(root))] = path.read_bytes().decode("utf-8", "replace")
        found: list[str] = []
        for what, value in planted.values.items():
            for where, text in texts.items():
                at = text.find(value)
                if at >= 0:
                    context = text[max(0, at - 60) : at + len(value) + 20].replace("\n", "\\n")
                    found.append(f"{what} in {where}: ...{context}...")
        return found


@both_sizes
def test_planted_keys_appear_in_no_output(battery: Battery, tmp_path: Path, slow: bool) -> None:
    count = min(tries(8, len(COMBINATIONS), slow=slow), len(COMBINATIONS))
    chosen = [COMBINATIONS[(i * STRIDE) % len(COMBINATIONS)] for i in range(count)]
    tally = battery.case("planted keys: print/json/rpc, trace, errors, sessions, export")
    tally.tries = len(chosen)
    for index, combination in enumerate(chosen):
        planted = Planted()
        root = tmp_path / f"run{index}"
        run = Run(root, index, combination, trace_file=bool(index % 2))
        with LLMServer(_turns(run.source, run.outcome, planted)) as server:
            _config(run.agent, server, planted)
            try:
                run.execute(planted)
            except (TimeoutError, EOFError, subprocess.TimeoutExpired) as exc:
                tally.fail(f"{run.name}: the run did not finish: {exc}")
                continue
            problems = run.missing(server, planted) + run.leaks(planted, root)
        if problems:
            tally.fail(f"{run.name}: " + "; ".join(problems[:3]))


def _old_session(path: Path, work: Path, planted: Planted) -> None:
    """A session written before keys were redacted (or by pi): errors and a tool result quote them."""
    leaked = ", ".join(v for k, v in planted.values.items() if k not in ("!command key", "--api-key key"))
    lines = [
        {"type": "session", "version": 3, "id": "0a1b2c3d-0000-4000-8000-000000000001",
         "timestamp": "2026-01-05T10:00:00.000Z", "cwd": str(work)},
        {"type": "message", "id": "e0000001", "parentId": None, "timestamp": "2026-01-05T10:00:01.000Z",
         "message": {"role": "user", "content": "cat .env", "timestamp": 1767607201000}},
        {"type": "message", "id": "e0000002", "parentId": "e0000001", "timestamp": "2026-01-05T10:00:02.000Z",
         "message": {"role": "assistant", "content": [], "api": "openai-completions", "provider": "vault",
                     "model": "vault-1", "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                     "totalTokens": 0, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                     "total": 0}}, "stopReason": "error", "timestamp": 1767607202000,
                     "errorMessage": f"401 Incorrect API key provided: {leaked}"}},
    ]  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


@both_sizes
def test_an_old_session_quoting_keys_is_exported_without_them(
    battery: Battery, tmp_path: Path, slow: bool
) -> None:
    """The user's known keys (auth.json, models.json, the environment) are masked in an export of
    a session that holds them; ``!command`` and ``--api-key`` keys are not known without a run."""
    chosen = list(itertools.product(("pi --export", "rpc export_html"), ("stderr", "file")))
    chosen = chosen[: min(tries(2, len(chosen), slow=slow), len(chosen))]
    tally = battery.case("planted keys: export of an old session quoting them")
    tally.tries = len(chosen)
    for index, (how, trace) in enumerate(chosen):
        planted = Planted()
        root = tmp_path / f"old{index}"
        run = Run(root, index, ("models.json", "rpc", "answer"), trace_file=trace == "file")
        session = run.agent / "sessions" / "old" / "2026-01-05T10-00-00-000Z_old.jsonl"
        with LLMServer([]) as server:
            _config(run.agent, server, planted)
            _old_session(session, run.work, planted)
            env = run.env(planted)
            if how == "rpc export_html":
                args = ["--mode", "rpc", "--session", str(session)]
                with RpcProcess(run.agent, run.work, args, env) as process:
                    response = process.request(
                        {"id": "x", "type": "export_html", "outputPath": str(run.export)}
                    )
                    run.outputs["rpc export_html response"] = json.dumps(response)
                    process.close()
                run.keep_output(process)
            else:
                done = subprocess.run(
                    [PI, "--export", str(session), str(run.export)],
                    cwd=run.work, env=env, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL,
                )  # fmt: skip
                run.outputs["stdout"], run.outputs["stderr"] = done.stdout, done.stderr
        problems = (
            [] if run.export.exists() else [f"no exported page: {run.outputs.get('stderr', '')[-300:]}"]
        )
        if run.export.exists() and "…(redacted)" not in run.export.read_text(encoding="utf-8"):
            problems.append("the page shows no masked key: the session's error was not exported")
        problems += run.leaks(planted, root, inputs=(session,))
        if problems:
            tally.fail(f"{how}, trace to {trace}: " + "; ".join(problems[:3]))
