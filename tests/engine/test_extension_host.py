"""What extensions get from ``ctx`` (``piko.engine.extension_host``): the session's records as the dicts they always got."""

from __future__ import annotations

import json
from typing import Any

PROBE = """
import json, os

def activate(pi):
    def save(name, value):
        path = os.path.join(ctx_dir[0], "probe.jsonl")
        with open(path, "a") as fh:
            fh.write(json.dumps({"name": name, "value": value}) + "\\n")

    ctx_dir = []

    def first_user_entry(ctx):
        for entry in ctx.session_manager.get_entries():
            message = getattr(entry, "message", None)
            if getattr(message, "ROLE", "") == "user":
                return entry.id

    async def probe(args, ctx):
        ctx_dir[:] = [ctx.cwd]
        if args == "state":
            save("usage", ctx.get_context_usage())
            save("idle", ctx.is_idle())
            save("pending", ctx.has_pending_messages())
        elif args == "compact":
            save("compact", await ctx.compact())
        elif args == "tree":
            save("tree", await ctx.navigate_tree(first_user_entry(ctx)))
        elif args == "fork":
            save("fork", await ctx.fork(first_user_entry(ctx)))
        elif args == "new":
            save("new", await ctx.new_session())
        elif args.startswith("switch "):
            save("switch", await ctx.switch_session(args[len("switch "):]))
        elif args == "quit":
            ctx.shutdown()

    pi.register_command("probe", handler=probe)
"""


def _probe(rig: Any) -> dict[str, Any]:
    lines = (rig.project / "probe.jsonl").read_text().splitlines()
    return {json.loads(line)["name"]: json.loads(line)["value"] for line in lines}


def test_ctx_answers_in_the_shapes_extensions_always_got(rig, run) -> None:
    ext = rig.write_extension("probe", PROBE)
    turns = ["first answer", "second answer", "## Goal\nSUMMARY", "## Goal\nTURN PREFIX"]

    async def scenario() -> Any:
        session = await rig.session(turns, extensions=[ext], settings={"compaction": {"keepRecentTokens": 1}})
        await session.prompt("first question")
        await session.prompt("second question")
        first_file = session.session_file
        for command in ("state", "compact", "tree", "fork", "new"):
            await session.prompt(f"/probe {command}")
        await session.prompt(f"/probe switch {first_file}")
        await session.prompt("/probe quit")
        return session

    session = run(scenario())
    probe = _probe(rig)
    usage = probe["usage"]
    assert list(usage) == ["tokens", "contextWindow", "percent"] and usage["contextWindow"] == 128000
    assert (probe["idle"], probe["pending"]) == (True, False)
    compact = probe["compact"]
    assert list(compact) == ["summary", "firstKeptEntryId", "tokensBefore", "details"]
    assert compact["summary"].startswith("## Goal\n") and isinstance(compact["tokensBefore"], int)
    assert probe["tree"] == {"cancelled": False, "editorText": "first question"}
    assert probe["fork"] == {"cancelled": False, "text": "first question"}
    assert probe["new"] == {"cancelled": False}
    assert probe["switch"] == {"cancelled": False}
    assert session.shutdown_requested is True


CANCEL = """
def activate(pi):
    pi.on("session_before_switch", lambda event, ctx: {"cancel": True})
    pi.on("session_before_fork", lambda event, ctx: {"cancel": True})
    pi.on("session_before_tree", lambda event, ctx: {"cancel": True})
"""


def test_cancelled_moves_keep_their_shapes(rig, run) -> None:
    probe_ext = rig.write_extension("probe", PROBE)
    cancel_ext = rig.write_extension("cancel", CANCEL)

    async def scenario() -> None:
        session = await rig.session(["an answer"], extensions=[probe_ext, cancel_ext])
        await session.prompt("a question")
        for command in ("tree", "fork", "new", f"switch {session.session_file}"):
            await session.prompt(f"/probe {command}")

    run(scenario())
    probe = _probe(rig)
    assert probe["tree"] == {"cancelled": True, "editorText": None}
    assert probe["fork"] == {"cancelled": True}
    assert probe["new"] == {"cancelled": True}
    assert probe["switch"] == {"cancelled": True}


def test_managed_timers_are_cleared_when_the_session_shuts_down(rig, run) -> None:
    async def scenario() -> tuple[int, int]:
        session = await rig.session([])
        session.ctx.set_interval(lambda: None, 60_000)
        session.ctx.set_timeout(lambda: None, 60_000)
        before = len(session.app.extension_timers)
        await session.shutdown()
        return before, len(session.app.extension_timers)

    assert run(scenario()) == (2, 0)


UNREGISTER = """
def activate(pi):
    pi.register_provider("openai", {"baseUrl": "http://127.0.0.1:9/v1"})

    def unregister(args, ctx):
        pi.unregister_provider("openai")
    pi.register_command("unreg", {"description": "give openai back", "handler": unregister})
"""


def test_unregister_provider_restores_the_built_in_it_replaced(rig, run) -> None:
    ext = rig.write_extension("gateway", UNREGISTER)

    async def scenario() -> tuple[str, str, int, int]:
        session = await rig.session([], extensions=[ext])
        registry = session.app.model_registry
        original_models = len(registry.models_of("openai"))
        during = registry.provider("openai").base_url
        await session.prompt("/unreg")
        after = registry.provider("openai")
        assert all(m.base_url.startswith("https://") for m in registry.models_of("openai"))
        return during, after.base_url, original_models, len(registry.models_of("openai"))

    during, after, before_count, after_count = run(scenario())
    assert during == "http://127.0.0.1:9/v1"
    assert after != during and after.startswith("https://")
    assert after_count == before_count > 0


FALLBACKS = """
seen = []

def activate(pi):
    pi.register_file_write_fallback(lambda request, ctx: False)
    pi.register_file_delete_fallback(lambda request, ctx: False)

    def at_shutdown(event, ctx):  # the fallbacks still serve the shutdown handlers
        seen.append(ctx.app.dispatcher.has_handlers("file_write_fallback"))
    pi.on("session_shutdown", at_shutdown)
"""


def test_file_fallbacks_are_removed_once_the_session_shut_down(rig, run) -> None:
    import sys

    ext = rig.write_extension("fallbacks", FALLBACKS)

    async def scenario() -> list[bool]:
        session = await rig.session([], extensions=[ext])
        dispatcher = session.app.dispatcher
        before = [
            dispatcher.has_handlers("file_write_fallback"),
            dispatcher.has_handlers("file_delete_fallback"),
        ]
        await session.shutdown()
        after = [
            dispatcher.has_handlers("file_write_fallback"),
            dispatcher.has_handlers("file_delete_fallback"),
        ]
        return before + after

    assert run(scenario()) == [True, True, False, False]
    assert sys.modules["piko_extension_fallbacks"].seen == [True]
