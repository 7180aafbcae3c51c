"""/compact, /reload, /quit and /hotkeys."""

from __future__ import annotations

import json
from typing import Any

from icmd_harness import lines_of

from piko.plugins.modes.interactive.commands import BUILTIN_COMMANDS
from piko.plugins.modes.interactive.commands import describe_hotkeys
from piko.plugins.modes.interactive.commands.keybindings import capitalize_key
from piko.plugins.modes.interactive.commands.keybindings import conflicts
from piko.plugins.modes.interactive.commands.keybindings import load_user_bindings
from piko.plugins.modes.interactive.commands.keybindings import resolve_bindings


def reply(text: str) -> dict[str, Any]:
    return {"blocks": [{"text": text}]}


def test_compact_writes_a_compaction_entry(world, run) -> None:
    assert world  # the compaction strategy is the compaction.default plugin
    long = "words " + "." * 394  # 100 tokens by pi's estimate (4 characters a token)

    async def scenario() -> Any:
        session = await world.session(
            [reply(long), reply(long), reply("## Goal\nCOMPACTED SUMMARY")],
            settings={"compaction": {"keepRecentTokens": 150}},
        )
        events: list[Any] = []
        session.subscribe(events.append)
        ctx = world.context(session)
        await ctx.run("/compact")  # nothing yet
        await session.prompt("first " + long)
        await session.prompt("second " + long)
        await ctx.run("/compact focus on the words")
        return session, ctx, events

    session, ctx, events = run(scenario())
    assert ctx.ui.notices == [("warning", "Nothing to compact (no messages yet)")]
    compaction = [e for e in lines_of(session.session_file) if e["type"] == "compaction"]
    assert len(compaction) == 1 and "COMPACTED SUMMARY" in compaction[0]["summary"]
    assert "focus on the words" in json.dumps(world.requests()[-1])
    ends = [e for e in events if e.TYPE == "compaction_end"]
    assert ends and ends[-1].result["summary"] == compaction[0]["summary"]
    assert not ctx.texts("error")  # the outcome is the renderer's to show (compaction_end)


def test_compact_failure_is_left_to_the_event(world, run) -> None:
    async def scenario() -> Any:
        session = await world.session([reply("a"), reply("b"), {"status": 500, "repeat": True}],
                                      settings={"retry": {"enabled": False}})  # fmt: skip
        events: list[Any] = []
        session.subscribe(events.append)
        ctx = world.context(session)
        await session.prompt("one")
        await session.prompt("two")
        await ctx.run("/compact")
        return session, ctx, events

    session, _ctx, events = run(scenario())
    ends = [e for e in events if e.TYPE == "compaction_end"]
    assert ends and (ends[-1].error_message or ends[-1].aborted or ends[-1].result is None)
    assert not [e for e in lines_of(session.session_file) if e["type"] == "compaction"]


def test_reload_reads_settings_and_resources_again(world, run) -> None:
    async def scenario() -> Any:
        session, ctx = await world.session_with_context()
        (world.project / "AGENTS.md").write_text("Be brief.\n", encoding="utf-8")
        skill = world.agent_dir / "skills" / "greet"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            "---\nname: greet\ndescription: Say hello nicely\n---\nSay hello.\n", encoding="utf-8"
        )
        prompts = world.agent_dir / "prompts"
        prompts.mkdir()
        (prompts / "review.md").write_text(
            "---\ndescription: Review code\n---\nReview $1\n", encoding="utf-8"
        )
        (world.agent_dir / "settings.json").write_text(json.dumps({"quietStartup": True}), encoding="utf-8")
        await ctx.run("/reload")
        return session, ctx

    session, ctx = run(scenario())
    assert session.app.settings.get("quietStartup") is True
    assert [s.name for s in session.resources.skills] == ["greet"]
    assert "Be brief." in session.system_prompt
    listing = ctx.texts("show")[0]
    assert "[Context]\n  AGENTS.md" in listing
    assert "[Skills]\n  greet" in listing
    assert "[Prompts]\n  /review" in listing
    assert ctx.texts("info")[-1] == "Reloaded settings, context files, skills, prompts, themes"


