"""A client for ``pi --mode rpc``: a real subprocess, its stdout read record by record.

``RpcProcess(agent_dir, cwd, args)`` starts ``pi --mode rpc ...`` in ``cwd`` with
``PI_CODING_AGENT_DIR=agent_dir`` and an environment without credentials (see
:func:`hermetic_environment`); ``send``/``send_raw`` write records, ``request`` waits for the
response with the same ``id``, ``prompt`` sends a prompt and waits for the end of the run,
``wait_for`` waits for any record matching a predicate, and ``close`` ends input and returns
the exit code. Every record the process wrote is kept in ``records`` (stdout) in order.
``with RpcProcess(...) as pi:`` kills the process at the end of the block if it still runs.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["RpcProcess", "agent_environment", "credential_variable", "hermetic_environment", "pi_command"]

# Where a variable's name says it configures a cloud account or a piko/pi run.
_CREDENTIAL_PREFIXES = ("PI_", "PIKO_", "AWS_", "AZURE_", "GOOGLE_", "GCLOUD_", "CLOUDFLARE_")
_CREDENTIAL_SUFFIXES = ("_API_KEY", "_KEY", "_TOKEN", "_SECRET")


def credential_variable(name: str) -> bool:
    """Whether an environment variable may hold a credential or change where piko reads its files.

    Keys and tokens by their names (``*_API_KEY``, ``*_TOKEN``, ``*_KEY``, ``*_SECRET``), cloud
    accounts (``AWS_*``, ``AZURE_*``, ``GOOGLE_*``, ``GCLOUD_*``, ``CLOUDFLARE_*``) and pi's and
    piko's own settings (``PI_*``, ``PIKO_*``).
    """
    upper = name.upper()
    return upper.startswith(_CREDENTIAL_PREFIXES) or upper.endswith(_CREDENTIAL_SUFFIXES) or "TOKEN" in upper


def hermetic_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``environ`` (this process's environment by default) without credentials or piko/pi settings."""
    source = os.environ if environ is None else environ
    return {k: v for k, v in source.items() if not credential_variable(k)}


def agent_environment(agent_dir: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a ``pi`` run on ``agent_dir``: :func:`hermetic_environment` with
    ``PI_CODING_AGENT_DIR`` set to ``agent_dir``, ``PIKO_CACHE_DIR`` to ``agent_dir/cache`` and
    ``HOME`` to its grandparent (``HOME/.pi/agent``), then ``extra``."""
    env = hermetic_environment()
    env.update(
        PI_CODING_AGENT_DIR=str(agent_dir),
        PIKO_CACHE_DIR=str(Path(agent_dir) / "cache"),
        HOME=str(Path(agent_dir).parent.parent),
    )
    env.update(extra or {})
    return env


def pi_command() -> list[str]:
    """How to run ``pi`` of this interpreter: its ``pi`` script, else ``python -m piko``."""
    script = Path(sys.executable).with_name("pi")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "piko"]


class RpcProcess:
    """``pi --mode rpc`` as a child process (see the module docstring).

    ``args`` are pi's arguments (``["--mode", "rpc", ...]``). The environment is
    :func:`agent_environment` of ``home`` with ``env``.
    """

    def __init__(self, home: Path, work: Path, args: list[str], env: Mapping[str, str] | None = None) -> None:
        full_env = agent_environment(home, env)
        self.home, self.work = Path(home), Path(work)
        self.proc = subprocess.Popen(
            [*pi_command(), *args], cwd=work, env=full_env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.records: list[dict[str, Any]] = []
        self.raw_lines: list[bytes] = []
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._seen = 0
        self._prompts = 0
        self._stderr: list[bytes] = []
        self._eof = threading.Event()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=lambda: self._stderr.extend(self.proc.stderr or []), daemon=True).start()

    def _read_stdout(self) -> None:
        stdout: Any = self.proc.stdout  # a BufferedReader: read1 returns what has arrived
        buffer = b""
        while True:
            chunk = stdout.read1(65536)
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
        """What the process wrote to stderr so far."""
        return b"".join(self._stderr).decode("utf-8", "replace")

    # -- sending ---------------------------------------------------------------------------------

    def send_raw(self, data: str | bytes) -> None:
        """Write bytes (or text, UTF-8) to the process's stdin as they are."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
        self.proc.stdin.flush()

    def send(self, command: dict[str, Any]) -> None:
        """Write one command as a JSON line."""
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
        """The records of one ``type`` written so far (``"message_end"``, ``"response"``...)."""
        return [r for r in self.records if r.get("type") == kind]

    def prompt(self, message: str, timeout: float = 60) -> list[dict[str, Any]]:
        """Send ``message`` as a ``prompt`` and wait until its run ends (``agent_end``).

        Returns the records written from the prompt's response to ``agent_end``; raises
        ``RuntimeError`` when the prompt is refused (the response's ``error``).
        """
        self._prompts += 1
        request_id = f"piko-testing-prompt-{self._prompts}"
        start = len(self.records)
        response = self.request({"id": request_id, "type": "prompt", "message": message}, timeout=timeout)
        if not response.get("success"):
            raise RuntimeError(f"prompt refused: {response.get('error')}")
        self._seen = max(self._seen, start)
        self.wait_for(lambda record: record.get("type") == "agent_end", timeout=timeout)
        return self.records[start : self._seen]

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
        """Kill the process if it still runs."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def __enter__(self) -> RpcProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.kill()
