"""Running shell commands: process groups, timeout and abort kills, bounded output accumulation.

Used by the bash tool and by the user's ``!cmd`` (:func:`execute_bash`, pi's bash executor).
Nothing here keeps tool state: every call gets its own process and accumulator.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import re
import secrets
import subprocess
import tempfile
from collections.abc import Callable
from typing import IO
from typing import Any

from attrs import define

from piko.lib.exec import kill_process_group
from piko.lib.records import replace
from piko.plugins.tools.truncate import DEFAULT_MAX_BYTES
from piko.plugins.tools.truncate import DEFAULT_MAX_LINES
from piko.plugins.tools.truncate import TruncationResult
from piko.plugins.tools.truncate import truncate_tail

__all__ = [
    "BashExecutionResult",
    "OutputAccumulator",
    "OutputSnapshot",
    "ShellAbortedError",
    "ShellTimeoutError",
    "execute_bash",
    "run_shell",
    "sanitize_output",
    "shell_config",
    "shell_env",
    "strip_ansi",
    "temp_output_path",
]

# After the shell exits, how long to wait for its output pipe to close: a backgrounded child
# (``server &``) may hold it open forever.
EXIT_STDIO_GRACE_SECONDS = 0.1


class ShellAbortedError(Exception):
    """The command was stopped through its abort signal."""

    def __init__(self) -> None:
        super().__init__("aborted")


class ShellTimeoutError(Exception):
    """The command ran past its timeout and was killed."""

    def __init__(self, timeout: float) -> None:
        super().__init__(f"timeout:{format_number(timeout)}")
        self.timeout = timeout


def format_number(value: float) -> str:
    """A number as JavaScript prints it (``5``, ``0.5``), for messages that quote a parameter."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# ---------------------------------------------------------------------------
# Shell and environment
# ---------------------------------------------------------------------------


def shell_config(shell_path: str | None = None) -> tuple[str, list[str]]:
    """The shell and its arguments before the command: settings ``shellPath``, else bash, else sh."""
    if shell_path:
        if os.path.exists(shell_path):
            return shell_path, ["-c"]
        raise FileNotFoundError(f"Custom shell path not found: {shell_path}")
    if os.path.exists("/bin/bash"):
        return "/bin/bash", ["-c"]
    import shutil

    found = shutil.which("bash")
    if found:
        return found, ["-c"]
    return "sh", ["-c"]


def shell_env(bin_dir: str | None = None) -> dict[str, str]:
    """The inherited environment, with pi's ``<agent dir>/bin`` put first on ``PATH``."""
    env = dict(os.environ)
    if bin_dir is None:
        from piko.config.paths import agent_dir

        bin_dir = str(agent_dir() / "bin")
    key = next((k for k in env if k.lower() == "path"), "PATH")
    current = env.get(key, "")
    entries = [entry for entry in current.split(os.pathsep) if entry]
    if bin_dir not in entries:
        env[key] = os.pathsep.join(part for part in (bin_dir, current) if part)
    return env


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------


class _ShellProtocol(asyncio.SubprocessProtocol):
    def __init__(self, on_data: Callable[[bytes], None], loop: asyncio.AbstractEventLoop) -> None:
        self._on_data = on_data
        self.exited: asyncio.Future[None] = loop.create_future()
        self.output_closed: asyncio.Future[None] = loop.create_future()
        self.callback_error: BaseException | None = None

    def pipe_data_received(self, fd: int, data: bytes | bytearray) -> None:
        try:
            self._on_data(bytes(data))
        except Exception as exc:  # keep reading; report once the process is done
            if self.callback_error is None:
                self.callback_error = exc

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if not self.output_closed.done():
            self.output_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


