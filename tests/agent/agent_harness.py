"""Running the real ``pi`` command against the scripted LLM server, the way pi's transcripts were made."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from string import Template
from typing import Any

from support.pi_dirs import make_pi_dirs
from support.streams import update_delta

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "pi_mono_samples"
SESSION_DIR_ENV = "PI_CODING_AGENT_SESSION_DIR"
# provider keys of the developer's own environment must not leak into the runs
_KEY_SUFFIXES = ("_API_KEY", "_OAUTH_TOKEN", "_BEARER_TOKEN_BEDROCK")
PI = str(Path(sys.executable).with_name("pi"))
MOCK = ("--provider", "mock", "--model", "mock-1")
"""The arguments that pick the scripted server's OpenAI-style model, ``mock/mock-1``."""
OK: list[dict[str, Any]] = [{"blocks": [{"text": "ok"}]}]
"""One scripted turn answering ``ok``: the turns of a run whose answer does not matter."""


def sample(name: str, file: str) -> Any:
    """A file of a pi transcript (parsed for .json and .jsonl files, text otherwise)."""
    path = SAMPLES / name / file
    text = path.read_text(encoding="utf-8")
    if file.endswith(".json"):
        return json.loads(text)
    if file.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return text


_RECORD = """
import json, os
LOG = os.environ["PIKO_TEST_LOG"]

def record(**data):
    with open(LOG, "a") as fh:
        fh.write(json.dumps(data) + "\\n")
"""


def with_record(source: str) -> str:
    """A test extension's ``source`` after the lines that define ``record(**data)``, which appends
    a JSON line to ``$PIKO_TEST_LOG`` (what :func:`run_extension` reads back)."""
    return _RECORD + source


_COMMAND_PROVIDER = Template("""
from piko.plugins.providers.builder import MessageBuilder

async def stream_simple(model, context, options):
    builder = MessageBuilder(model)
    yield builder.start()
    index, event = builder.text_start()
    yield event
    yield builder.text_delta(index, $reply)
    yield builder.text_end(index)
    yield builder.done()

def activate(pi):
    pi.register_provider("local-command", {
        "baseUrl": "https://command-provider.invalid/", "apiKey": "unused", "api": $api,
        "streamSimple": stream_simple, "models": [{"id": $model_id, "maxTokens": 1000}],
    })
""")


def command_provider(reply: str, *, api: str, model_id: str) -> str:
    """The source of an extension registering ``local-command``, a command-backed provider of the
    API ``api`` with the one model ``model_id``, whose every answer is one text block: ``reply``,
    a Python expression that may read the stream's ``options``."""
    return _COMMAND_PROVIDER.substitute(reply=reply, api=repr(api), model_id=repr(model_id))


