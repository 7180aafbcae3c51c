"""What the hangs battery shares: real ``pi`` processes against a scripted server, and process scans."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "rpc"))

from rpc_client import PI  # noqa: E402
from rpc_client import RpcProcess  # noqa: E402
from rpc_client import hermetic_environment  # noqa: E402
from support.llm_server import LLMServer  # noqa: E402
from support.pi_dirs import make_pi_dirs  # noqa: E402

CHAOS_EXTENSION = str(TESTS / "support" / "chaos_extension.py")
TOOLS = "read,bash,edit,write,grep,find,ls"
MODEL_ARGS = ["--provider", "mock", "--model", "mock-1", "--tools", TOOLS]
ANSWER_BOUND = 30.0  # seconds a prompt, a tool result or an RPC answer may take before it counts as hung


@contextmanager
def rpc_session(
    root: Path,
    turns: list[dict[str, Any]],
    *,
    env: dict[str, str] | None = None,
    settings: dict[str, Any] | None = None,
    extra_args: tuple[str, ...] = (),
) -> Iterator[RpcProcess]:
    """``pi --mode rpc`` saving its session under ``root/sessions``; killed if still running at the end."""
    with LLMServer(turns) as server:
        home, work = make_pi_dirs(root, server, settings)
        args = ["--mode", "rpc", "--session-dir", str(root / "sessions"), *MODEL_ARGS, *extra_args]
        process = RpcProcess(home, work, args, env)
        process.server = server  # type: ignore[attr-defined]
        try:
            yield process
        finally:
            process.kill()


def run_print(
    root: Path,
    turns: list[dict[str, Any]],
    prompt: str,
    *,
    env: dict[str, str] | None = None,
    settings: dict[str, Any] | None = None,
    extra_args: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str] | None:
    """``pi -p prompt``; ``None`` when it did not end within :data:`ANSWER_BOUND` (it is killed)."""
    with LLMServer(turns) as server:
        home, work = make_pi_dirs(root, server, settings)
        full_env = hermetic_environment()
        full_env.update(
            PI_CODING_AGENT_DIR=str(home), PIKO_CACHE_DIR=str(home / "cache"), HOME=str(home.parent.parent)
        )
        full_env.update(env or {})
        args = [PI, "--session-dir", str(root / "sessions"), *MODEL_ARGS, *extra_args, "-p", prompt]
        process = subprocess.Popen(
            args, cwd=work, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            stdout, stderr = process.communicate(timeout=ANSWER_BOUND)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            return None
        return subprocess.CompletedProcess(args, process.returncode, stdout, stderr)


def session_messages(root: Path) -> list[dict[str, Any]]:
    """The ``message`` entries of every session file under ``root/sessions``, in file order (the
    conversation: pi 1.6's tool records, ``system`` messages, left aside)."""
    messages: list[dict[str, Any]] = []
    for path in sorted((root / "sessions").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry.get("type") == "message" and entry["message"].get("role") != "system":
                messages.append(entry["message"])
    return messages


def answers(process: RpcProcess, request_id: str) -> bool:
    """Whether ``get_state`` is answered within the bound (the process keeps serving)."""
    try:
        response = process.request({"id": request_id, "type": "get_state"}, timeout=ANSWER_BOUND)
    except (TimeoutError, EOFError):
        return False
    return bool(response.get("success"))


def pids_with(marker: str) -> list[int]:
    """Processes whose command line holds ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                command = handle.read()
            with open(f"/proc/{name}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in command and state != b"Z":
            found.append(int(name))
    return found


def survivors(marker: str, grace: float = 3.0) -> list[int]:
    """Processes holding ``marker`` still alive after ``grace`` seconds (killed, then returned)."""
    deadline = time.monotonic() + grace
    left = pids_with(marker)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = pids_with(marker)
    for pid in left:  # clean up what the test found, by pid
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return left
