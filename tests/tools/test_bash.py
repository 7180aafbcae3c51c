"""The bash tool: output, errors, streaming updates, truncation, timeout/abort kills, settings."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from tool_harness import aborted_signal

from piko.app.application import App
from piko.data.messages import ToolResult
from piko.extensions.context import ExtensionContext
from piko.lib.abort import AbortController
from piko.plugins.tools import bash
from piko.plugins.tools.bash import BashToolError
from piko.plugins.tools.shell import OutputAccumulator
from piko.plugins.tools.truncate import truncate_tail


def make_ctx(cwd: Path, settings: dict[str, Any] | None = None) -> ExtensionContext:
    agent = cwd / ".agent-home"
    agent.mkdir(exist_ok=True)
    if settings is not None:
        (agent / "settings.json").write_text(json.dumps(settings))
    return ExtensionContext(app=App(cwd=cwd, agent_dir=agent))


def run(
    cwd: Path,
    params: dict[str, Any],
    *,
    signal: Any = None,
    updates: list[ToolResult] | None = None,
    settings: dict[str, Any] | None = None,
) -> ToolResult:
    on_update = updates.append if updates is not None else None
    return asyncio.run(bash.execute("call-1", params, signal, on_update, make_ctx(cwd, settings)))


def run_error(cwd: Path, params: dict[str, Any], **kwargs: Any) -> str:
    with pytest.raises(BashToolError) as info:
        run(cwd, params, **kwargs)
    return str(info.value)


def text(result: ToolResult) -> str:
    return "".join(block.text for block in result.content)  # type: ignore[union-attr]


def process_gone(pid: int, wait: float = 3.0) -> bool:
    """True once ``pid`` no longer runs (gone, or a zombie waiting for init to reap it)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except (FileNotFoundError, ProcessLookupError):
            return True
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return True
        time.sleep(0.02)
    return False


# -- results -------------------------------------------------------------------------------------


def test_output_keeps_trailing_newline_and_has_no_details(tmp_path: Path) -> None:
    result = run(tmp_path, {"command": "echo hello"})
    assert text(result) == "hello\n"
    assert result.details is None and result.is_error is False


def test_stdout_and_stderr_interleave_in_order(tmp_path: Path) -> None:
    result = run(tmp_path, {"command": "echo one; echo two >&2; echo three"})
    assert text(result) == "one\ntwo\nthree\n"


def test_runs_in_the_context_cwd(tmp_path: Path) -> None:
    assert text(run(tmp_path, {"command": "pwd"})).strip() == str(tmp_path)


def test_no_output(tmp_path: Path) -> None:
    assert text(run(tmp_path, {"command": "true"})) == "(no output)"


def test_nonzero_exit_is_an_error_with_output_then_code(tmp_path: Path) -> None:
    assert run_error(tmp_path, {"command": "exit 3"}) == "(no output)\n\nCommand exited with code 3"
    assert run_error(tmp_path, {"command": "echo oops; exit 7"}) == "oops\n\n\nCommand exited with code 7"


def test_shell_killed_by_a_signal_is_not_an_error(tmp_path: Path) -> None:
    # pi treats a null exit code (death by signal) as success
    assert text(run(tmp_path, {"command": "kill -9 $$"})) == "(no output)"


def test_inherits_environment_and_puts_agent_bin_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIKO_BASH_TEST_VAR", "inherited value")
    out = text(run(tmp_path, {"command": 'echo "$PIKO_BASH_TEST_VAR"; echo "$PATH"'}))
    value, path = out.splitlines()
    assert value == "inherited value"
    assert path.split(os.pathsep)[0] == str(tmp_path / ".agent-home" / "bin")


def test_invalid_utf8_and_binary_output_do_not_crash(tmp_path: Path) -> None:
    out = text(run(tmp_path, {"command": r"printf 'ok \xff\xfe\x00 end\n'"}))
    assert out.startswith("ok ") and out.endswith(" end\n")
    assert "\ufffd" in out


def test_utf8_split_across_reads_is_decoded_whole(tmp_path: Path) -> None:
    # the two bytes of "é" arrive in separate writes
    out = text(run(tmp_path, {"command": r"printf '\xc3'; sleep 0.05; printf '\xa9\n'"}))
    assert out == "é\n"


