"""Battery: many SDK sessions in one process, side by side, misused, and aborted mid-stream.

* ``sdk: many sessions`` creates, prompts and closes sessions one after another (100 under
  ``-m slow``), each with an inline extension, a custom tool and a session file, and then
  measures what is left: asyncio tasks, threads, open file descriptors, traced memory over the
  second half of the run, and whether any closed session's ``App`` is still alive. A session file
  missing its prompt or answer is data lost.
* ``sdk: side by side`` runs sessions concurrently in one loop, each with its own settings,
  tool and extension state; a request carrying another session's tool, or a file holding another
  session's prompt, is a failure.
* ``sdk: bad options`` passes wrong options; anything but one ``SessionOptionError`` naming the
  option is a failure, and a good session must still work after each.
* ``sdk: closed session`` calls every method on a closed session: each must raise
  ``SessionClosedError``.
* ``sdk: abort mid-stream`` aborts a streaming answer at varying points and prompts again; the
  file must hold every prompt and the final answer.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import threading
import tracemalloc
import weakref
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from battery import Battery
from battery import Tally
from battery import both_sizes
from battery import tries
from support.sdk_rig import SdkRig
from support.world import world_of

import piko
from piko.testing import text_turn
from piko.testing import tool_turn

pytestmark = pytest.mark.timeout(600)

MEMORY_BOUND = 2 * 1024 * 1024
"""Traced growth allowed over the second half of the many-sessions run (one leaked session's
App, plugin manager and registries alone is more than 100 KiB; half the run leaking is many MiB)."""


@pytest.fixture
def sdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    yield from world_of(SdkRig, tmp_path, monkeypatch)


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _threads() -> Counter[str]:
    """The live threads but the event loop's default executor's workers: that pool grows on
    demand up to its fixed bound (a worker still busy when the next call comes adds one, which a
    loaded machine makes likely), so a new worker is not a leak."""
    return Counter(t.name for t in threading.enumerate() if not t.name.startswith("asyncio_"))


def _settle() -> None:
    """Let the threads plain handlers and tools ran on end (they hold their call's arguments
    until they do), drop what the test server keeps, and collect."""
    for thread in threading.enumerate():
        if thread.name.startswith("piko-"):
            thread.join(timeout=30)
    gc.collect()


def _roles(path: str | None) -> list[str]:
    if path is None or not Path(path).exists():
        return []
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    roles = [e["message"]["role"] for e in map(json.loads, lines) if e["type"] == "message"]
    return [r for r in roles if r != "system"]  # the conversation: pi 1.6's tool records aside


async def _one_session(sdk: SdkRig, index: int, refs: list[Any]) -> tuple[str | None, str | None]:
    heard: list[str] = []

    def extension(pi: piko.ExtensionAPI) -> None:
        pi.on("agent_end", lambda event, ctx: heard.append("end"))

    @piko.tool(name="stamp")
    def stamp(text: str) -> str:
        """Stamp a text."""
        return f"[{index}] {text}"

    async with await piko.create_agent_session(
        cwd=sdk.project, model="mock/mock-1", tools=["read"], custom_tools=[stamp], extensions=[extension]
    ) as session:
        await session.prompt(f"prompt {index}")
        refs.append(weakref.ref(session.app))
        text = session.get_last_assistant_text()
        path = session.session_file
    return (text if heard == ["end"] else None), path


def _many_sessions(sdk: SdkRig, tally: Tally, count: int) -> None:
    sdk.serve([tool_turn("stamp", {"text": "x"}), text_turn("stamped")] * (count + 4))
    refs: list[Any] = []

    async def main() -> None:
        for index in range(3):  # warm-up: first imports, caches, the executor's threads
            await _one_session(sdk, -1 - index, [])
        assert sdk.server is not None
        sdk.server.requests.clear()  # the test server keeps every request; not ours to count
        _settle()
        tasks, threads, fds = len(asyncio.all_tasks()), _threads(), _open_fds()
        half = count // 2
        tracemalloc.start()
        try:
            for index in range(count):
                if index == half:
                    sdk.server.requests.clear()
                    _settle()
                    middle = tracemalloc.take_snapshot()
                text, path = await _one_session(sdk, index, refs)
                if text != "stamped":
                    tally.fail(f"session {index} answered {text!r} (or its extension missed agent_end)")
                roles = _roles(path)
                if roles != ["user", "assistant", "toolResult", "assistant"]:
                    tally.lose(4 - len(roles), f"session {index} file holds {roles}")
            sdk.server.requests.clear()
            _settle()
            end = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        grown = sum(stat.size_diff for stat in end.compare_to(middle, "filename"))
        if len(asyncio.all_tasks()) != tasks:
            tally.fail(f"asyncio tasks {tasks} -> {len(asyncio.all_tasks())}")
        if _threads() - threads:
            tally.fail(f"threads left running: {sorted((_threads() - threads).elements())}")
        if _open_fds() > fds:
            tally.fail(f"open file descriptors {fds} -> {_open_fds()}")
        alive = sum(ref() is not None for ref in refs)
        if alive:
            tally.fail(f"{alive} closed sessions' App objects are still alive")
        if grown > MEMORY_BOUND:
            tally.fail(f"traced memory grew {grown / 1024:.0f} KiB over the last {count - half} sessions")
        print(
            f"\nsdk many sessions: {count} sessions; tasks {tasks}->{len(asyncio.all_tasks())}, "
            f"threads {threads}->{threading.active_count()}, fds {fds}->{_open_fds()}, "
            f"traced growth over the last {count - half}: {grown / 1024:.1f} KiB, alive {alive}"
        )

    asyncio.run(main())
    tally.tries = count


def _side_by_side(sdk: SdkRig, tally: Tally, rounds: int, width: int) -> None:
    sdk.serve([text_turn("side by side")] * (rounds * width + 2))

    async def one(index: int) -> tuple[int, Any, list[str], Any]:
        counter: list[int] = []

        def extension(pi: piko.ExtensionAPI) -> None:
            pi.on("turn_end", lambda event, ctx: counter.append(index))

        def own(text: str) -> str:
            """A tool only this session has."""
            return text

        own_tool = piko.tool(name=f"own_{index}")(own)
        session = await piko.create_agent_session(
            cwd=sdk.project,
            model="mock/mock-1",
            tools=[],
            custom_tools=[own_tool],
            extensions=[extension],
            settings={"retry": {"maxRetries": index}},
        )
        async with session:
            await session.prompt(f"from session {index}")
            settings = session.app.settings.get("retry.maxRetries")
            return index, settings, _roles(session.session_file), counter

    async def main() -> None:
        for round_ in range(rounds):
            results = await asyncio.gather(*(one(round_ * width + i) for i in range(width)))
            for index, settings, roles, counter in results:
                if settings != index:
                    tally.fail(f"session {index} saw retry.maxRetries={settings}")
                if counter != [index]:
                    tally.fail(f"session {index}'s extension state is {counter}")
                if roles != ["user", "assistant"]:
                    tally.lose(2 - len(roles), f"session {index} file holds {roles}")

    asyncio.run(main())
    assert sdk.server is not None
    for request in sdk.server.requests:
        names = [t["function"]["name"] for t in request["body"].get("tools") or []]
        prompt = next(m for m in request["body"]["messages"] if m["role"] == "user")["content"]
        text = prompt if isinstance(prompt, str) else "".join(p.get("text", "") for p in prompt)
        index = text.rsplit(" ", 1)[-1]
        if names != [f"own_{index}"]:
            tally.fail(f"the request of session {index} carried tools {names}")
    tally.tries = rounds * width


BAD_OPTIONS: list[tuple[dict[str, Any], str]] = [
    ({"modle": "mock/mock-1"}, "modle"),
    ({"session": "x"}, "session"),
    ({"model": "mock/no-such-model"}, "model"),
    ({"model": ["mock/mock-1"]}, "model"),
    ({"thinking_level": "maximal"}, "thinking_level"),
    ({"thinking_level": 3}, "thinking_level"),
    ({"tools": ["read", "nope"]}, "tools"),
    ({"tools": "read,bash"}, "tools"),
    ({"tools": [""]}, "tools"),
    ({"custom_tools": ["not a tool"]}, "custom_tools"),
    ({"custom_tools": "multiply"}, "custom_tools"),
    ({"extensions": [42]}, "extensions"),
    ({"extensions": ["/no/such/extension.py"]}, "extensions"),
    ({"settings": "retry=0"}, "settings"),
    ({"cwd": "/no/such/dir"}, "cwd"),
    ({"session_manager": {"in_memory": True}}, "session_manager"),
    ({"resources": "all"}, "resources"),
    ({"resources": {"skills": "none"}}, "resources.skills"),
    ({"resources": {"system_prompt": 3}}, "resources.system_prompt"),
    ({"api_key": ""}, "api_key"),
    ({"disable_plugins": "tools.builtin"}, "disable_plugins"),
    ({"scoped_models": [3]}, "scoped_models"),
]


def _bad_options(sdk: SdkRig, tally: Tally, cases: list[tuple[dict[str, Any], str]]) -> None:
    sdk.serve([text_turn("still fine")] * (len(cases) + 1))

    def bad_hints(path: Path) -> str:
        """A Path has no JSON type."""
        return ""

    def broken(pi: piko.ExtensionAPI) -> None:
        raise RuntimeError("factory broke")

    cases = [
        *cases,
        ({"custom_tools": [bad_hints]}, "custom_tools"),
        ({"extensions": [broken]}, "extensions"),
    ]

    async def main() -> None:
        for options, option in cases:
            try:
                await piko.create_agent_session(**{"cwd": sdk.project, "model": "mock/mock-1", **options})
            except piko.SessionOptionError as exc:
                if exc.option != option:
                    tally.fail(f"{options}: the error names {exc.option!r}, not {option!r}")
            except Exception as exc:
                tally.fail(f"{options}: {type(exc).__name__}: {exc}")
            else:
                tally.fail(f"{options}: no error")
        async with await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1") as session:
            await session.prompt("still serving?")
            if session.get_last_assistant_text() != "still fine":
                tally.fail("a good session did not work after the bad ones")

    asyncio.run(main())
    tally.tries = len(cases)


def _closed_session(sdk: SdkRig, tally: Tally) -> None:
    sdk.serve([text_turn("once")])
    calls: dict[str, Any] = {
        "prompt": lambda s: s.prompt("x"),
        "steer": lambda s: s.steer("x"),
        "follow_up": lambda s: s.follow_up("x"),
        "abort": lambda s: s.abort(),
        "wait_for_idle": lambda s: s.wait_for_idle(),
        "compact": lambda s: s.compact(),
        "set_model": lambda s: s.set_model("mock/mock-1"),
        "set_thinking_level": lambda s: s.set_thinking_level("off"),
        "new_session": lambda s: s.new_session(),
        "switch_session": lambda s: s.switch_session("x.jsonl"),
        "fork": lambda s: s.fork("x"),
        "import_session": lambda s: s.import_session("x.jsonl"),
        "subscribe": lambda s: s.subscribe(print),
        "events": lambda s: s.events(),
        "engine": lambda s: s.engine,
        "set_active_tools": lambda s: s.set_active_tools([]),
        "async with": lambda s: s.__aenter__(),
    }

    async def main() -> None:
        session = await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1")
        await session.prompt("hello")
        await session.close()
        for name, call in calls.items():
            try:
                result = call(session)
                if asyncio.iscoroutine(result):
                    await result
            except piko.SessionClosedError:
                continue
            except Exception as exc:
                tally.fail(f"{name}: {type(exc).__name__}: {exc}")
                continue
            tally.fail(f"{name}: worked on a closed session")
        if session.get_last_assistant_text() != "once":  # reading what was said still works
            tally.fail("the last answer of a closed session is gone")

    asyncio.run(main())
    tally.tries = len(calls)


def _abort_mid_stream(sdk: SdkRig, tally: Tally, count: int) -> None:
    long_turn = {"blocks": [{"text": " ".join(f"w{i}" for i in range(60))}], "delay_s": 0.01}
    turns: list[dict[str, Any]] = []
    for _ in range(count):
        turns += [long_turn, text_turn("after the abort")]
    sdk.serve(turns)

    async def one(attempt: int) -> str | None:
        """Abort after a varying number of updates, prompt again; the session's file."""
        updates = asyncio.Event()
        wanted = 1 + attempt * 7 % 40
        seen = [0]

        def on_event(event: Any) -> None:
            if event.TYPE == "message_update":
                seen[0] += 1
                if seen[0] >= wanted:
                    updates.set()

        async with await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1", tools=[]) as session:
            session.subscribe(on_event)
            work = asyncio.ensure_future(session.prompt(f"long {attempt}"))
            await asyncio.wait_for(updates.wait(), 30)
            await session.abort()
            await asyncio.wait_for(work, 30)
            await session.prompt(f"again {attempt}")
            if session.get_last_assistant_text() != "after the abort":
                tally.fail(
                    f"attempt {attempt}: the prompt after the abort got {session.get_last_assistant_text()!r}"
                )
            return session.session_file

    async def main() -> None:
        for attempt in range(count):
            roles = _roles(await one(attempt))
            if roles != ["user", "assistant", "user", "assistant"]:
                tally.lose(4 - len(roles), f"attempt {attempt}: the file holds {roles}")

    asyncio.run(main())
    tally.tries = count


@both_sizes
def test_sdk_sessions_battery(battery: Battery, sdk: SdkRig, tmp_path: Path, slow: bool) -> None:
    _many_sessions(sdk, battery.case("sdk: many sessions"), tries(16, 100, slow=slow))
    sdk.server.stop()  # type: ignore[union-attr]
    sdk.server = None
    _side_by_side(sdk, battery.case("sdk: side by side"), tries(1, 5, slow=slow), 4)
    sdk.server.stop()  # type: ignore[union-attr]
    sdk.server = None
    cases = (
        BAD_OPTIONS if slow else BAD_OPTIONS[:: max(1, len(BAD_OPTIONS) // (tries(8, 0, slow=False) or 8))]
    )
    _bad_options(sdk, battery.case("sdk: bad options"), cases)
    sdk.server.stop()  # type: ignore[union-attr]
    sdk.server = None
    _closed_session(sdk, battery.case("sdk: closed session"))
    sdk.server.stop()  # type: ignore[union-attr]
    sdk.server = None
    _abort_mid_stream(sdk, battery.case("sdk: abort mid-stream"), tries(2, 12, slow=slow))