async def run_shell(
    command: str,
    cwd: str,
    *,
    on_data: Callable[[bytes], None],
    signal: Any = None,
    timeout: float | None = None,
    shell_path: str | None = None,
    env: dict[str, str] | None = None,
) -> int | None:
    """Run ``command`` with the shell in its own process group; stream its output to ``on_data``.

    stdout and stderr share one pipe, so their lines interleave as in a terminal. Returns the
    exit code (``None`` when a signal ended the shell). A timeout (seconds, when > 0) or an
    aborted ``signal`` kills the whole process group and raises :class:`ShellTimeoutError` or
    :class:`ShellAbortedError`. A missing ``cwd`` raises ``FileNotFoundError`` with pi's text.
    """
    shell, args = shell_config(shell_path)
    if not os.path.exists(cwd):
        raise FileNotFoundError(f"Working directory does not exist: {cwd}\nCannot execute bash commands.")
    if signal is not None and signal.aborted:
        raise ShellAbortedError()
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.subprocess_exec(
        lambda: _ShellProtocol(on_data, loop),
        shell,
        *args,
        command,
        cwd=cwd,
        env=env if env is not None else shell_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    pid = transport.get_pid()
    timed_out = False
    finished = False

    def kill() -> None:
        if not finished:
            kill_process_group(pid)

    def on_timeout() -> None:
        nonlocal timed_out
        timed_out = True
        kill()

    remove_listener = signal.add_listener(kill) if signal is not None else None
    timer = loop.call_later(timeout, on_timeout) if timeout is not None and timeout > 0 else None
    try:
        await protocol.exited
        if not protocol.output_closed.done():
            await asyncio.wait({protocol.output_closed}, timeout=EXIT_STDIO_GRACE_SECONDS)
    except BaseException:
        kill()
        raise
    finally:
        finished = True
        if timer is not None:
            timer.cancel()
        if remove_listener is not None:
            remove_listener()
        transport.close()
    if signal is not None and signal.aborted:
        raise ShellAbortedError()
    if timed_out:
        raise ShellTimeoutError(timeout or 0)
    if protocol.callback_error is not None:
        raise protocol.callback_error
    code = transport.get_returncode()
    return None if code is None or code < 0 else code


# ---------------------------------------------------------------------------
# Output accumulation (the bash tool)
# ---------------------------------------------------------------------------


def temp_output_path(prefix: str) -> str:
    """``<tmp>/<prefix>-<16 hex>.log``, where the full output of a truncated command goes."""
    return os.path.join(tempfile.gettempdir(), f"{prefix}-{secrets.token_hex(8)}.log")


@define(kw_only=True)
class OutputSnapshot:
    """The displayable tail so far, its truncation record and the full-output file, if any."""

    content: str
    truncation: TruncationResult
    full_output_path: str | None


class OutputAccumulator:
    """Streaming output with bounded memory.

    Raw bytes are decoded incrementally (invalid UTF-8 becomes U+FFFD); only a rolling tail of
    the decoded text is kept for display. Once the output passes the line or byte limit, the
    raw bytes go to a temp file (all of them, from the start).
    """

    def __init__(
        self,
        *,
        max_lines: int = DEFAULT_MAX_LINES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        temp_file_prefix: str = "pi-output",
    ) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.max_rolling_bytes = max(max_bytes * 2, 1)
        self.temp_file_prefix = temp_file_prefix
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._raw_chunks: list[bytes] = []
        self._tail: list[str] = []
        self._tail_bytes = 0
        self._tail_starts_at_line_boundary = True
        self.total_raw_bytes = 0
        self.total_decoded_bytes = 0
        self.total_lines = 1
        self.last_line_bytes = 0
        self.finished = False
        self.temp_file_path: str | None = None
        self._temp_file: IO[bytes] | None = None

    def append(self, data: bytes) -> None:
        if self.finished:
            raise RuntimeError("Cannot append to a finished output accumulator")
        self.total_raw_bytes += len(data)
        self._append_text(self._decoder.decode(data))
        if self._temp_file is not None or self._needs_temp_file():
            self._ensure_temp_file()
            if self._temp_file is not None:
                self._temp_file.write(data)
        elif data:
            self._raw_chunks.append(data)

    def finish(self) -> None:
        if self.finished:
            return
        self.finished = True
        self._append_text(self._decoder.decode(b"", final=True))
        if self._needs_temp_file():
            self._ensure_temp_file()

    def snapshot(self, *, persist_if_truncated: bool = False) -> OutputSnapshot:
        tail = truncate_tail(self._snapshot_text(), self.max_lines, self.max_bytes)
        truncated = self.total_lines > self.max_lines or self.total_decoded_bytes > self.max_bytes
        truncated_by: str | None = None
        if truncated:
            truncated_by = tail.truncated_by or (
                "bytes" if self.total_decoded_bytes > self.max_bytes else "lines"
            )
        truncation = replace(
            tail,
            truncated=truncated,
            truncated_by=truncated_by,
            total_lines=self.total_lines,
            total_bytes=self.total_decoded_bytes,
            max_lines=self.max_lines,
            max_bytes=self.max_bytes,
        )
        if persist_if_truncated and truncated:
            self._ensure_temp_file()
        return OutputSnapshot(
            content=truncation.content, truncation=truncation, full_output_path=self.temp_file_path
        )

    def read_full_output(self, max_bytes: int) -> tuple[str, bool]:
        """All the output (from the temp file once there is one) and whether it was cut: past
        ``max_bytes`` the first and last halves, the bytes between them named (pi 1.6's form)."""
        if self.temp_file_path is None:
            return b"".join(self._raw_chunks).decode("utf-8", "replace"), False
        if self._temp_file is not None:
            self._temp_file.flush()
        with open(self.temp_file_path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size <= max_bytes:
                return handle.read().decode("utf-8", "replace"), False
            head_bytes = max_bytes // 2
            head = handle.read(head_bytes)
            handle.seek(size - (max_bytes - head_bytes))
            tail = handle.read()
        head_text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(head)
        start = 0
        while start < len(tail) and (tail[start] & 0xC0) == 0x80:
            start += 1
        omitted = size - head_bytes - (max_bytes - head_bytes)
        tail_text = tail[start:].decode("utf-8", "replace")
        return f"{head_text}\n\n[... {omitted} bytes omitted ...]\n\n{tail_text}", True

    def close_temp_file(self) -> None:
        if self._temp_file is not None:
            handle, self._temp_file = self._temp_file, None
            handle.close()

    # -- internals ------------------------------------------------------------------------

    def _append_text(self, text: str) -> None:
        if not text:
            return
        size = len(text.encode("utf-8", "surrogatepass"))
        self.total_decoded_bytes += size
        self._tail.append(text)
        self._tail_bytes += size
        if self._tail_bytes > self.max_rolling_bytes * 2:
            self._trim_tail()
        newlines = text.count("\n")
        if newlines == 0:
            self.last_line_bytes += size
        else:
            self.total_lines += newlines
            self.last_line_bytes = len(text[text.rindex("\n") + 1 :].encode("utf-8", "surrogatepass"))

    def _trim_tail(self) -> None:
        data = "".join(self._tail).encode("utf-8", "surrogatepass")
        if len(data) <= self.max_rolling_bytes:
            self._tail = [data.decode("utf-8", "surrogatepass")]
            self._tail_bytes = len(data)
            return
        start = len(data) - self.max_rolling_bytes
        while start < len(data) and (data[start] & 0xC0) == 0x80:
            start += 1
        if start > 0:
            self._tail_starts_at_line_boundary = data[start - 1] == 0x0A
        kept = data[start:].decode("utf-8", "surrogatepass")
        self._tail = [kept]
        self._tail_bytes = len(data) - start

    def _snapshot_text(self) -> str:
        text = "".join(self._tail)
        if len(self._tail) > 1:
            self._tail = [text]
        if self._tail_starts_at_line_boundary:
            return text
        newline = text.find("\n")
        return text if newline == -1 else text[newline + 1 :]

    def _needs_temp_file(self) -> bool:
        return (
            self.total_raw_bytes > self.max_bytes
            or self.total_decoded_bytes > self.max_bytes
            or self.total_lines > self.max_lines
        )

    def _ensure_temp_file(self) -> None:
        if self.temp_file_path is not None:
            return
        path = temp_output_path(self.temp_file_prefix)
        self.temp_file_path = path
        self._temp_file = open(path, "wb")
        for chunk in self._raw_chunks:
            self._temp_file.write(chunk)
        self._raw_chunks = []


# ---------------------------------------------------------------------------
# The user's ``!cmd`` (pi's bash executor)
# ---------------------------------------------------------------------------

# ANSI escape sequences as the strip-ansi package (ansi-regex 6.x) recognises them.
_ST = "(?:\x1b\\\\|\x9c)"
_STRING_CONTROLS = "\x18\x1a\x1b\x80-\x9f"
_ANSI = re.compile(
    "|".join(
        (
            f"\x1b\\](?:P[0-9A-Fa-f]{{7}}|R)(?:\x07|{_ST})?",
            f"(?:\x1b\\]|\x9d)[^\x07{_STRING_CONTROLS}]*(?:\x07|{_ST})",
            f"(?:\x1b[PX^_k]|[\x90\x98\x9e\x9f])[^{_STRING_CONTROLS}]*{_ST}",
            "(?:\x1b\\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]",
            "\x1b(?:[\x20-\x2f]+[\x30-\x7e]|[0-9A-PR-TZcf-oq-uy=><~|}])",
        )
    )
)

# Characters that break terminal width computations: C0 controls except tab, newline and
# carriage return, and the interlinear annotation characters U+FFF9..U+FFFB.
_BINARY_DROP = {code: None for code in range(0x20) if code not in (0x09, 0x0A, 0x0D)}
_BINARY_DROP.update({0xFFF9: None, 0xFFFA: None, 0xFFFB: None})


def strip_ansi(text: str) -> str:
    """Remove ANSI escape sequences (colours, cursor moves, OSC titles...)."""
    if "\x1b" not in text and "\x9b" not in text:
        return text
    return _ANSI.sub("", text)


def sanitize_output(text: str) -> str:
    """Make command output safe to show and store: no ANSI, no stray controls, no ``\\r``."""
    return strip_ansi(text).translate(_BINARY_DROP).replace("\r", "")


@define(kw_only=True)
class BashExecutionResult:
    """The outcome of a user's ``!cmd``: what the ``bashExecution`` message records."""

    output: str
    exit_code: int | None
    cancelled: bool
    truncated: bool
    full_output_path: str | None = None


async def execute_bash(
    command: str,
    cwd: str,
    *,
    signal: Any = None,
    on_chunk: Callable[[str], Any] | None = None,
    shell_path: str | None = None,
    command_prefix: str | None = None,
    env: dict[str, str] | None = None,
) -> BashExecutionResult:
    """Run a user's shell command (``!cmd``, RPC ``bash``) and collect its sanitized output.

    ``on_chunk`` receives each sanitized piece as it arrives. Output over 50 KB also goes to a
    ``pi-bash-*.log`` temp file; the result keeps the last 2000 lines / 50 KB. An aborted
    ``signal`` gives ``cancelled=True`` and no exit code. Other failures (a missing working
    directory or shell) raise.
    """
    resolved = f"{command_prefix}\n{command}" if command_prefix else command
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    chunks: list[str] = []
    rolling_chars = 0
    max_rolling_chars = DEFAULT_MAX_BYTES * 2
    total_bytes = 0
    temp_path: str | None = None
    temp_file: IO[bytes] | None = None

    def ensure_temp_file() -> None:
        nonlocal temp_path, temp_file
        if temp_path is not None:
            return
        temp_path = temp_output_path("pi-bash")
        temp_file = open(temp_path, "wb")
        for chunk in chunks:
            temp_file.write(chunk.encode("utf-8"))

    def feed(text: str) -> None:
        nonlocal rolling_chars
        if not text:
            return
        if total_bytes > DEFAULT_MAX_BYTES:
            ensure_temp_file()
        if temp_file is not None:
            temp_file.write(text.encode("utf-8"))
        chunks.append(text)
        rolling_chars += len(text)
        while rolling_chars > max_rolling_chars and len(chunks) > 1:
            rolling_chars -= len(chunks.pop(0))
        if on_chunk is not None:
            on_chunk(text)

    def on_data(data: bytes) -> None:
        nonlocal total_bytes
        total_bytes += len(data)
        feed(sanitize_output(decoder.decode(data)))

    def finish(exit_code: int | None, cancelled: bool) -> BashExecutionResult:
        feed(sanitize_output(decoder.decode(b"", final=True)))
        full = "".join(chunks)
        truncation = truncate_tail(full)
        if truncation.truncated:
            ensure_temp_file()
        if temp_file is not None:
            temp_file.close()
        return BashExecutionResult(
            output=truncation.content if truncation.truncated else full,
            exit_code=None if cancelled else exit_code,
            cancelled=cancelled,
            truncated=truncation.truncated,
            full_output_path=temp_path,
        )

    try:
        code = await run_shell(resolved, cwd, on_data=on_data, signal=signal, shell_path=shell_path, env=env)
    except ShellAbortedError:
        return finish(None, True)
    except BaseException:
        if temp_file is not None:
            temp_file.close()
        raise
    return finish(code, bool(signal is not None and signal.aborted))
