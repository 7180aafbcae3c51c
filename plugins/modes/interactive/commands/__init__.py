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

from piko.plugins.modes.interactive.command_api import BuiltinCommand, CommandHandler, InteractiveContext

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


BUILTIN_COMMANDS: list[BuiltinCommand] = [
    BuiltinCommand(
        name="settings", description="Open settings menu", handler=_lazy("settings_menu:settings_command")
    ),
    BuiltinCommand(
        name="model", description="Select model (opens selector UI)", handler=_lazy("models:model_command")
    ),
    BuiltinCommand(
        name="scoped-models",
        description="Enable/disable models for Ctrl+P cycling",
        handler=_lazy("models:scoped_models_command"),
    ),
    BuiltinCommand(
        name="thinking",
        description="Set the thinking level (opens selector UI)",
        handler=_lazy("models:thinking_command"),
        get_argument_completions=_thinking_completions,
    ),
    BuiltinCommand(
        name="export",
        description="Export session (HTML default, or specify path: .html/.jsonl)",
        handler=_lazy("session_info:export_command"),
    ),
    BuiltinCommand(
        name="copy",
        description="Copy last agent message to clipboard",
        handler=_lazy("session_info:copy_command"),
    ),
    BuiltinCommand(
        name="share",
        description="Share session as a secret GitHub gist",
        handler=_lazy("session_info:share_command"),
    ),
    BuiltinCommand(
        name="name", description="Set session display name", handler=_lazy("session_info:name_command")
    ),
    BuiltinCommand(
        name="session",
        description="Show session info and stats",
        handler=_lazy("session_info:session_command"),
    ),
    BuiltinCommand(
        name="changelog", description="Show changelog entries", handler=_lazy("changelog:changelog_command")
    ),
    BuiltinCommand(
        name="hotkeys", description="Show all keyboard shortcuts", handler=_lazy("hotkeys:hotkeys_command")
    ),
    BuiltinCommand(
        name="fork",
        description="Create a new fork from a previous user message",
        handler=_lazy("navigation:fork_command"),
    ),
    BuiltinCommand(
        name="clone",
        description="Duplicate the current session at the current position",
        handler=_lazy("navigation:clone_command"),
    ),
    BuiltinCommand(
        name="tree",
        description="Navigate session tree (switch branches)",
        handler=_lazy("navigation:tree_command"),
    ),
    BuiltinCommand(
        name="login", description="Configure provider authentication", handler=_lazy("login:login_command")
    ),
    BuiltinCommand(
        name="logout", description="Remove provider authentication", handler=_lazy("login:logout_command")
    ),
    BuiltinCommand(name="new", description="Start a new session", handler=_lazy("navigation:new_command")),
    BuiltinCommand(
        name="compact",
        description="Manually compact the session context",
        handler=_lazy("lifecycle:compact_command"),
    ),
    BuiltinCommand(
        name="resume", description="Resume a different session", handler=_lazy("navigation:resume_command")
    ),
    BuiltinCommand(
        name="import",
        description="Import and resume a session from a JSONL file",
        handler=_lazy("navigation:import_command"),
    ),
    BuiltinCommand(
        name="trust",
        description="Save project trust decision for future sessions",
        handler=_lazy("trust:trust_command"),
    ),
    BuiltinCommand(
        name="reload",
        description="Reload settings, context files, skills, prompts and themes",
        handler=_lazy("lifecycle:reload_command"),
    ),
    BuiltinCommand(
        name="quit", description="Quit pi", handler=_lazy("lifecycle:quit_command"), aliases=["exit"]
    ),
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