def test_missing_working_directory(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    gone = tmp_path / "gone"
    ctx._app.cwd = gone  # the session's cwd was deleted
    with pytest.raises(FileNotFoundError) as info:
        asyncio.run(bash.execute("c", {"command": "true"}, None, None, ctx))
    assert str(info.value) == f"Working directory does not exist: {gone}\nCannot execute bash commands."


# -- settings ------------------------------------------------------------------------------------


def test_shell_path_setting(tmp_path: Path) -> None:
    out = text(run(tmp_path, {"command": "echo $0"}, settings={"shellPath": "/bin/sh"}))
    assert out == "/bin/sh\n"


def test_missing_custom_shell(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"^Custom shell path not found: /no/such/shell$"):
        run(tmp_path, {"command": "true"}, settings={"shellPath": "/no/such/shell"})


def test_shell_command_prefix_runs_before_the_command(tmp_path: Path) -> None:
    settings = {"shellCommandPrefix": "shopt -s expand_aliases\nalias hi='echo from-alias'"}
    assert text(run(tmp_path, {"command": "hi"}, settings=settings)) == "from-alias\n"


# -- streaming -----------------------------------------------------------------------------------


def test_updates_start_empty_then_carry_the_output(tmp_path: Path) -> None:
    updates: list[ToolResult] = []
    result = run(tmp_path, {"command": "echo hello"}, updates=updates)
    # as in pi's c-tools-json transcript: exactly these two partial results
    assert len(updates) == 2
    assert updates[0].content == [] and updates[0].details is None
    assert text(updates[-1]) == "hello\n"
    assert updates[-1].details == {}  # pi sends {truncation: undefined, fullOutputPath: undefined}
    assert text(result) == "hello\n"


def test_updates_stream_while_the_command_runs_and_are_throttled(tmp_path: Path) -> None:
    updates: list[ToolResult] = []
    command = "for i in 1 2 3 4 5 6 7 8; do echo line$i; sleep 0.08; done"
    run(tmp_path, {"command": command}, updates=updates)
    texts = [text(update) for update in updates[1:]]
    # several partial results, each a growing prefix of the output
    assert len(texts) >= 3
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(texts))
    assert texts[-1] == "".join(f"line{i}\n" for i in range(1, 9))
    # 8 lines over ~640 ms: never more than one update per line
    assert len(texts) <= 8


def test_updates_are_at_most_one_per_100ms(tmp_path: Path) -> None:
    updates: list[ToolResult] = []
    started = time.monotonic()
    run(tmp_path, {"command": "for i in $(seq 1 100); do echo $i; sleep 0.01; done"}, updates=updates)
    elapsed = time.monotonic() - started
    # 100 writes; the partial results are throttled to one per 100 ms (+ the first and the last)
    assert 3 <= len(updates) <= elapsed / 0.1 + 3
    assert text(updates[-1]).endswith("\n99\n100\n")


def test_no_output_no_content_update(tmp_path: Path) -> None:
    updates: list[ToolResult] = []
    run_error(tmp_path, {"command": "exit 3"}, updates=updates)
    assert len(updates) == 1 and updates[0].content == []


def test_a_failing_update_listener_does_not_stop_the_command(tmp_path: Path) -> None:
    def broken(_: ToolResult) -> None:
        raise RuntimeError("listener bug")

    ctx = make_ctx(tmp_path)
    result = asyncio.run(bash.execute("c", {"command": "echo fine"}, None, broken, ctx))
    assert text(result) == "fine\n"


# -- truncation ----------------------------------------------------------------------------------


@contextmanager
def spilled(result: ToolResult) -> Iterator[tuple[str, dict[str, Any], str]]:
    """A result whose full output went to a temp file: its text, its details and that file
    (removed afterwards)."""
    details = result.details
    assert details is not None
    path = details["fullOutputPath"]
    try:
        yield text(result), details, path
    finally:
        os.unlink(path)