def run_extension(
    pi_env: Any,
    tmp_path: Path,
    source: str,
    turns: list[dict[str, Any]],
    *args: str,
    name: str = "ext.py",
    model: tuple[str, str] = ("mock", "mock-1"),
    settings: dict[str, Any] | None = None,
) -> tuple[PiEnv, subprocess.CompletedProcess[str], list[Any]]:
    """``pi -e EXT --provider P --model M ARGS`` with the extension ``source`` (the file ``name``)
    against a server scripted with ``turns`` (``model`` is ``(P, M)``; ``settings`` the global
    settings.json): the env, the finished run (asserted to have succeeded, its stderr the message
    if not), and the JSON lines the extension wrote to ``$PIKO_TEST_LOG``."""
    ext = tmp_path / name
    ext.write_text(source)
    log = tmp_path / "log.jsonl"
    env = pi_env(turns) if settings is None else pi_env(turns, settings)
    provider, model_id = model
    done = env.run(
        "-e", str(ext), "--provider", provider, "--model", model_id, *args, env={"PIKO_TEST_LOG": str(log)}
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return env, done, rows


def run_logging_extension(pi_env: Any, tmp_path: Path, source: str) -> list[Any]:
    """``pi -p go`` with the extension ``source`` through two turns (a tool call, then the answer);
    the JSON lines the extension wrote to ``$PIKO_TEST_LOG``."""
    turns = [*sample("c-tools-json", "scenario.json")[:1], {"blocks": [{"text": "ok"}]}]
    _env, _done, rows = run_extension(pi_env, tmp_path, source, turns, "-p", "go", name="logging_ext.py")
    return rows


def sample_events(name: str) -> list[dict[str, Any]]:
    """The JSON lines pi printed in a transcript's ``stdout.txt``."""
    return json_lines(sample(name, "stdout.txt"))


@dataclass
class PiEnv:
    """A config dir whose ``models.json`` points at ``server``, and a work dir like the samples'."""

    home: Path
    work: Path
    server: Any
    extra_env: dict[str, str] = field(default_factory=dict)

    def run(
        self,
        *args: str,
        stdin: str | None = None,
        timeout: float = 60,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PI, *args],
            cwd=cwd or self.work,
            env=self.environment(env),
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def environment(self, env: dict[str, str] | None = None) -> dict[str, str]:
        """The variables a run gets: this env's config dirs, no keys or session dir from the shell."""
        full_env = {k: v for k, v in os.environ.items() if not k.endswith(_KEY_SUFFIXES)}
        full_env.pop("PIKO_TRACE", None)
        full_env.pop(SESSION_DIR_ENV, None)
        full_env.update(
            PI_CODING_AGENT_DIR=str(self.home),
            PIKO_CACHE_DIR=str(self.home / "cache"),
            HOME=str(self.home.parent),
        )
        full_env.update(self.extra_env)
        full_env.update(env or {})
        return full_env

    def start(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        """``pi *args`` running in the background (stdin closed, output piped)."""
        return subprocess.Popen(
            [PI, *args],
            cwd=self.work,
            env=self.environment(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def sessions(self) -> list[Path]:
        return sorted((self.home / "sessions").rglob("*.jsonl"))

    # -- files and what was sent --------------------------------------------------------------

    @property
    def user_home(self) -> Path:
        """``$HOME`` of the runs (``~/.agents/skills`` lives under it)."""
        return self.home.parent

    def write(self, relative: str, text: str, *, base: Path | None = None) -> Path:
        """Write a file under the work dir (or ``base``), creating folders."""
        path = (base or self.work) / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def trust(self, folder: Path | None = None, trusted: bool = True) -> Path:
        """Save a trust decision for the work dir (or ``folder``) in ``trust.json``, as ``pi trust`` does."""
        path = self.home / "trust.json"
        decisions = json.loads(path.read_text()) if path.exists() else {}
        decisions[os.path.realpath(folder or self.work)] = trusted
        path.write_text(json.dumps(decisions))
        return path

    def settings(self, data: dict[str, Any], *, project: bool = False) -> Path:
        """Write the global (or the work dir's project) ``settings.json``."""
        path = (self.work / ".pi" if project else self.home) / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data), encoding="utf-8")
        return path

    def models(self, change: Any) -> None:
        """Edit ``models.json`` in place: ``change(data)`` mutates the parsed file."""
        path = self.home / "models.json"
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))

    def system_prompt(self, index: int = 0) -> str:
        """The system prompt of the ``index``-th request (OpenAI or Anthropic shape)."""
        return system_prompt_of(self.server.requests[index]["body"])

    def user_texts(self, index: int = -1) -> list[str]:
        """The text of every user message of a request (content blocks joined)."""
        return user_texts_of(self.server.requests[index]["body"])

    def tool_names(self, index: int = 0) -> list[str]:
        body = self.server.requests[index]["body"]
        return [t.get("function", t).get("name") for t in body.get("tools") or []]

    def session_lines(self, index: int = -1) -> list[dict[str, Any]]:
        path = self.sessions()[index]
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def make_env(tmp_path: Path, server: Any, settings: dict[str, Any] | None = None) -> PiEnv:
    home, work = make_pi_dirs(tmp_path / f"env{len(list(tmp_path.glob('env*')))}", server, settings)
    return PiEnv(home=home, work=work, server=server)


def system_prompt_of(body: dict[str, Any]) -> str:
    if isinstance(body.get("system"), list):  # anthropic-messages
        return "".join(block.get("text", "") for block in body["system"])
    first = body["messages"][0]
    assert first["role"] in ("system", "developer"), first
    return str(first["content"])


def user_texts_of(body: dict[str, Any]) -> list[str]:
    texts = []
    for message in body.get("messages") or []:
        if message.get("role") != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
        else:
            texts.append("".join(b.get("text", "") for b in content if b.get("type") == "text"))
    return texts


def json_lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


_VOLATILE = {"timestamp", "id", "parentId", "cwd"}


def strip_volatile(value: Any) -> Any:
    """Drop keys whose values differ run to run (timestamps, entry and session ids, cwd)."""
    if isinstance(value, dict):
        return {k: strip_volatile(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [strip_volatile(v) for v in value]
    return value


def normalize_event(event: dict[str, Any]) -> dict[str, Any]:
    """An event without volatile fields; ``message_update`` keeps only its delta.

    pi serializes ``message_update`` after the stream has moved on, so its ``partial``
    snapshots show later text than the delta: they cannot be compared, the deltas can.
    """
    if event.get("type") == "message_update":
        return {"type": "message_update", "assistantMessageEvent": strip_volatile(update_delta(event))}
    if event.get("type") == "session":
        return {"type": "session", "version": event.get("version")}
    return strip_volatile(event)
