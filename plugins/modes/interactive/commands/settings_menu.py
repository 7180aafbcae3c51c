"""``/settings``: pi's settings menu; choosing a setting cycles its value or opens its choices.

Every change is written to the global ``settings.json`` at once (through the session where it
keeps state: thinking level, steering and follow-up modes, auto-compaction, auto-retry) and
applied where it shows (the theme through the extension UI, hidden thinking by a redraw).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import define, field

from piko.plugins.modes.interactive.command_api import InteractiveContext, PickItem
from piko.plugins.modes.interactive.commands.models import THINKING_DESCRIPTIONS

BOOL = ("true", "false")


@define(kw_only=True)
class Setting:
    """One row of the menu: how to read it, its values (cycled) or a submenu, how to write it."""

    id: str
    label: str
    description: str
    read: Callable[[InteractiveContext], str]
    write: Callable[[InteractiveContext, str], None]
    values: tuple[str, ...] = ()
    submenu: Callable[[InteractiveContext], Any] | None = None  # async: the chosen value or None
    choices_title: str = ""
    choices: Callable[[InteractiveContext], list[tuple[str, str]]] = field(default=lambda ctx: [])


def _flag(key: str, default: bool) -> Callable[[InteractiveContext], str]:
    def read(ctx: InteractiveContext) -> str:
        return "true" if bool(ctx.app.settings.get(key, default)) else "false"

    return read


def _text(key: str, default: Any) -> Callable[[InteractiveContext], str]:
    def read(ctx: InteractiveContext) -> str:
        value = ctx.app.settings.get(key, default)
        return str(default if value is None else value)

    return read


def _save(key: str, kind: str = "str") -> Callable[[InteractiveContext, str], None]:
    def write(ctx: InteractiveContext, value: str) -> None:
        converted: Any = value
        if kind == "bool":
            converted = value == "true"
        elif kind == "int":
            converted = int(value)
        ctx.app.settings.set_global(key, converted)

    return write


def _toggle(setting_id: str, label: str, description: str, key: str, *, default: bool) -> Setting:
    """A true/false setting stored under ``key`` of the global settings."""
    return Setting(
        id=setting_id,
        label=label,
        description=description,
        values=BOOL,
        read=_flag(key, default),
        write=_save(key, "bool"),
    )


def _write_hide_thinking(ctx: InteractiveContext, value: str) -> None:
    ctx.app.settings.set_global("hideThinkingBlock", value == "true")
    ctx.redraw_conversation()


def _theme_names(ctx: InteractiveContext) -> list[str]:
    """Built-in ``dark`` and ``light``, the themes the UI knows, and the loaded theme files."""
    names = ["dark", "light"]
    getter = getattr(ctx.ui, "get_all_themes", None)
    try:
        known = list(getter()) if callable(getter) else []
    except Exception:
        known = []
    for theme in known:
        name = (
            theme
            if isinstance(theme, str)
            else (theme.get("name") if isinstance(theme, dict) else getattr(theme, "name", None))
        )
        if isinstance(name, str) and name:
            names.append(name)
    resources = getattr(ctx.session, "resources", None)
    names.extend(t.name for t in getattr(resources, "themes", []) or [])
    return list(dict.fromkeys(names))


def _write_theme(ctx: InteractiveContext, name: str) -> None:
    ctx.app.settings.set_global("theme", name)
    setter = getattr(ctx.ui, "set_theme", None)
    result = setter(name) if callable(setter) else None
    failed = result is False or (isinstance(result, dict) and result.get("success") is False)
    if failed:
        reason = result.get("error") if isinstance(result, dict) else None
        ctx.show_error(
            f'Failed to load theme "{name}"'
            + (f": {reason}" if reason else "")
            + "\nFell back to dark theme."
        )


def _warning_flag(ctx: InteractiveContext) -> str:
    return "false" if ctx.app.settings.get("warnings.anthropicExtraUsage") is False else "true"


SETTINGS: list[Setting] = [
    Setting(
        id="autocompact",
        label="Auto-compact",
        description="Automatically compact context when it gets too large",
        values=BOOL,
        read=lambda ctx: "true" if ctx.session.compaction.enabled else "false",
        write=lambda ctx, v: ctx.session.compaction.set_enabled(v == "true"),
    ),
    Setting(
        id="auto-retry",
        label="Auto-retry",
        description="Retry automatically on transient errors (overload, rate limit, 5xx)",
        values=BOOL,
        read=lambda ctx: "true" if ctx.session.retry.enabled else "false",
        write=lambda ctx, v: ctx.session.retry.set_enabled(v == "true"),
    ),
    _toggle(
        "show-images", "Show images", "Render images inline in terminal", "terminal.showImages", default=True
    ),
    Setting(
        id="image-width-cells",
        label="Image width",
        description="Preferred inline image width in terminal cells",
        values=("60", "80", "120"),
        read=_text("terminal.imageWidthCells", 60),
        write=_save("terminal.imageWidthCells", "int"),
    ),
    _toggle(
        "auto-resize-images",
        "Auto-resize images",
        "Resize large images to 2000x2000 max for better model compatibility",
        "images.autoResize",
        default=True,
    ),
    _toggle(
        "block-images",
        "Block images",
        "Prevent images from being sent to LLM providers",
        "images.blockImages",
        default=False,
    ),
    _toggle(
        "skill-commands",
        "Skill commands",
        "Register skills as /skill:name commands",
        "enableSkillCommands",
        default=True,
    ),
    _toggle(
        "show-hardware-cursor",
        "Show hardware cursor",
        "Show the terminal cursor while still positioning it for IME support",
        "showHardwareCursor",
        default=False,
    ),
    Setting(
        id="editor-padding",
        label="Editor padding",
        description="Horizontal padding for input editor (0-3)",
        values=("0", "1", "2", "3"),
        read=_text("editorPaddingX", 0),
        write=_save("editorPaddingX", "int"),
    ),
    Setting(
        id="autocomplete-max-visible",
        label="Autocomplete max items",
        description="Max visible items in autocomplete dropdown (3-20)",
        values=("3", "5", "7", "10", "15", "20"),
        read=_text("autocompleteMaxVisible", 5),
        write=_save("autocompleteMaxVisible", "int"),
    ),
    _toggle(
        "clear-on-shrink",
        "Clear on shrink",
        "Clear empty rows when content shrinks (may cause flicker)",
        "terminal.clearOnShrink",
        default=False,
    ),
    _toggle(
        "terminal-progress",
        "Terminal progress",
        "Show OSC 9;4 progress indicators in the terminal tab bar",
        "terminal.showTerminalProgress",
        default=False,
    ),
    Setting(
        id="steering-mode",
        label="Steering mode",
        description=(
            "Enter while streaming queues steering messages. 'one-at-a-time': deliver one, wait for "
            "response. 'all': deliver all at once."
        ),
        values=("one-at-a-time", "all"),
        read=lambda ctx: str(ctx.session.queues.steering_mode),
        write=lambda ctx, v: ctx.session.queues.set_steering_mode(v),
    ),
    Setting(
        id="follow-up-mode",
        label="Follow-up mode",
        description=(
            "Alt+Enter queues follow-up messages until agent stops. 'one-at-a-time': deliver one, wait "
            "for response. 'all': deliver all at once."
        ),
        values=("one-at-a-time", "all"),
        read=lambda ctx: str(ctx.session.queues.follow_up_mode),
        write=lambda ctx, v: ctx.session.queues.set_follow_up_mode(v),
    ),
    Setting(
        id="hide-thinking",
        label="Hide thinking",
        description="Hide thinking blocks in assistant responses",
        values=BOOL,
        read=_flag("hideThinkingBlock", False),
        write=_write_hide_thinking,
    ),
    _toggle(
        "quiet-startup", "Quiet startup", "Disable verbose printing at startup", "quietStartup", default=False
    ),
    Setting(
        id="double-escape-action",
        label="Double-escape action",
        description="Action when pressing Escape twice with empty editor",
        values=("tree", "fork", "none"),
        read=_text("doubleEscapeAction", "tree"),
        write=_save("doubleEscapeAction"),
    ),
    Setting(
        id="tree-filter-mode",
        label="Tree filter mode",
        description="Default filter when opening /tree",
        values=("default", "no-tools", "user-only", "labeled-only", "all"),
        read=_text("treeFilterMode", "default"),
        write=_save("treeFilterMode"),
    ),
    Setting(
        id="warnings",
        label="Anthropic extra usage warning",
        description="Warn when Anthropic subscription auth may use paid extra usage",
        values=BOOL,
        read=_warning_flag,
        write=_save("warnings.anthropicExtraUsage", "bool"),
    ),
    Setting(
        id="thinking",
        label="Thinking level",
        description="Reasoning depth for thinking-capable models",
        read=lambda ctx: str(ctx.session.thinking_level),
        write=lambda ctx, v: ctx.session.set_thinking_level(v),
        choices_title="Thinking Level\nSelect reasoning depth for thinking-capable models",
        choices=lambda ctx: [
            (level, THINKING_DESCRIPTIONS.get(level, ""))
            for level in ctx.session.models.available_thinking_levels()
        ],
    ),
    Setting(
        id="theme",
        label="Theme",
        description="Color theme for the interface",
        read=lambda ctx: str(ctx.app.settings.get("theme") or "dark"),
        write=_write_theme,
        choices_title="Theme\nSelect color theme",
        choices=lambda ctx: [(name, "") for name in _theme_names(ctx)],
    ),
]


def next_value(values: tuple[str, ...], current: str) -> str:
    """The value after ``current`` (wrapping); the first one when ``current`` is not a value."""
    if current not in values:
        return values[0]
    return values[(values.index(current) + 1) % len(values)]


async def settings_command(ctx: InteractiveContext, args: str) -> None:
    """``/settings``: a menu of settings; Esc (cancel) closes it."""
    last: str | None = None
    while True:
        items = [
            PickItem(label=f"{s.label}: {s.read(ctx)}", value=s.id, detail=s.description) for s in SETTINGS
        ]
        chosen = await ctx.pick("Settings", items, initial=last)
        if chosen is None:
            return
        last = str(chosen)
        setting = next((s for s in SETTINGS if s.id == chosen), None)
        if setting is None:
            continue
        current = setting.read(ctx)
        if setting.values:
            value: str | None = next_value(setting.values, current)
        else:
            options = setting.choices(ctx)
            picked = await ctx.pick(
                setting.choices_title,
                [
                    PickItem(label=name, value=name, detail=detail, current=name == current)
                    for name, detail in options
                ],
                filterable=len(options) > 8,
                initial=current,
            )
            value = None if picked is None else str(picked)
        if value is None or (value == current and not setting.values):
            continue
        try:
            setting.write(ctx, value)
        except (OSError, ValueError) as exc:
            ctx.show_error(f"Could not change {setting.label}: {exc}")
