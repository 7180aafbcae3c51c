"""/settings: cycling values, submenus, and what is written to the global settings.json."""

from __future__ import annotations

from typing import Any

from icmd_harness import label

from piko.plugins.modes.interactive.commands.settings_menu import SETTINGS
from piko.plugins.modes.interactive.commands.settings_menu import next_value


def test_settings_cycle_and_write_to_the_global_file(world, run) -> None:
    async def scenario() -> Any:
        session, ctx = await world.session_with_context()
        ctx.picks.extend(
            [
                label("Auto-compact"),  # true -> false
                label("Auto-retry"),  # true -> false
                label("Steering mode"),  # one-at-a-time -> all
                label("Follow-up mode"),
                label("Hide thinking"),  # redraws
                label("Double-escape action"),  # tree -> fork
                label("Editor padding"),  # 0 -> 1
                label("Image width"),  # 60 -> 80
                label("Block images"),
                label("Quiet startup"),
                label("Tree filter mode"),
                label("Anthropic extra usage"),
                None,
            ]
        )
        await ctx.run("/settings")
        return session, ctx

    session, ctx = run(scenario())
    written = world.settings()
    assert written["compaction"] == {"enabled": False}
    assert written["retry"] == {"enabled": False}
    assert written["steeringMode"] == "all" and session.queues.steering_mode == "all"
    assert written["followUpMode"] == "all" and session.queues.follow_up_mode == "all"
    assert written["hideThinkingBlock"] is True
    assert written["doubleEscapeAction"] == "fork"
    assert written["editorPaddingX"] == 1
    assert written["terminal"] == {"imageWidthCells": 80}
    assert written["images"] == {"blockImages": True}
    assert written["quietStartup"] is True
    assert written["treeFilterMode"] == "no-tools"
    assert written["warnings"] == {"anthropicExtraUsage": False}
    assert session.compaction.enabled is False and session.retry.enabled is False
    assert ctx.redraws == 1
    # the menu shows the new values and keeps the cursor on the row just changed
    title, items, opts = ctx.pick_calls[1]
    assert title == "Settings"
    assert items[0].label == "Auto-compact: false"
    assert items[0].detail == "Automatically compact context when it gets too large"
    assert opts["initial"] == "autocompact"
    last = {i.value: i.label for i in ctx.pick_calls[-1][1]}
    assert last["editor-padding"] == "Editor padding: 1"
    assert last["steering-mode"] == "Steering mode: all"


def test_settings_thinking_and_theme_submenus(world, run) -> None:
    async def scenario() -> Any:
        session, ctx = await world.session_with_context(model="mock/mock-think")
        ctx.picks.extend(
            [
                label("Thinking level"),
                label("high"),
                label("Theme"),
                label("solarized"),
                label("Theme"),
                None,  # cancelled submenu: nothing changes
                None,
            ]
        )
        await ctx.run("/settings")
        return session, ctx

    session, ctx = run(scenario())
    assert session.thinking_level == "high"
    assert world.settings()["defaultThinkingLevel"] == "high"
    assert world.settings()["theme"] == "solarized"
    assert ctx.ui.themes_set == ["solarized"]
    thinking_title, thinking_items, _ = ctx.pick_calls[1]
    assert thinking_title.startswith("Thinking Level")
    assert [i.label for i in thinking_items if i.current] == ["medium"]
    theme_items = ctx.pick_calls[3][1]
    assert [i.label for i in theme_items] == ["dark", "light", "solarized"]
    assert [i.label for i in theme_items if i.current] == ["dark"]
    assert not ctx.texts("error")


def test_settings_theme_failure_is_reported(world, run) -> None:
    async def scenario() -> Any:
        _session, ctx = await world.session_with_context()
        ctx.ui.theme_result = {"success": False, "error": "bad colours"}
        ctx.picks.extend([label("Theme"), label("light"), None])
        await ctx.run("/settings")
        return ctx

    ctx = run(scenario())
    assert ctx.texts("error") == ['Failed to load theme "light": bad colours\nFell back to dark theme.']


def test_settings_that_cannot_be_written_lose_nothing(world, run) -> None:
    async def scenario() -> Any:
        session = await world.session()
        (world.agent_dir / "settings.json").write_text("{ not json", encoding="utf-8")
        session.app.settings.reload()
        ctx = world.context(session)
        ctx.picks.extend([label("Quiet startup"), None])
        await ctx.run("/settings")
        return ctx

    ctx = run(scenario())
    assert (world.agent_dir / "settings.json").read_text(encoding="utf-8") == "{ not json"
    [message] = ctx.texts("error")
    assert message.startswith("Could not change Quiet startup:") and "could not be read" in message


def test_every_setting_reads_and_cycles() -> None:
    ids = [s.id for s in SETTINGS]
    assert len(ids) == len(set(ids))
    for setting in SETTINGS:
        assert setting.values or setting.choices_title, setting.id
    assert next_value(("a", "b", "c"), "c") == "a"
    assert next_value(("a", "b"), "zzz") == "a"
