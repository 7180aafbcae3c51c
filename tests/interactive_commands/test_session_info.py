"""/name, /session, /copy and /export on a real session (files, clipboard tools, the exporter hook)."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest
from icmd_harness import lines_of

from piko import hookimpl
from piko.plugins.modes.interactive.commands import clipboard
from piko.plugins.modes.interactive.commands.clipboard import MAX_OSC52_ENCODED_LENGTH
from piko.plugins.modes.interactive.commands.clipboard import ClipboardError
from piko.plugins.modes.interactive.commands.clipboard import copy_to_clipboard
from piko.plugins.modes.interactive.commands.clipboard import osc52_sequence
from piko.plugins.modes.interactive.commands.common import path_argument


def test_name_sets_shows_and_asks(world, run) -> None:
    async def scenario() -> Any:
        session, ctx = await world.session_with_context([{"blocks": [{"text": "hi"}]}])
        await ctx.run("/name")
        await session.prompt("hello")
        await ctx.run("/name  My refactor ")
        await ctx.run("/name")
        return session, ctx

    session, ctx = run(scenario())
    assert ctx.ui.notices == [("warning", "Usage: /name <name>")]
    assert ctx.texts("show") == ["Session name set: My refactor", "Session name: My refactor"]
    info = [e for e in lines_of(session.session_file) if e["type"] == "session_info"]
    assert [e["name"] for e in info] == ["My refactor"]


async def _ran(world: Any, session: Any, *commands: str) -> Any:
    """A context on ``session`` that has run ``commands``, one after the other."""
    ctx = world.context(session)
    for command in commands:
        await ctx.run(command)
    return ctx


async def _report(world: Any, session: Any) -> list[str]:
    """Run ``/session`` on ``session``: the lines of the one report it shows."""
    [text] = (await _ran(world, session, "/session")).texts("show")
    return text.splitlines()


async def _report_of(world: Any, new_session: Awaitable[Any]) -> list[str]:
    """:func:`_report` on the session ``new_session`` gives."""
    return await _report(world, await new_session)


async def _answered(world: Any, turns: list[dict[str, Any]], *prompts: str, **options: Any) -> Any:
    """A session that has sent ``prompts`` (``hello`` without any) and had ``turns`` answer them."""
    session = await world.session(turns, **options)
    for text in prompts or ("hello",):
        await session.prompt(text)
    return session


def test_session_shows_pi_layout_with_stats(world, run) -> None:
    """pi 1.6's order: Total first, one Tools line, the prompt split into cached and uncached."""

    async def scenario() -> Any:
        session = await _answered(
            world, [{"blocks": [{"text": "hi"}], "usage": {"input": 12345, "output": 678, "cacheRead": 90}}]
        )
        session.set_session_name("stats")
        return session, await _report(world, session)

    session, lines = run(scenario())
    assert lines == [
        "Session Info",
        "",
        "Name: stats",
        f"File: {session.session_file}",
        f"ID: {session.session_id}",
        "",
        "Messages",
        "Total: 2",
        "User: 1",
        "Assistant: 1",
        "Tools: 0 calls, 0 results",
        "",
        "Tokens",
        "Input: 12,435",
        "  Cached: 90 (0.7%)",
        "  Uncached: 12,345",
        "Output: 678",
        "Total: 13,113",
        "",
        "Cache Warming",
        "Mode: idle",
        "Status: Inactive (cache lifetime unavailable)",
    ]


def test_session_of_an_empty_session(world, run) -> None:
    """No request yet: pi 1.6's cache warmer waits for one; no cache lines, no cost."""

    lines = run(_report_of(world, world.session()))
    assert lines[lines.index("Messages") :] == [
        "Messages",
        "Total: 0",
        "User: 0",
        "Assistant: 0",
        "Tools: 0 calls, 0 results",
        "",
        "Tokens",
        "Input: 0",
        "Output: 0",
        "Total: 0",
        "",
        "Cache Warming",
        "Mode: idle",
        "Status: Inactive (waiting for first request)",
    ]