def test_line_truncation_keeps_tail_and_spills_full_output(tmp_path: Path) -> None:
    updates: list[ToolResult] = []
    result = run(tmp_path, {"command": "seq 1 100000"}, updates=updates)
    with spilled(result) as (out, details, path):
        assert re.fullmatch(r".*/pi-bash-[0-9a-f]{16}\.log", path)
        assert out.endswith(
            f"\n99999\n100000\n\n\n[Showing lines 98002-100001 of 100001. Full output: {path}]"
        )
        assert out.startswith("98002\n")
        truncation = details["truncation"]
        assert truncation["truncated"] is True and truncation["truncatedBy"] == "lines"
        assert truncation["totalLines"] == 100001 and truncation["outputLines"] == 2000
        assert truncation["totalBytes"] == len("".join(f"{i}\n" for i in range(1, 100001)))
        assert list(truncation) == [
            "content", "truncated", "truncatedBy", "totalLines", "totalBytes", "outputLines", "outputBytes",
            "lastLinePartial", "firstLineExceedsLimit", "maxLines", "maxBytes",
        ]  # fmt: skip
        assert Path(path).read_text() == "".join(f"{i}\n" for i in range(1, 100001))
        # partial results named the same file once output was past the limit
        assert updates[-1].details is not None and updates[-1].details["fullOutputPath"] == path


def test_byte_truncation_notice(tmp_path: Path) -> None:
    result = run(tmp_path, {"command": "for i in $(seq 1 1000); do printf '%0100d\\n' $i; done"})
    with spilled(result) as (out, details, path):
        truncation = details["truncation"]
        assert truncation["truncatedBy"] == "bytes"
        shown = truncation["outputLines"]
        assert out.endswith(
            f"[Showing lines {1001 - shown + 1}-1001 of 1001 (50.0KB limit). Full output: {path}]"
        )
        assert len(Path(path).read_bytes()) == 101 * 1000


def test_single_huge_line_shows_its_end(tmp_path: Path) -> None:
    result = run(tmp_path, {"command": "head -c 200000 /dev/zero | tr '\\0' 'a'; echo -n END"})
    with spilled(result) as (out, details, path):
        assert details["truncation"]["lastLinePartial"] is True
        assert out.endswith(
            f"aaaEND\n\n[Showing last 50.0KB of line 1 (line is 195.3KB). Full output: {path}]"
        )


def test_small_output_makes_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    run(tmp_path / ".", {"command": "seq 1 100"})
    assert not list(tmp_path.glob("pi-bash-*.log"))


# -- timeout and abort ---------------------------------------------------------------------------


def test_timeout_kills_the_process_group(tmp_path: Path) -> None:
    message = run_error(tmp_path, {"command": "sleep 100 & echo $!; sleep 100", "timeout": 0.5})
    pid_line, status = message.split("\n\n\n")
    assert status == "Command timed out after 0.5 seconds"
    assert process_gone(int(pid_line)), "the backgrounded grandchild survived the timeout"


@pytest.mark.parametrize(
    "command",
    [
        "set -m; sleep 100 & echo $!; wait",  # a job in a process group of its own
        "setsid sleep 100 & echo $!; wait",  # a child in a session of its own
        "( set -m; sleep 100 & echo $! ); sleep 100",  # its own group, and its parent gone
    ],
)
def test_timeout_kills_children_that_left_the_process_group(tmp_path: Path, command: str) -> None:
    message = run_error(tmp_path, {"command": command, "timeout": 0.5})
    pid_line, status = message.split("\n\n\n")
    assert status == "Command timed out after 0.5 seconds"
    assert process_gone(int(pid_line)), "a child outside the shell's process group survived the timeout"


def test_timeout_text_prints_whole_seconds_like_javascript(tmp_path: Path) -> None:
    assert run_error(tmp_path, {"command": "sleep 10", "timeout": 1.0}) == "Command timed out after 1 seconds"


def test_zero_timeout_means_none(tmp_path: Path) -> None:
    assert text(run(tmp_path, {"command": "echo ok", "timeout": 0})) == "ok\n"


def test_abort_kills_the_process_group(tmp_path: Path) -> None:
    controller = AbortController()
    updates: list[ToolResult] = []

    def on_update(update: ToolResult) -> None:
        updates.append(update)
        if update.content:
            controller.abort()

    async def main() -> str:
        with pytest.raises(BashToolError) as info:
            await bash.execute(
                "c",
                {"command": "sleep 100 & echo $!; sleep 100"},
                controller.signal,
                on_update,
                make_ctx(tmp_path),
            )
        return str(info.value)

    message = asyncio.run(main())
    pid_line, status = message.split("\n\n\n")
    assert status == "Command aborted"
    assert process_gone(int(pid_line)), "the backgrounded grandchild survived the abort"


