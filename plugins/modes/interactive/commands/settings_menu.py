"""``/settings``: pi's settings menu; choosing a setting cycles its value or opens its choices.

Every change is written to the global ``settings.json`` at once (through the session where it
keeps state: thinking level, steering and follow-up modes, auto-compaction, auto-retry) and
applied where it shows (the theme through the extension UI, hidden thinking by a redraw).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import define
from attrs import field

from piko.plugins.modes.interactive.command_api import InteractiveContext
from piko.plugins.modes.interactive.command_api import PickItem
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


def _cycled(
    setting_id: str,
    label: str,
    description: str,
    values: tuple[str, ...],
    read: Callable[[InteractiveContext], str],
    write: Callable[[InteractiveContext, str], None],
) -> Setting:
    """A setting that choosing moves to its next value."""
    return Setting(id=setting_id, label=label, description=description, values=values, read=read, write=write)


def _toggle(setting_id: str, label: str, description: str, key: str, *, default: bool) -> Setting:
    """A true/false setting stored under ``key`` of the global settings."""
    return _cycled(setting_id, label, description, BOOL, _flag(key, default), _save(key, "bool"))


def _choice(
    setting_id: str, label: str, description: str, key: str, values: tuple[str, ...], *, default: Any
) -> Setting:
    """A setting cycled through ``values``, stored under ``key`` (as a number when ``default`` is one)."""
    kind = "int" if isinstance(default, int) else "str"
    return _cycled(setting_id, label, description, values, _text(key, default), _save(key, kind))


def _session_switch(setting_id: str, label: str, description: str, part: str) -> Setting:
    """On/off of a part of the session that keeps its own state (``compaction``, ``retry``)."""

    def read(ctx: InteractiveContext) -> str:
        return "true" if getattr(ctx.session, part).enabled else "false"

    def write(ctx: InteractiveContext, value: str) -> None:
        getattr(ctx.session, part).set_enabled(value == "true")

    return _cycled(setting_id, label, description, BOOL, read, write)


def _queue_mode(setting_id: str, label: str, description: str, mode: str) -> Setting:
    """How a message queue of the session delivers (``mode``: ``steering_mode`` or ``follow_up_mode``)."""

    def read(ctx: InteractiveContext) -> str:
        return str(getattr(ctx.session.queues, mode))

    def write(ctx: InteractiveContext, value: str) -> None:
        getattr(ctx.session.queues, f"set_{mode}")(value)

    return _cycled(setting_id, label, description, ("one-at-a-time", "all"), read, write)


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


def _tui_mode(ctx: InteractiveContext) -> str:
    getter = getattr(ctx, "get_tui_mode", None)
    return str(getter()) if callable(getter) else str(ctx.app.settings.get("tuiMode") or "fullscreen")


def _write_tui_mode(ctx: InteractiveContext, value: str) -> None:
    """Saved as ``tuiMode`` and switched to at once."""
    ctx.app.settings.set_global("tuiMode", value)
    ctx.set_tui_mode(value)


SETTINGS: list[Setting] = [
    _session_switch(
        "autocompact", "Auto-compact", "Automatically compact context when it gets too large", "compaction"
    ),
    _session_switch(
        "auto-retry",
        "Auto-retry",
        "Retry automatically on transient errors (overload, rate limit, 5xx)",
        "retry",
    ),
    _toggle(
        "show-images", "Show images", "Render images inline in terminal", "terminal.showImages", default=True
    ),
    _choice(
        "image-width-cells",
        "Image width",
        "Preferred inline image width in terminal cells",
        "terminal.imageWidthCells",
        ("60", "80", "120"),
        default=60,
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
    _choice(
        "editor-padding",
        "Editor padding",
        "Horizontal padding for input editor (0-3)",
        "editorPaddingX",
        ("0", "1", "2", "3"),
        default=0,
    ),
    _choice(
        "autocomplete-max-visible",
        "Autocomplete max items",
        "Max visible items in autocomplete dropdown (3-20)",
        "autocompleteMaxVisible",
        ("3", "5", "7", "10", "15", "20"),
        default=5,
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
    _queue_mode(
        "steering-mode",
        "Steering mode",
        "Enter while streaming queues steering messages. 'one-at-a-time': deliver one, wait for "
        "response. 'all': deliver all at once.",
        "steering_mode",
    ),
    _queue_mode(
        "follow-up-mode",
        "Follow-up mode",
        "Alt+Enter queues follow-up messages until agent stops. 'one-at-a-time': deliver one, wait "
        "for response. 'all': deliver all at once.",
        "follow_up_mode",
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
    _choice(
        "double-escape-action",
        "Double-escape action",
        "Action when pressing Escape twice with empty editor",
        "doubleEscapeAction",
        ("tree", "fork", "none"),
        default="tree",
    ),
    _choice(
        "tree-filter-mode",
        "Tree filter mode",
        "Default filter when opening /tree",
        "treeFilterMode",
        ("default", "no-tools", "user-only", "labeled-only", "all"),
        default="default",
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
    Setting(
        id="tui-mode",
        label="TUI mode",
        description="Interface layout; regular mode uses the terminal's normal scrollback",
        values=("regular", "fullscreen"),
        read=lambda ctx: _tui_mode(ctx),
        write=_write_tui_mode,
    ),
    _choice(
        "fullscreen-exit-output",
        "Fullscreen exit output",
        "Print the transcript or only a session resume hint when exiting fullscreen mode",
        "fullscreenExitOutput",
        ("transcript", "resume-hint"),
        default="transcript",
    ),
    _choice(
        "fullscreen-scrollbar",
        "Fullscreen scrollbar",
        "Scrollbar behavior in fullscreen mode; has no effect in regular mode",
        "fullscreenScrollbar",
        ("auto", "always", "hidden"),
        default="auto",
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