PRICED_TURNS = [  # the session pi 1.6 was watched with: a tool call, cache writes and reads, one miss
    {
        "blocks": [
            {"text": "Let me read it."},
            {"tool_call": {"name": "read", "arguments": {"path": "notes.txt"}}},
        ],
        "usage": {"input": 1200, "output": 40, "cacheRead": 0, "cacheWrite": 3000},
    },
    {
        "blocks": [{"text": "The file says hello."}],
        "usage": {"input": 150, "output": 30, "cacheRead": 3000, "cacheWrite": 200},
    },
    {"blocks": [{"text": "Second answer."}], "usage": {"input": 5000, "output": 25, "cacheRead": 100}},
    {"blocks": [{"text": "Third answer."}], "usage": {"input": 100, "output": 20, "cacheRead": 5200}},
]


async def _priced_session(world: Any, **options: Any) -> Any:
    from piko.data.messages import ModelCost

    (world.project / "notes.txt").write_text("hello file\n", encoding="utf-8")
    session = await world.session(list(PRICED_TURNS), **options)
    session.model.cost = ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75)
    for text in ("read notes.txt please", "second question", "third question"):
        await session.prompt(text)
    return session


def test_session_tools_cache_and_rebilled_cost(world, run) -> None:
    """One tool call and its result on the Tools line; the cache split; the cost in dollars to three
    places; the third answer re-billed 3,250 prompt tokens the second had cached (at 3.00 less
    0.30 dollars per million: $0.009)."""

    lines = run(_report_of(world, _priced_session(world)))
    assert lines[lines.index("Messages") :] == [
        "Messages",
        "Total: 8",
        "User: 3",
        "Assistant: 4",
        "Tools: 1 calls, 1 results",
        "",
        "Tokens",
        "Input: 17,950",
        "  Cached: 8,300 (46.2%)",
        "  Uncached: 9,650 (3,200 written to cache)",
        "Output: 115",
        "Total: 18,065",
        "",
        "Cache Warming",
        "Mode: idle",
        "Status: Inactive (cache lifetime unavailable)",
        "",
        "Cost",
        "Total: $0.036",
        "Cache Re-billed: $0.009 (3,250 tokens, 1 miss)",
    ]


def test_session_cost_by_model_once_another_model_answered(world, run) -> None:
    """Two models answered: each one's cost and tokens under the total, dearest first."""

    async def scenario() -> Any:
        session = await world.session(
            [{"blocks": [{"text": "one"}], "usage": {"input": 2000, "output": 200}}]
        )
        from piko.data.messages import ModelCost

        session.model.cost = ModelCost(input=3, output=15)
        await session.prompt("first")
        other = session.model_registry.find("other", "other-1")
        await session.set_model(other)
        world.server.add_turns([{"blocks": [{"text": "two"}], "usage": {"input": 900, "output": 50}}])
        await session.prompt("second")
        return session

    lines = run(_report_of(world, scenario()))
    assert lines[lines.index("Cost") :] == [
        "Cost",
        "Total: $0.009",
        "  mock/mock-1: $0.009 (2.2k tokens)",
        "  other/other-1: $0.000 (950 tokens)",
    ]


@pytest.mark.parametrize(
    ("settings", "mode", "status"),
    [
        ({"cacheWarming": "off"}, "off", "Inactive (cache warming disabled)"),
        ({"cacheWarming": "streaming"}, "streaming", "Inactive (cache lifetime unavailable)"),
        ({"cacheWarming": "sometimes"}, "idle", "Inactive (cache lifetime unavailable)"),
        ({"cacheRetention": "none"}, "idle", "Inactive (request disabled prompt caching)"),
    ],
)
def test_session_cache_warming_mode_and_status(world, run, settings, mode, status) -> None:
    """The global ``cacheWarming`` setting (an unknown value reads as pi's default, idle) and why
    no cache is kept warm, in pi 1.6's words."""

    lines = run(_report_of(world, _answered(world, [{"blocks": [{"text": "hi"}]}], settings=settings)))
    assert lines[lines.index("Cache Warming") :] == ["Cache Warming", f"Mode: {mode}", f"Status: {status}"]


