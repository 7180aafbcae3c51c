"""A test client for ``pi --mode rpc``: a real subprocess, its stdout read record by record.

``RpcProcess`` starts ``pi --mode rpc ...`` in a work directory with a config directory whose
``models.json`` points the samples' ``mock`` providers at a scripted :class:`LLMServer`;
``send``/``send_raw`` write records, ``request`` waits for the response with the same ``id``,
``wait_for`` waits for any record matching a predicate, and ``close`` ends input and returns
the exit code. Every record the process wrote is kept in ``records`` (stdout) in order.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.clean_env import hermetic_environment

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "pi_rpc_samples"
PI = str(Path(sys.executable).with_name("pi"))
SAMPLE_ARGS = ["--mode", "rpc", "--no-session", "--tools", "read,bash,edit,write,grep,find,ls",
               "--provider", "mock", "--model", "mock-1"]  # fmt: skip


def sample(name: str, file: str) -> Any:
    """A file of a pi RPC transcript (parsed when JSON)."""
    path = SAMPLES / name / file if file else SAMPLES / name
    file = file or name
    text = path.read_text(encoding="utf-8")
    if file.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return json.loads(text) if file.endswith(".json") else text


class RpcProcess:
    """``pi --mode rpc`` as a child process (see the module docstring)."""

    def __init__(self, home: Path, work: Path, args: list[str], env: dict[str, str] | None = None) -> None:
        full_env = hermetic_environment()
        full_env.update(
            PI_CODING_AGENT_DIR=str(home), PIKO_CACHE_DIR=str(home / "cache"), HOME=str(home.parent.parent)
        )
        full_env.update(env or {})
        self.home, self.work = home, work
        self.proc = subprocess.Popen(
            [PI, *args], cwd=work, env=full_env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.records: list[dict[str, Any]] = []
        self.raw_lines: list[bytes] = []
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._seen = 0
        self._stderr: list[bytes] = []
        self._eof = threading.Event()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=lambda: self._stderr.extend(self.proc.stderr or []), daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        buffer = b""
        while True:
            chunk = self.proc.stdout.read1(65536)
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                self.raw_lines.append(line)
                record = json.loads(line)
                self.records.append(record)
                self._queue.put(record)
        if buffer:
            self.raw_lines.append(buffer)
        self._queue.put(None)
        self._eof.set()

    @property
    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    # -- sending ---------------------------------------------------------------------------------

    def send_raw(self, data: str | bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
        self.proc.stdin.flush()

    def send(self, command: dict[str, Any]) -> None:
        self.send_raw(json.dumps(command) + "\n")

    def request(self, command: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
        """Send ``command`` (its ``id`` is required) and return its response.

        Unlike :meth:`wait_for` this does not move the cursor: events that came before the
        response can still be waited for.
        """
        start = len(self.records)
        self.send(command)
        deadline = time.monotonic() + timeout
        while True:
            for record in self.records[start:]:
                if record.get("type") == "response" and record.get("id") == command["id"]:
                    return record
            if self._eof.is_set():
                raise EOFError(f"pi exited (code {self.proc.poll()}); stderr:\n{self.stderr}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"no response to {command} within {timeout} s; stderr:\n{self.stderr}")
            time.sleep(0.002)

    # -- receiving -------------------------------------------------------------------------------

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 30) -> dict[str, Any]:
        """The first record not yet waited past that matches ``predicate``."""
        deadline = time.monotonic() + timeout
        while True:
            while self._seen < len(self.records):
                record = self.records[self._seen]
                self._seen += 1
                if predicate(record):
                    return record
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no matching record within {timeout} s; stderr:\n{self.stderr}")
            try:
                item = self._queue.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            if item is None and self._seen >= len(self.records):
                raise EOFError(f"pi exited (code {self.proc.poll()}); stderr:\n{self.stderr}")

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("type") == kind]

    def close(self, timeout: float = 30) -> int:
        """End input and wait for the process; its exit code."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except OSError:
            pass
        code = self.proc.wait(timeout=timeout)
        self._eof.wait(timeout=10)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