def test_already_aborted_signal(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    assert run_error(tmp_path, {"command": f"touch {marker}"}, signal=aborted_signal()) == "Command aborted"
    assert not marker.exists()


def test_cancelling_the_task_kills_the_command(tmp_path: Path) -> None:
    async def main() -> int:
        updates: list[ToolResult] = []
        task = asyncio.ensure_future(
            bash.execute("c", {"command": "echo $$; sleep 100"}, None, updates.append, make_ctx(tmp_path))
        )
        while not any(update.content for update in updates):
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return int(text(updates[-1]))

    assert process_gone(asyncio.run(main()))


def test_background_child_does_not_hold_the_result(tmp_path: Path) -> None:
    # like pi: once the shell exits, output still held open by a background child is waited
    # for only briefly, and the child keeps running: alive once the result is back, it was
    # not waited for
    result = run(tmp_path, {"command": "sleep 30 & echo $!"})
    pid = int(text(result))
    try:
        assert not process_gone(pid, wait=0.1)
    finally:
        os.kill(pid, 9)


# -- the user's !cmd (shell.execute_bash) --------------------------------------------------------


def test_user_bash_collects_sanitized_output_and_exit_code(tmp_path: Path) -> None:
    from piko.plugins.tools.shell import execute_bash

    chunks: list[str] = []
    command = r"printf '\033[31mred\033[0m\r\nbell\007 ok\n'; exit 4"
    result = asyncio.run(execute_bash(command, str(tmp_path), on_chunk=chunks.append))
    assert result.output == "red\nbell ok\n"
    assert "".join(chunks) == "red\nbell ok\n"
    assert result.exit_code == 4
    assert result.cancelled is False and result.truncated is False and result.full_output_path is None


def test_user_bash_prefix_and_shell_path(tmp_path: Path) -> None:
    from piko.plugins.tools.shell import execute_bash

    result = asyncio.run(
        execute_bash('echo "$0 $GREETING"', str(tmp_path), shell_path="/bin/sh", command_prefix="GREETING=hi")
    )
    assert result.output == "/bin/sh hi\n" and result.exit_code == 0


def test_user_bash_truncates_and_writes_sanitized_full_output(tmp_path: Path) -> None:
    from piko.plugins.tools.shell import execute_bash

    result = asyncio.run(execute_bash(r"seq 1 30000 | sed 's/$/\r/'", str(tmp_path)))
    assert result.truncated is True
    assert result.output.endswith("29999\n30000\n") and result.output.startswith("28002\n")
    assert result.full_output_path is not None
    assert Path(result.full_output_path).read_text() == "".join(f"{i}\n" for i in range(1, 30001))
    os.unlink(result.full_output_path)


def test_user_bash_abort_is_cancelled_without_exit_code(tmp_path: Path) -> None:
    from piko.plugins.tools.shell import execute_bash

    controller = AbortController()

    def on_chunk(chunk: str) -> None:
        controller.abort()

    result = asyncio.run(
        execute_bash("echo started; sleep 100", str(tmp_path), signal=controller.signal, on_chunk=on_chunk)
    )
    assert result.cancelled is True and result.exit_code is None
    assert result.output == "started\n"


def test_user_bash_missing_cwd_raises(tmp_path: Path) -> None:
    from piko.plugins.tools.shell import execute_bash

    with pytest.raises(FileNotFoundError, match="Working directory does not exist"):
        asyncio.run(execute_bash("true", str(tmp_path / "nope")))


# -- output accumulation -------------------------------------------------------------------------


def test_strip_ansi_and_sanitize() -> None:
    from piko.plugins.tools.shell import sanitize_output
    from piko.plugins.tools.shell import strip_ansi

    assert (
        strip_ansi("\x1b[1;32mgreen\x1b[0m \x1b]0;title\x07x \x1b]8;;http://a\x1b\\link\x1b]8;;\x1b\\")
        == "green x link"
    )
    assert sanitize_output("a\x00b\x1b\td\r\ne\ufffaf") == "ab\td\nef"
    assert strip_ansi("\x1bc reset") == " reset"


_PIECES = st.sampled_from(["a", "b" * 7, "\n", "é", "日本", "🎉", "x" * 3000, "\n" * 5, "y" * 40000])


def _feed(text: bytes, cuts: list[int], **limits: int) -> OutputAccumulator:
    accumulator = OutputAccumulator(**limits)
    start = 0
    for cut in sorted(set(cut % (len(text) + 1) for cut in cuts)):
        accumulator.append(text[start:cut])
        start = cut
    accumulator.append(text[start:])
    accumulator.finish()
    return accumulator


@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(_PIECES, max_size=60), cuts=st.lists(st.integers(min_value=0), max_size=30))
def test_snapshot_equals_truncating_everything(pieces: list[str], cuts: list[int]) -> None:
    full = "".join(pieces)
    accumulator = _feed(full.encode(), cuts, max_lines=50, max_bytes=2000)
    snapshot = accumulator.snapshot()
    expected = truncate_tail(full, 50, 2000)
    assert snapshot.content == expected.content
    assert snapshot.truncation.total_lines == full.count("\n") + 1
    assert snapshot.truncation.total_bytes == len(full.encode())
    assert snapshot.truncation.truncated == expected.truncated
    if snapshot.full_output_path is not None:
        os.unlink(snapshot.full_output_path)
    accumulator.close_temp_file()