def test_session_cache_warming_waits_again_after_new(world, run) -> None:
    """A new session has sent no request yet, as pi 1.6 says after ``/new``."""

    async def scenario() -> Any:
        session = await _answered(world, [{"blocks": [{"text": "hi"}]}])
        return await _ran(world, session, "/session", "/new", "/session")

    ctx = run(scenario())
    first, second = (text for text in ctx.texts("show") if text.startswith("Session Info"))
    assert "Status: Inactive (cache lifetime unavailable)" in first.splitlines()
    assert "Status: Inactive (waiting for first request)" in second.splitlines()


def test_session_of_an_in_memory_session(world, run) -> None:
    lines = run(_report_of(world, world.session(options={"no_session": True})))
    assert "File: In-memory" in lines


CAT = shutil.which("cat")


def _fake_tool(folder: Path, name: str, sink: Path, status: int = 0) -> None:
    script = folder / name
    script.write_text(f"#!/bin/sh\n{CAT} > '{sink}'\necho \"$@\" > '{sink}.args'\nexit {status}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_copy_uses_the_x11_tool_then_osc52_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    sink = tmp_path / "clip.txt"
    _fake_tool(bin_dir, "xclip", sink)
    monkeypatch.setenv("PATH", str(bin_dir))
    written: list[str] = []
    env = {"DISPLAY": ":0"}
    assert copy_to_clipboard("héllo", platform="linux", env=env, write_terminal=written.append) == ["tool"]
    assert sink.read_text(encoding="utf-8") == "héllo"
    assert (tmp_path / "clip.txt.args").read_text().split() == ["-selection", "clipboard"]
    assert written == []
    # remote: the tool and the terminal
    assert copy_to_clipboard(
        "x", platform="linux", env={**env, "SSH_CONNECTION": "1 2 3 4"}, write_terminal=written.append
    ) == ["tool", "osc52"]
    assert written == ["\x1b]52;c;eA==\x07"]
    # xclip failing: xsel; nothing there: OSC 52 only
    _fake_tool(bin_dir, "xclip", sink, status=1)
    _fake_tool(bin_dir, "xsel", tmp_path / "xsel.txt")
    assert copy_to_clipboard("y", platform="linux", env=env, write_terminal=written.append) == ["tool"]
    assert (tmp_path / "xsel.txt").read_text() == "y"
    assert copy_to_clipboard("z", platform="linux", env={}, write_terminal=written.append) == ["osc52"]
    with pytest.raises(ClipboardError):
        copy_to_clipboard(
            "a" * MAX_OSC52_ENCODED_LENGTH, platform="linux", env={}, write_terminal=written.append
        )
    assert osc52_sequence("a" * MAX_OSC52_ENCODED_LENGTH) is None


def test_copy_on_wayland_leaves_wl_copy_running_and_a_hung_tool_gives_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``wl-copy`` is not waited for (it stays to own the selection); a tool that hangs is killed
    after its time and the next way is tried."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    started = tmp_path / "wl-copy.started"
    script = bin_dir / "wl-copy"
    script.write_text(f"#!/bin/sh\n{CAT} > '{tmp_path / 'wl.txt'}'\necho $$ > '{started}'\nexec sleep 30\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    written: list[str] = []
    assert copy_to_clipboard("wayland", platform="linux", env={"WAYLAND_DISPLAY": "wayland-0"}) == ["tool"]
    deadline = time.monotonic() + 10
    while not (started.exists() and started.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert (tmp_path / "wl.txt").read_text() == "wayland"
    # still running (waited for, it would have ended with its 30 s sleep): the kill finds it
    os.kill(int(started.read_text()), signal.SIGKILL)
    # a pbcopy that never exits: killed after TOOL_TIMEOUT_S, then OSC 52
    monkeypatch.setattr(clipboard, "TOOL_TIMEOUT_S", 0.3)
    hung = bin_dir / "pbcopy"
    hung.write_text("#!/bin/sh\nexec sleep 30\n")
    hung.chmod(hung.stat().st_mode | stat.S_IEXEC)
    assert copy_to_clipboard("mac", platform="darwin", env={}, write_terminal=written.append) == ["osc52"]
    assert written == [osc52_sequence("mac")]


def test_copy_command(world, run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    sink = tmp_path / "clip.txt"
    _fake_tool(bin_dir, "xclip", sink)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DISPLAY", ":0")
    for name in (
        "SSH_CONNECTION",
        "SSH_CLIENT",
        "MOSH_CONNECTION",
        "WAYLAND_DISPLAY",
        "XDG_SESSION_TYPE",
        "TERMUX_VERSION",
    ):
        monkeypatch.delenv(name, raising=False)

    async def scenario() -> Any:
        session, ctx = await world.session_with_context([{"blocks": [{"text": "The answer is 42."}]}])
        await ctx.run("/copy")
        await session.prompt("question")
        await ctx.run("/copy")
        return ctx

    ctx = run(scenario())
    assert ctx.texts("error") == ["No agent messages to copy yet."]
    assert ctx.texts("info") == ["Copied last agent message to clipboard"]
    assert sink.read_text() == "The answer is 42."


def test_export_jsonl_writes_the_branch_linearly(world, run) -> None:
    async def scenario() -> Any:
        turns = [{"blocks": [{"text": "one"}]}, {"blocks": [{"text": "two"}]}]
        session = await _answered(world, turns, "first", "second")
        return session, await _ran(world, session, '/export "out dir/branch.jsonl" ignored')

    session, ctx = run(scenario())
    target = world.project / "out dir" / "branch.jsonl"
    assert ctx.texts("info") == [f"Session exported to: {target}"]
    exported = lines_of(target)
    original = lines_of(session.session_file)
    assert exported[0]["type"] == "session" and exported[0]["id"] == session.session_id
    assert [e["id"] for e in exported[1:]] == [e.id for e in session.session_manager.get_branch()]
    assert [e["parentId"] for e in exported[1:]] == [None] + [e["id"] for e in exported[1:-1]]
    assert {k: v for k, v in exported[-1].items() if k != "parentId"} == {
        k: v for k, v in original[-1].items() if k != "parentId"
    }


class Exporter:
    """A stand-in HTML exporter plugin answering ``piko_export_html``."""

    def __init__(self) -> None:
        self.requests: list[Any] = []

    @hookimpl
    def piko_export_html(self, request: Any, ctx: Any) -> Any:
        self.requests.append(request)
        path = Path(request.output_path or Path(ctx.cwd) / "pi-session.html")
        path.write_text("<html>exported</html>", encoding="utf-8")
        return str(path)


def test_export_html_through_the_exporter_hook(world, run) -> None:
    exporter = Exporter()

    async def scenario() -> Any:
        session = await _answered(world, [{"blocks": [{"text": "one"}]}], "first")
        session.app.pm.register(exporter, "test.exporter")
        return session, await _ran(world, session, "/export page.html", "/export")

    session, ctx = run(scenario())
    assert ctx.texts("info") == [
        f"Session exported to: {world.project / 'page.html'}",
        f"Session exported to: {world.project / 'pi-session.html'}",
    ]
    first, second = exporter.requests
    assert first.output_path == str(world.project / "page.html") and second.output_path is None
    assert first.session_file == session.session_file
    assert [e.id for e in first.entries] == [e.id for e in session.session_manager.get_entries()]
    assert (world.project / "page.html").read_text() == "<html>exported</html>"


def test_export_without_an_exporter_says_so(world, run) -> None:
    async def scenario() -> Any:
        session = await world.session()
        pm = session.app.pm
        for impl in pm.hook.piko_export_html.get_hookimpls():
            pm.unregister(name=impl.plugin_name)
        return await _ran(world, session, "/export")

    ctx = run(scenario())
    assert ctx.texts("error") == [
        "Failed to export session: HTML export is not available: no plugin answers piko_export_html (see `pi plugins`)"
    ]


def test_path_argument() -> None:
    assert path_argument("") is None
    assert path_argument("  a.html b") == "a.html"
    assert path_argument('"my file.html" x') == "my file.html"
    assert path_argument("'x y.jsonl'") == "x y.jsonl"
    assert path_argument('"unclosed') is None