def test_reload_waits_for_a_running_response(world, run) -> None:
    import asyncio

    async def scenario() -> Any:
        session, ctx = await world.session_with_context(
            [{"blocks": [{"text": "slow answer here"}], "delay_s": 0.2}]
        )
        task = asyncio.ensure_future(session.prompt("go"))
        while not session.is_streaming:
            await asyncio.sleep(0.01)
        await ctx.run("/reload")
        await task
        return ctx

    ctx = run(scenario())
    assert ctx.ui.notices == [("warning", "Wait for the current response to finish before reloading.")]


def test_quit_and_exit_request_leaving(world, run) -> None:
    async def scenario() -> Any:
        session = await world.session()
        first, second = world.context(session), world.context(session)
        await first.run("/quit")
        await second.run("/exit")
        return first, second

    first, second = run(scenario())
    assert first.exit_requested and second.exit_requested


def test_hotkeys_show_defaults_user_bindings_and_extension_shortcuts(world, run) -> None:
    (world.agent_dir / "keybindings.json").write_text(
        json.dumps({"cursorUp": ["up", "ctrl+p"], "app.model.select": "alt+m", "bogus": 3}), encoding="utf-8"
    )
    extension = world.root / "shortcut_ext.py"
    extension.write_text(
        "def activate(pi):\n"
        "    pi.register_shortcut('ctrl+shift+x', description='Do the thing', handler=lambda ctx: None)\n",
        encoding="utf-8",
    )

    async def scenario() -> Any:
        session = await world.session(options={})
        session.app.pm.load_extension_file(extension, session.app.make_extension_api)
        ctx = world.context(session)
        await ctx.run("/hotkeys")
        return session, ctx

    session, ctx = run(scenario())
    text = ctx.texts("show")[0]
    assert "Keyboard Shortcuts" in text
    table = describe_hotkeys(session.app)
    assert (
        "| `Up/Ctrl+P` / `Down` / `Left/Ctrl+B` / `Right/Ctrl+F` | Move cursor / browse history (Up when empty) |"
        in table
    )
    assert "| `Alt+M` | Open model selector |" in table
    assert "| `Shift+Enter` | New line |" in table
    assert "| `Ctrl+P` / `Shift+Ctrl+P` | Cycle models |" in table
    assert "**Extensions**" in table and "| `Ctrl+Shift+X` | Do the thing |" in table


def test_keybindings_file_rules(tmp_path) -> None:
    path = tmp_path / "keybindings.json"
    assert load_user_bindings(path) == {}
    path.write_text("[1, 2]")
    assert load_user_bindings(path) == {}
    path.write_text(
        json.dumps({"cursorUp": "ctrl+k", "tui.editor.cursorUp": ["alt+k"], "expandTools": "ctrl+e"})
    )
    user = load_user_bindings(path)
    assert user == {"tui.editor.cursorUp": ["alt+k"], "app.tools.expand": ["ctrl+e"]}
    resolved = resolve_bindings(user)
    assert resolved["tui.editor.cursorUp"] == ["alt+k"]
    assert resolved["tui.editor.cursorDown"] == ["down"]
    assert resolved["app.session.new"] == []
    assert conflicts({"app.tools.expand": ["ctrl+e"], "tui.editor.cursorLineEnd": ["ctrl+e"]}) == [
        ("ctrl+e", ["app.tools.expand", "tui.editor.cursorLineEnd"])
    ]
    assert capitalize_key("shift+ctrl+p/pageUp") == "Shift+Ctrl+P/PageUp"


def test_command_table() -> None:
    names = [c.name for c in BUILTIN_COMMANDS]
    assert len(names) == len(set(names))
    for expected in ("settings", "model", "scoped-models", "thinking", "export", "copy", "name", "session",
                     "hotkeys", "fork", "clone", "tree", "login", "logout", "new", "compact", "resume",
                     "reload", "quit", "import", "share", "changelog"):  # fmt: skip
        assert expected in names
    assert next(c for c in BUILTIN_COMMANDS if c.name == "quit").aliases == ["exit"]
    assert all(c.description for c in BUILTIN_COMMANDS)