def test_temp_file_gets_all_raw_bytes_once_over_the_limit() -> None:
    data = b"".join(b"%d\xff\n" % i for i in range(5000))
    accumulator = _feed(data, list(range(0, len(data), 777)), max_lines=100, max_bytes=1000)
    snapshot = accumulator.snapshot(persist_if_truncated=True)
    accumulator.close_temp_file()
    assert snapshot.full_output_path is not None
    with open(snapshot.full_output_path, "rb") as handle:
        assert handle.read() == data
    os.unlink(snapshot.full_output_path)
    assert snapshot.truncation.truncated is True
    assert snapshot.content.endswith("4999\ufffd\n")


# -- pi's own bash tool (tests/fixtures/pi_exec_oracle) -------------------------------------------

ORACLE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "pi_exec_oracle"


def _oracle_cases() -> list[Any]:
    spec = json.loads((ORACLE_DIR / "cases.json").read_text())
    results = json.loads((ORACLE_DIR / "oracle.json").read_text())["results"]
    return [
        pytest.param(case["params"], results[f"bash/{case['name']}"], id=f"bash/{case['name']}")
        for case in spec["cases"]
        if case["tool"] == "bash"
    ]


def _compact(text: str) -> Any:
    """The oracle's form of a long text: SHA-256, length in code points, both ends."""
    import hashlib

    if len(text) <= 4000:
        return text
    return {
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
        "length": len(text),
        "head": text[:200],
        "tail": text[-200:],
    }


@pytest.mark.parametrize(("params", "expected"), _oracle_cases())
def test_same_as_pi_bash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, params: dict[str, Any], expected: Any
) -> None:
    import tempfile

    spill = tmp_path / "tmp"
    spill.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill))
    work = tmp_path / "work"
    work.mkdir()
    details = None
    try:
        result = run(work, params)
        details = result.details
        observed: dict[str, Any] = {"ok": True, "text": text(result), "details": details}
    except BashToolError as exc:
        observed = {"ok": False, "error": str(exc)}
    spilled = list(spill.glob("pi-bash-*.log"))
    temp_name = re.compile(re.escape(str(spill)) + r"/pi-bash-[0-9a-f]{16}\.log")
    anonymous = json.loads(temp_name.sub("<TMP>/pi-bash-<ID>.log", json.dumps(observed)))
    for key in ("text", "error"):
        if key in anonymous:
            anonymous[key] = _compact(anonymous[key])
    if anonymous.get("details"):
        truncation = anonymous["details"]["truncation"]
        truncation["content"] = _compact(truncation["content"])
    assert anonymous == expected
    # a temp file is named exactly when the output was truncated, and it holds all of it
    assert len(spilled) == (1 if "<TMP>/pi-bash-<ID>.log" in json.dumps(expected) else 0)
    if spilled and details:
        assert spilled[0].stat().st_size == details["truncation"]["totalBytes"]
