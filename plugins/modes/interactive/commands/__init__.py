"""The interactive mode's built-in slash commands (``/model``, ``/tree``, ``/resume``, ``/login``...).

:data:`BUILTIN_COMMANDS` is what the interactive mode offers; each handler gets the mode's
:class:`~piko.plugins.modes.interactive.command_api.InteractiveContext` and the argument text.
Handler modules are imported on first use, so starting the interactive mode stays fast.

Also for the interactive mode: :func:`describe_hotkeys` (the ``/hotkeys`` tables),
:func:`pick_session_at_startup` (``pi --resume``), :func:`model_completions` (``/model``
arguments, which need the session) and :func:`effective_bindings` (key bindings in effect).
"""

from __future__ import annotations

import importlib
from typing import Any

from piko.plugins.modes.interactive.command_api import BuiltinCommand
from piko.plugins.modes.interactive.command_api import CommandHandler
from piko.plugins.modes.interactive.command_api import InteractiveContext

_PACKAGE = __name__


def _lazy(target: str) -> CommandHandler:
    """A handler that imports ``module:function`` of this package when first run."""
    module_name, _, attr = target.partition(":")

    async def handler(ctx: InteractiveContext, args: str) -> None:
        module = importlib.import_module(f"{_PACKAGE}.{module_name}")
        await getattr(module, attr)(ctx, args)

    handler.__name__ = attr
    handler.__qualname__ = attr
    return handler


def _thinking_completions(prefix: str) -> list[str]:
    from piko.plugins.modes.interactive.commands.models import thinking_completions

    return thinking_completions(prefix)


# name, description, handler ("module:function" of this package), in the order /help shows them.
_COMMAND_TABLE: tuple[tuple[str, str, str], ...] = (
    ("settings", "Open settings menu", "settings_menu:settings_command"),
    ("model", "Select model (opens selector UI)", "models:model_command"),
    ("scoped-models", "Enable/disable models for Ctrl+P cycling", "models:scoped_models_command"),
    ("thinking", "Set the thinking level (opens selector UI)", "models:thinking_command"),
    ("export", "Export session (HTML default, or specify path: .html/.jsonl)", "session_info:export_command"),
    ("copy", "Copy last agent message to clipboard", "session_info:copy_command"),
    ("share", "Share session as a secret GitHub gist", "session_info:share_command"),
    ("name", "Set session display name", "session_info:name_command"),
    ("session", "Show session info and stats", "session_info:session_command"),
    ("changelog", "Show changelog entries", "changelog:changelog_command"),
    ("hotkeys", "Show all keyboard shortcuts", "hotkeys:hotkeys_command"),
    ("fork", "Create a new fork from a previous user message", "navigation:fork_command"),
    ("clone", "Duplicate the current session at the current position", "navigation:clone_command"),
    ("tree", "Navigate session tree (switch branches)", "navigation:tree_command"),
    ("login", "Configure provider authentication", "login:login_command"),
    ("logout", "Remove provider authentication", "login:logout_command"),
    ("new", "Start a new session", "navigation:new_command"),
    ("compact", "Manually compact the session context", "lifecycle:compact_command"),
    ("resume", "Resume a different session", "navigation:resume_command"),
    ("import", "Import and resume a session from a JSONL file", "navigation:import_command"),
    ("trust", "Save project trust decision for future sessions", "trust:trust_command"),
    ("reload", "Reload settings, context files, skills, prompts and themes", "lifecycle:reload_command"),
    ("quit", "Quit pi", "lifecycle:quit_command"),
)

# What a few commands have besides the table's three columns.
_COMMAND_EXTRAS: dict[str, dict[str, Any]] = {
    "thinking": {"get_argument_completions": _thinking_completions},
    "quit": {"aliases": ["exit"]},
}

BUILTIN_COMMANDS: list[BuiltinCommand] = [
    BuiltinCommand(name=name, description=description, handler=_lazy(target), **_COMMAND_EXTRAS.get(name, {}))
    for name, description, target in _COMMAND_TABLE
]


def describe_hotkeys(app: Any, bindings: dict[str, list[str]] | None = None) -> str:
    """The ``/hotkeys`` tables (markdown) for the bindings in effect."""
    from piko.plugins.modes.interactive.commands.hotkeys import describe_hotkeys as describe

    return describe(app, bindings)


def effective_bindings(app: Any) -> dict[str, list[str]]:
    """Action id -> keys: ``keybindings.json`` of ``app``'s agent dir over pi's defaults."""
    from piko.plugins.modes.interactive.commands.keybindings import effective_bindings as resolve

    return resolve(app)


async def pick_session_at_startup(app: Any, pick: Any = None, on_empty: Any = None) -> str | None:
    """``pi --resume``: the session file chosen (``None``: cancelled or none exists).

    ``pick`` is a selector like ``InteractiveContext.pick`` (default: a small terminal selector);
    ``on_empty(text)`` is told when no session exists at all (default: stderr).
    """
    from piko.plugins.modes.interactive.commands.session_picker import pick_session_at_startup as choose

    return await choose(app, pick, on_empty)


def model_completions(session: Any, prefix: str) -> list[str]:
    """``provider/id`` completions for ``/model <prefix>`` (scoped models first if any)."""
    from piko.plugins.modes.interactive.commands.models import model_completions as complete

    return complete(session, prefix)


__all__ = [
    "BUILTIN_COMMANDS",
    "describe_hotkeys",
    "effective_bindings",
    "model_completions",
    "pick_session_at_startup",
]
