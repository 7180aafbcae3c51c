"""``piko.create_agent_session``: options, prompting, events, tools, extensions, resources, settings, close.

Every session here talks to the scripted server on 127.0.0.1, writes real files under the
test's agent dir and loads real extensions (inline factories and files).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from support.sdk_rig import SdkRig

import piko
from piko.testing import text_turn
from piko.testing import tool_turn

pytestmark = pytest.mark.timeout(60)


def _last_user_text(request: dict[str, Any]) -> str:
    messages = request["body"]["messages"]
    user = [m for m in messages if m["role"] == "user"][-1]
    content = user["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def _system(request: dict[str, Any]) -> str:
    return str(request["body"]["messages"][0]["content"])


# -- the entry point ---------------------------------------------------------------------------


def test_minimal_session_prompts_and_writes_a_session_file(sdk: SdkRig, run: Any) -> None:
    server = sdk.serve([text_turn("Hello from the model.")])

    async def main() -> tuple[str | None, str | None, bool]:
        async with await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1") as session:
            await session.prompt("hi")
            return session.get_last_assistant_text(), session.session_file, session.closed

    text, path, closed_inside = run(main())
    assert text == "Hello from the model."
    assert not closed_inside
    assert path is not None and Path(path).is_file()
    entries = [json.loads(line) for line in Path(path).read_text().splitlines()]
    assert entries[0]["type"] == "session" and entries[0]["cwd"] == str(sdk.project)
    assert [e["message"]["role"] for e in entries if e["type"] == "message"] == ["user", "assistant"]
    assert _last_user_text(server.requests[0]) == "hi"


def test_without_options_it_is_pi_in_the_current_directory(
    sdk: SdkRig, run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sdk.serve([text_turn("Default.")])
    (sdk.agent_dir / "settings.json").write_text(
        json.dumps({"defaultProvider": "mock", "defaultModel": "mock-2"})
    )
    (sdk.project / "AGENTS.md").write_text("Project rule: be brief.\n")
    monkeypatch.chdir(sdk.project)

    async def main() -> Any:
        async with await piko.create_agent_session() as session:
            await session.prompt("hello")
            return session.model, session.cwd, session.get_active_tools(), sdk.server.requests  # type: ignore[union-attr]

    model, cwd, tools, requests = run(main())
    assert model.key == "mock/mock-2"  # from settings.json, as pi
    assert cwd == str(sdk.project)
    assert tools == ["read", "bash", "edit", "write"]
    assert "Project rule: be brief." in _system(requests[0])
    assert len(sdk.session_files()) == 1


def test_unknown_option_is_named_with_a_suggestion(sdk: SdkRig, run: Any) -> None:
    with pytest.raises(piko.SessionOptionError, match="did you mean 'model'") as caught:
        run(piko.create_agent_session(modle="mock/mock-1"))  # type: ignore[call-arg]
    assert caught.value.option == "modle"


def test_a_model_that_does_not_resolve_fails_at_creation(sdk: SdkRig, run: Any) -> None:
    sdk.serve([])
    with pytest.raises(piko.SessionOptionError) as caught:
        run(piko.create_agent_session(cwd=sdk.project, model="nowhere/nothing"))
    assert caught.value.option == "model"
    assert "nowhere/nothing" in str(caught.value) or "nothing" in str(caught.value)
    assert sdk.server is not None and sdk.server.requests == []


@pytest.mark.parametrize(
    ("options", "option"),
    [
        ({"model": "mock/mock-3"}, "model"),  # a known provider, an id it does not list
        ({"thinking_level": "extreme"}, "thinking_level"),
        ({"tools": ["read", "teleport"]}, "tools"),
        ({"tools": "read"}, "tools"),
        ({"settings": ["not", "a", "dict"]}, "settings"),
        ({"cwd": "/does/not/exist"}, "cwd"),
        ({"extensions": ["missing_extension.py"]}, "extensions"),
        ({"session_manager": "memory"}, "session_manager"),
        ({"resources": {"skillz": []}}, "resources"),
        ({"model": 42}, "model"),
        ({"model": None, "api_key": "sk-1"}, "api_key"),
        ({"disable_plugins": ["modes.print"]}, "disable_plugins"),  # piko cannot run without it
    ],
)
def test_bad_values_are_named_at_creation(
    sdk: SdkRig, run: Any, options: dict[str, Any], option: str
) -> None:
    sdk.serve([])
    with pytest.raises(piko.SessionOptionError) as caught:
        run(piko.create_agent_session(**{"cwd": sdk.project, "model": "mock/mock-1", **options}))
    assert caught.value.option == option


def test_a_closed_session_raises_a_clear_error(sdk: SdkRig, run: Any) -> None:
    sdk.serve([text_turn("one")])

    async def main() -> piko.AgentSession:
        session = await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1")
        async with session:
            await session.prompt("first")
        await session.close()  # twice is fine
        return session

    session = run(main())
    assert session.closed
    with pytest.raises(piko.SessionClosedError, match="closed"):
        run(session.prompt("again"))
    with pytest.raises(piko.SessionClosedError):
        session.subscribe(print)
    assert [m.ROLE for m in session.messages] == ["user", "assistant"]  # reading still works
    assert session.get_last_assistant_text() == "one"


# -- prompting and events ----------------------------------------------------------------------


def test_subscribe_and_unsubscribe(sdk: SdkRig, run: Any) -> None:
    sdk.serve([text_turn("first answer"), text_turn("second answer")])

    async def main() -> tuple[list[str], list[str]]:
        seen: list[str] = []
        deltas: list[str] = []

        async def on_event(event: Any) -> None:  # async listeners are awaited
            seen.append(event.TYPE)
            if event.TYPE == "message_update" and event.assistant_message_event.type == "text_delta":
                deltas.append(event.assistant_message_event.delta)

        async with await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1") as session:
            unsubscribe = session.subscribe(on_event)
            await session.prompt("one")
            unsubscribe()
            count = len(seen)
            await session.prompt("two")
            assert len(seen) == count
        return seen, deltas

    seen, deltas = run(main())
    assert seen[0] == "agent_start" and seen[-2:] == ["agent_end", "agent_settled"]
    assert {"message_start", "message_update", "message_end", "turn_end"} <= set(seen)
    assert "".join(deltas) == "first answer"


def test_events_iterator_ends_when_the_session_closes(sdk: SdkRig, run: Any) -> None:
    sdk.serve([text_turn("streamed words here")])

    async def main() -> list[str]:
        session = await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1")
        events = session.events()  # subscribed now: nothing is missed

        async def consume() -> list[str]:
            return [event.TYPE async for event in events]

        consumer = asyncio.ensure_future(consume())
        await session.prompt("go")
        await session.close()
        return await asyncio.wait_for(consumer, 10)

    kinds = run(main())
    assert kinds[0] == "agent_start" and "agent_end" in kinds
    assert kinds[-1] in ("session_shutdown", "agent_settled")


def test_stream_yields_the_run_and_ends_when_settled(sdk: SdkRig, run: Any) -> None:
    sdk.serve([text_turn("Hello streaming world")])

    async def main() -> tuple[str, list[str]]:
        text: list[str] = []
        kinds: list[str] = []
        async with await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1") as session:
            async for event in session.stream("hi"):
                kinds.append(event.TYPE)
                if event.TYPE == "message_update" and event.assistant_message_event.type == "text_delta":
                    text.append(event.assistant_message_event.delta)
        return "".join(text), kinds

    text, kinds = run(main())
    assert text == "Hello streaming world"
    assert kinds[-2:] == ["agent_end", "agent_settled"]


def test_leaving_a_stream_early_aborts_its_run(sdk: SdkRig, run: Any) -> None:
    import contextlib

    sdk.serve([{"blocks": [{"text": " ".join(["word"] * 200)}], "delay_s": 0.05}, text_turn("next")])

    async def main() -> tuple[str, str | None]:
        async with await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1") as session:
            async with contextlib.aclosing(session.stream("long")) as events:
                async for event in events:
                    if event.TYPE == "message_update":
                        break
            assert not session.is_streaming
            stop_reason = session.messages[-1].stop_reason
            await session.prompt("again")
            return stop_reason, session.get_last_assistant_text()

    assert run(main()) == ("aborted", "next")


def test_prompt_while_streaming_needs_steer_or_follow_up(sdk: SdkRig, run: Any) -> None:
    server = sdk.serve(
        [
            {"blocks": [{"text": "a slow first answer with many words"}], "delay_s": 0.05},
            text_turn("after the steer"),
            text_turn("after the follow-up"),
        ]
    )

    async def main() -> tuple[list[str], str | None]:
        async with await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1") as session:
            started = asyncio.Event()
            session.subscribe(lambda e: started.set() if e.TYPE == "message_update" else None)
            first = asyncio.ensure_future(session.prompt("first"))
            await started.wait()
            with pytest.raises(RuntimeError, match="already processing"):
                await session.prompt("no behaviour given")
            assert await session.steer("steer now") == "queued"
            await session.prompt("later", streaming_behavior="follow_up")
            await first  # settles after the steer and the follow-up ran
            users = [m.content[0].text for m in session.messages if m.ROLE == "user"]
            return users, session.get_last_assistant_text()

    users, last = run(main())
    assert users == ["first", "steer now", "later"]
    assert last == "after the follow-up"
    assert [_last_user_text(r) for r in server.requests] == ["first", "steer now", "later"]


def test_cancelling_a_prompt_aborts_its_run(sdk: SdkRig, run: Any) -> None:
    sdk.serve([{"blocks": [{"text": " ".join(["word"] * 200)}], "delay_s": 0.05}, text_turn("next")])

    async def main() -> tuple[str, bool, str | None, list[str]]:
        async with await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1") as session:
            work = asyncio.ensure_future(session.prompt("long"))
            session.subscribe(lambda e: work.cancel() if e.TYPE == "message_update" else None)
            with pytest.raises(asyncio.CancelledError):
                await work
            streaming = session.is_streaming  # the run ended with the cancelled call
            stop_reason = session.messages[-1].stop_reason
            await session.prompt("again")
            roles = [
                json.loads(line).get("message", {}).get("role")
                for line in Path(str(session.session_file)).read_text().splitlines()
            ]
            return stop_reason, streaming, session.get_last_assistant_text(), [r for r in roles if r]

    stop_reason, streaming, last, roles = run(main())
    assert stop_reason == "aborted" and streaming is False
    assert last == "next"
    assert roles == ["user", "assistant", "user", "assistant"]


def test_an_event_stream_stopped_early_ends_its_iteration(sdk: SdkRig, run: Any) -> None:
    sdk.serve([text_turn("hello there")])

    async def main() -> list[str]:
        async with await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1") as session:
            async with session.events() as events:
                await session.prompt("hi")
            # left the block: unsubscribed; what was queued is still read, then the iteration ends
            return [event.TYPE async for event in events]

    kinds = run(main())
    assert kinds[0] == "agent_start" and kinds[-2:] == ["agent_end", "agent_settled"]


def test_abort_stops_the_run_and_wait_for_idle_returns(sdk: SdkRig, run: Any) -> None:
    sdk.serve([{"blocks": [{"text": " ".join(["word"] * 200)}], "delay_s": 0.05}, text_turn("next")])

    async def main() -> tuple[str | None, bool]:
        async with await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1") as session:
            started = asyncio.Event()
            session.subscribe(lambda e: started.set() if e.TYPE == "message_update" else None)
            work = asyncio.ensure_future(session.prompt("long"))
            await started.wait()
            await session.abort()
            await session.wait_for_idle()
            await work  # the prompt resolved: the run was settled by the abort
            last = session.messages[-1]
            await session.prompt("again")  # the session keeps serving
            return last.stop_reason, session.is_streaming

    stop_reason, streaming = run(main())
    assert stop_reason == "aborted"
    assert streaming is False


def test_set_model_and_thinking_level(sdk: SdkRig, run: Any) -> None:
    server = sdk.serve([text_turn("one"), text_turn("two")])

    async def main() -> tuple[str, str, str | None]:
        async with await piko.create_agent_session(
            cwd=sdk.project, model="mock/mock-2", thinking_level="high"
        ) as session:
            level = session.thinking_level
            await session.prompt("first")
            await session.set_model("mock/mock-1")
            session.set_thinking_level("low")  # mock-1 does not reason: clamped to off
            await session.prompt("second")
            assert session.model is not None
            return level, session.model.key, session.session_file

    level, key, path = run(main())
    assert level == "high" and key == "mock/mock-1"
    assert [r["body"]["model"] for r in server.requests] == ["mock-2", "mock-1"]
    kinds = [json.loads(line)["type"] for line in Path(str(path)).read_text().splitlines()]
    assert kinds.count("model_change") == 2


def test_a_piko_model_object_joins_the_registry(sdk: SdkRig, run: Any) -> None:
    server = sdk.serve([text_turn("from a custom model")])
    model = piko.Model(
        id="custom-7", provider="inhouse", api="openai-completions", base_url=server.base_url + "/v1"
    )

    async def main() -> str | None:
        async with await piko.create_agent_session(
            cwd=sdk.project, model=model, api_key="sk-local"
        ) as session:
            await session.prompt("hi")
            return session.get_last_assistant_text()

    assert run(main()) == "from a custom model"
    assert server.requests[0]["body"]["model"] == "custom-7"
    assert server.requests[0]["headers"].get("authorization") == "Bearer sk-local"


def test_images_reach_a_model_that_takes_them(sdk: SdkRig, run: Any) -> None:
    server = sdk.serve([text_turn("a red dot")])
    vision = piko.Model(
        id="vision-1",
        provider="inhouse",
        api="openai-completions",
        base_url=server.base_url + "/v1",
        input=["text", "image"],
    )
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="

    async def main() -> str | None:
        async with await piko.create_agent_session(cwd=sdk.project, model=vision, api_key="k") as session:
            await session.prompt(
                "what is this?", images=[piko.ImageContent(data=pixel, mime_type="image/png")]
            )
            return session.get_last_assistant_text()

    assert run(main()) == "a red dot"
    parts = next(m for m in server.requests[0]["body"]["messages"] if m["role"] == "user")["content"]
    assert any(p.get("type") == "image_url" and pixel in p["image_url"]["url"] for p in parts)


def test_compact_summarises_and_the_session_goes_on(sdk: SdkRig, run: Any) -> None:
    server = sdk.serve(
        [
            text_turn("one"),
            text_turn("two"),
            text_turn("SUMMARY OF EARLIER WORK"),  # the history before the kept turn
            text_turn("PREFIX OF THE TURN"),  # the start of the turn cut in two
            text_turn("three"),
        ]
    )

    async def main() -> tuple[Any, str | None, list[str]]:
        async with await piko.create_agent_session(
            cwd=sdk.project, model="mock/mock-1", tools=[], settings={"compaction": {"keepRecentTokens": 1}}
        ) as session:
            await session.prompt("first")
            await session.prompt("second")
            result = await session.compact("keep it short")
            await session.prompt("third")
            kinds = [
                json.loads(line)["type"] for line in Path(str(session.session_file)).read_text().splitlines()
            ]
            return result, session.get_last_assistant_text(), kinds

    result, last, kinds = run(main())
    assert "SUMMARY OF EARLIER WORK" in result.summary
    assert last == "three" and "compaction" in kinds
    # the history's and the turn prefix's summaries are requested in parallel: either may come first
    summary_requests = [json.dumps(request["body"]) for request in server.requests[2:4]]
    assert [("keep it short" in body) for body in summary_requests].count(True) == 1
    assert "SUMMARY OF EARLIER WORK" in json.dumps(server.requests[4]["body"])


# -- tools -------------------------------------------------------------------------------------


@piko.tool
def multiply(a: int, b: int) -> str:
    """Multiply two integers.

    Args:
        a: The first factor.
        b: The second factor.
    """
    return str(a * b)


async def _messages_after(sdk: SdkRig, prompt: str, **options: Any) -> list[Any]:
    """The messages of a new session made with ``options`` once ``prompt`` has run."""
    async with await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1", **options) as session:
        await session.prompt(prompt)
        return session.messages


def test_custom_tools_run_and_tools_select(sdk: SdkRig, run: Any) -> None:
    server = sdk.serve([tool_turn("multiply", {"a": 6, "b": 7}), text_turn("It is 42.")])

    async def main() -> tuple[list[str], list[Any]]:
        async with await piko.create_agent_session(
            cwd=sdk.project, model="mock/mock-1", tools=["read"], custom_tools=[multiply]
        ) as session:
            await session.prompt("6 times 7?")
            return session.get_active_tools(), session.messages

    tools, messages = run(main())
    assert tools == ["read", "multiply"]
    sent = [t["function"]["name"] for t in server.requests[0]["body"]["tools"]]
    assert sent == ["read", "multiply"]
    schema = server.requests[0]["body"]["tools"][1]["function"]["parameters"]
    assert schema["properties"]["a"] == {"type": "integer", "description": "The first factor."}
    result = next(m for m in messages if m.ROLE == "toolResult")
    assert result.content[0].text == "42" and not result.is_error


def test_bad_arguments_never_reach_the_function(sdk: SdkRig, run: Any) -> None:
    sdk.serve([tool_turn("multiply", {"a": "six", "b": 7}), text_turn("I see the error.")])
    calls: list[int] = []

    @piko.tool
    async def multiply(a: int, b: int) -> str:
        """Multiply two integers."""
        calls.append(a)
        return str(a * b)

    messages = run(_messages_after(sdk, "multiply", custom_tools=[multiply]))
    result = next(m for m in messages if m.ROLE == "toolResult")
    assert result.is_error and 'Validation failed for tool "multiply"' in result.content[0].text
    assert calls == []


def test_a_tool_that_raises_gives_an_error_result(sdk: SdkRig, run: Any) -> None:
    sdk.serve([tool_turn("explode", {}), text_turn("it failed")])

    def explode() -> str:
        """Always fails."""
        raise RuntimeError("kaboom")

    messages = run(_messages_after(sdk, "try it", custom_tools=[explode]))
    result = next(m for m in messages if m.ROLE == "toolResult")
    assert result.is_error and "kaboom" in result.content[0].text
    assert messages[-1].content[0].text == "it failed"


def test_a_custom_tool_with_a_taken_name_is_named_unless_it_overrides(sdk: SdkRig, run: Any) -> None:
    server = sdk.serve([tool_turn("read", {"path": "x"}), text_turn("ok")])

    def read(path: str) -> str:
        """My own read."""
        return f"mine: {path}"

    with pytest.raises(piko.SessionOptionError, match=r"registered by plugin 'tools\.read'") as caught:
        run(piko.create_agent_session(cwd=sdk.project, model="mock/mock-1", custom_tools=[read]))
    assert caught.value.option == "custom_tools"

    from piko.lib.records import replace

    mine = replace(piko.tool(read), override=True)
    result = next(
        m for m in run(_messages_after(sdk, "read x", custom_tools=[mine])) if m.ROLE == "toolResult"
    )
    assert result.content[0].text == "mine: x"
    assert server.requests


def test_no_tools_at_all(sdk: SdkRig, run: Any) -> None:
    server = sdk.serve([text_turn("no tools")])

    async def main() -> list[str]:
        async with await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1", tools=[]) as session:
            await session.prompt("hi")
            return session.get_active_tools()

    assert run(main()) == []
    assert not server.requests[0]["body"].get("tools")


def test_a_tool_whose_hints_cannot_become_a_schema_fails_at_creation(sdk: SdkRig, run: Any) -> None:
    sdk.serve([])

    def bad(path: Path) -> str:
        """Takes a Path, which JSON has no type for."""
        return str(path)

    with pytest.raises(piko.SessionOptionError, match="parameter 'path'") as caught:
        run(piko.create_agent_session(cwd=sdk.project, model="mock/mock-1", custom_tools=[bad]))
    assert caught.value.option == "custom_tools"


# -- extensions --------------------------------------------------------------------------------


def test_inline_extensions_named_and_not_with_their_own_state(sdk: SdkRig, run: Any) -> None:
    sdk.serve([text_turn("a"), text_turn("b")])

    def make_counter() -> tuple[list[str], Any]:
        seen: list[str] = []

        def activate(pi: piko.ExtensionAPI) -> None:
            pi.on("session_start", lambda event, ctx: seen.append(f"start:{event.reason}"))
            pi.on("agent_end", lambda event, ctx: seen.append("agent_end"))
            pi.on("session_shutdown", lambda event, ctx: seen.append("shutdown"))

        return seen, activate

    async def async_activate(pi: piko.ExtensionAPI) -> None:
        await asyncio.sleep(0)
        pi.register_command("hello", description="say hello", handler=lambda args, ctx: None)

    first_seen, first = make_counter()
    second_seen, second = make_counter()

    async def main() -> tuple[list[str], list[str]]:
        one = await piko.create_agent_session(
            cwd=sdk.project,
            model="mock/mock-1",
            extensions=[piko.InlineExtension(name="counter", factory=first), async_activate],
        )
        two = await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1", extensions=[second])
        async with one, two:
            await one.prompt("x")
            infos = one.app.pm.infos
            assert infos["counter"].origin == "inline"
            assert "<inline:2>" in infos
            assert "hello" in one.app.registries.commands
            assert "hello" not in two.app.registries.commands  # sessions do not share registrations
        return first_seen, second_seen

    first_seen, second_seen = run(main())
    assert first_seen == ["start:startup", "agent_end", "shutdown"]
    assert second_seen == ["start:startup", "shutdown"]


def test_a_failing_inline_extension_fails_at_creation(sdk: SdkRig, run: Any) -> None:
    sdk.serve([])

    def broken(pi: piko.ExtensionAPI) -> None:
        raise RuntimeError("cannot start")

    with pytest.raises(piko.SessionOptionError, match="cannot start") as caught:
        run(piko.create_agent_session(cwd=sdk.project, model="mock/mock-1", extensions=[broken]))
    assert caught.value.option == "extensions"


@pytest.mark.parametrize(
    ("file_name", "def_keyword", "registration"),
    [
        ("shout_ext.py", "def", "def activate(pi):\n    pi.register_tool(shout)\n"),
        (
            "shout_plugin.py",
            "async def",
            "@piko.hookimpl\ndef piko_register_tools(register):\n    register(shout)\n",
        ),
    ],
    ids=["extension-activate", "plugin-hook-async"],
)
def test_a_decorated_tool_in_a_file_is_active_and_runs(
    sdk: SdkRig, run: Any, file_name: str, def_keyword: str, registration: str
) -> None:
    """A ``@piko.tool`` function (plain or a coroutine) in a file given as ``extensions=``,
    registered by an extension's ``activate`` or by a plugin's ``piko_register_tools`` hook."""
    server = sdk.serve([tool_turn("shout", {"text": "hey"}), text_turn("done")])
    path = sdk.root / file_name
    path.write_text(
        "import piko\n\n"
        "@piko.tool\n"
        f"{def_keyword} shout(text: str) -> str:\n"
        '    """Upper-case the text."""\n'
        "    return text.upper()\n\n" + registration,
        encoding="utf-8",
    )

    async def main() -> list[Any]:
        async with await piko.create_agent_session(
            cwd=sdk.project, model="mock/mock-1", extensions=[path]
        ) as session:
            assert "shout" in session.get_active_tools()  # @piko.tool tools are active by default
            await session.prompt("shout hey")
            return session.messages

    result = next(m for m in run(main()) if m.ROLE == "toolResult")
    assert result.content[0].text == "HEY"
    assert "shout" in [t["function"]["name"] for t in server.requests[0]["body"]["tools"]]


def test_sessions_made_side_by_side_each_import_an_extension_file(sdk: SdkRig, run: Any) -> None:
    sdk.serve([text_turn("ok")] * 4)
    log = sdk.root / "seen.log"
    path = sdk.root / "counting_ext.py"
    path.write_text(
        "import time\n"
        "SEEN = []\n\n"
        "def activate(pi):\n"
        "    time.sleep(0.05)  # a slow import: boots side by side would overlap here\n"
        "    def on_end(event, ctx):\n"
        "        SEEN.append(1)\n"
        f"        with open({str(log)!r}, 'a') as fh:\n"
        "            fh.write(f'{id(SEEN)} {len(SEEN)}\\n')\n"
        "    pi.on('agent_end', on_end)\n",
        encoding="utf-8",
    )

    async def one() -> None:
        async with await piko.create_agent_session(
            cwd=sdk.project, model="mock/mock-1", tools=[], extensions=[path]
        ) as session:
            await session.prompt("hi")

    async def main() -> None:
        await asyncio.gather(*(one() for _ in range(4)))

    run(main())
    lines = log.read_text().splitlines()
    assert len(lines) == 4
    assert {line.split()[1] for line in lines} == {"1"}  # each session's module counted its own run
    assert len({line.split()[0] for line in lines}) == 4


def test_extension_errors_reach_subscribers(sdk: SdkRig, run: Any) -> None:
    sdk.serve([text_turn("fine")])

    def flaky(pi: piko.ExtensionAPI) -> None:
        def fail(event: Any, ctx: Any) -> None:
            raise ValueError("handler broke")

        pi.on("agent_end", fail)

    async def main() -> list[Any]:
        errors: list[Any] = []
        async with await piko.create_agent_session(
            cwd=sdk.project, model="mock/mock-1", extensions=[flaky]
        ) as session:
            session.subscribe(lambda e: errors.append(e) if e.TYPE == "extension_error" else None)
            await session.prompt("go")
            assert session.get_last_assistant_text() == "fine"
        return errors

    errors = run(main())
    assert len(errors) == 1 and "handler broke" in errors[0].error


# -- resources and settings --------------------------------------------------------------------


def test_resource_overrides(sdk: SdkRig, run: Any) -> None:
    server = sdk.serve([text_turn("ok"), text_turn("ok")])
    (sdk.project / "AGENTS.md").write_text("FOUND CONTEXT\n")
    skill = sdk.root / "skills" / "greet" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: greet\ndescription: Greets people.\n---\nSay hello.\n")

    def drop_found(found: list[piko.ContextFile]) -> list[piko.ContextFile]:
        return [piko.ContextFile(path="/virtual/RULES.md", content="VIRTUAL RULES")]

    overrides = piko.ResourceOverrides(
        context_files=drop_found,
        skills=[
            piko.Skill(
                name="greet", description="Greets people.", file_path=str(skill), base_dir=str(skill.parent)
            )
        ],
        prompt_templates=[
            piko.PromptTemplate(
                name="review", description="Review", content="Review $1 carefully", file_path="x"
            )
        ],
        system_prompt="You are a test assistant.",
        append_system_prompt=["APPENDED LINE"],
    )

    async def main() -> None:
        async with await piko.create_agent_session(
            cwd=sdk.project, model="mock/mock-1", resources=overrides
        ) as session:
            await session.prompt("/review main.py")
            await session.engine.reload()  # /reload keeps the overrides
            await session.prompt("again")

    run(main())
    for request in server.requests:
        system = _system(request)
        assert system.startswith("You are a test assistant.")
        assert "APPENDED LINE" in system and "VIRTUAL RULES" in system and "FOUND CONTEXT" not in system
        assert "greet" in system
    assert _last_user_text(server.requests[0]) == "Review main.py carefully"


def test_settings_dict_is_used_in_memory_and_no_file_is_written(sdk: SdkRig, run: Any) -> None:
    server = sdk.serve([text_turn("ok")])
    settings_file = sdk.agent_dir / "settings.json"
    settings_file.write_text(json.dumps({"defaultProvider": "mock", "defaultModel": "mock-1"}))
    project_settings = sdk.project / ".pi" / "settings.json"
    project_settings.parent.mkdir()
    project_settings.write_text(json.dumps({"defaultThinkingLevel": "high"}))
    before = settings_file.read_text()

    async def main() -> tuple[str, str, Any]:
        async with await piko.create_agent_session(
            cwd=sdk.project,
            settings={"defaultProvider": "mock", "defaultModel": "mock-2", "defaultThinkingLevel": "low"},
            session_manager=piko.SessionManager.in_memory(str(sdk.project)),
        ) as session:
            await session.prompt("hi")
            await session.set_model("mock/mock-1")  # saves defaultModel: in memory only
            assert session.model is not None
            return session.model.key, session.thinking_level, session.app.settings.get("defaultModel")

    key, level, saved = run(main())
    assert key == "mock/mock-1" and saved == "mock-1"
    assert level == "off"  # mock-1 does not reason
    assert server.requests[0]["body"]["model"] == "mock-2"  # from the dict, not the file
    assert settings_file.read_text() == before
    assert sdk.session_files() == []  # in-memory session manager


def test_an_empty_in_memory_session_works_in_the_cwd_option(
    sdk: SdkRig, run: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sdk.serve([tool_turn("read", {"path": "notes.txt"}), text_turn("read it")])
    (sdk.project / "notes.txt").write_text("project notes\n")
    elsewhere = sdk.root / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    async def main() -> tuple[str, list[Any]]:
        async with await piko.create_agent_session(
            cwd=sdk.project, model="mock/mock-1", session_manager=piko.SessionManager.in_memory()
        ) as session:
            await session.prompt("read the notes")
            return session.cwd, session.messages

    cwd, messages = run(main())
    assert cwd == str(sdk.project)
    result = next(m for m in messages if m.ROLE == "toolResult")
    assert "project notes" in result.content[0].text and not result.is_error


def test_extensions_reach_the_ui_the_program_gives(sdk: SdkRig, run: Any) -> None:
    sdk.serve([])
    shown: list[str] = []

    class RecordingUI(piko.NoOpUI):
        has_ui = True

        def notify(self, message: str, level: str = "info") -> None:
            shown.append(f"{level}: {message}")

    def extension(pi: piko.ExtensionAPI) -> None:
        pi.register_command("ping", handler=lambda args, ctx: ctx.ui.notify(f"pong {args} {ctx.has_ui}"))

    async def main() -> None:
        async with await piko.create_agent_session(
            cwd=sdk.project, model="mock/mock-1", extensions=[extension], ui=RecordingUI()
        ) as session:
            await session.prompt("/ping me")

    run(main())
    assert shown == ["info: pong me True"]
    assert sdk.server is not None and sdk.server.requests == []


def test_two_sessions_do_not_share_settings(sdk: SdkRig, run: Any) -> None:
    sdk.serve([])

    async def main() -> tuple[Any, Any]:
        one = await piko.create_agent_session(
            cwd=sdk.project, model="mock/mock-1", settings={"retry": {"maxRetries": 9}}
        )
        two = await piko.create_agent_session(
            cwd=sdk.project, model="mock/mock-1", settings={"retry": {"maxRetries": 1}}
        )
        async with one, two:
            one.app.settings.set_global("steeringMode", "all")
            return (
                (one.app.settings.get("retry.maxRetries"), one.app.settings.get("steeringMode")),
                (two.app.settings.get("retry.maxRetries"), two.app.settings.get("steeringMode")),
            )

    first, second = run(main())
    assert first == (9, "all")
    assert second == (1, "one-at-a-time")
