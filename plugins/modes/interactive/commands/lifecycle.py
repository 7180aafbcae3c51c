"""``/compact``, ``/reload`` and ``/quit``: compaction on demand, reloading resources, leaving."""

from __future__ import annotations

from typing import Any

from piko.plugins.modes.interactive.command_api import InteractiveContext
from piko.plugins.modes.interactive.commands.common import error_text
from piko.plugins.modes.interactive.commands.common import warn


async def compact_command(ctx: InteractiveContext, args: str) -> None:
    """``/compact [instructions]``: summarize older history now.

    Progress and the outcome (summary, failure, cancel) reach the interactive mode as
    ``compaction_start``/``compaction_end`` events, which it renders; this command adds nothing
    on top, as pi's does not.
    """
    session = ctx.session
    messages = [e for e in session.session_manager.get_entries() if e.type == "message"]
    if len(messages) < 2:
        warn(ctx, "Nothing to compact (no messages yet)")
        return
    instructions = args.strip() or None
    try:
        await session.compact(instructions)
    except Exception:
        return  # reported through the compaction_end event


def _compact_list(names: list[str], sort: bool = True) -> str:
    labels = [n.strip() for n in names if n.strip()]
    if sort:
        labels.sort(key=str.lower)
    return "  " + ", ".join(labels)


def _display_path(path: str, cwd: str) -> str:
    import os

    home = os.path.expanduser("~")
    if path.startswith(cwd + os.sep):
        return path[len(cwd) + 1 :]
    if home and home != "~" and path.startswith(home):
        return "~" + path[len(home) :]
    return path


def loaded_resources_text(app: Any, session: Any) -> Any:
    """pi's listing of what is loaded: ``[Context]``, ``[Skills]``, ``[Prompts]``, ``[Extensions]``,
    ``[Themes]`` (compact lists), then resource diagnostics (a rich ``Text``)."""
    from rich.text import Text

    resources = session.resources
    cwd = str(session.cwd)
    text = Text()

    def section(name: str, body: str, style: str = "bold") -> None:
        text.append(f"[{name}]", style=style)
        text.append("\n")
        text.append(body, style="dim")
        text.append("\n\n")

    if resources.context_files:
        section(
            "Context",
            _compact_list([_display_path(f.path, cwd) for f in resources.context_files], sort=False),
        )
    if resources.skills:
        section("Skills", _compact_list([s.name for s in resources.skills]))
    if resources.prompt_templates:
        section("Prompts", _compact_list([f"/{t.name}" for t in resources.prompt_templates]))
    extensions = _extension_names(app)
    if extensions:
        section("Extensions", _compact_list(extensions))
    custom_themes = [t for t in resources.themes if t.path]
    if custom_themes:
        section("Themes", _compact_list([t.name for t in custom_themes]))
    if resources.diagnostics:
        text.append("[Resource issues]", style="yellow")
        text.append("\n")
        text.append("\n".join(f"  {d}" for d in resources.diagnostics), style="yellow")
        text.append("\n")
    text.rstrip()
    return text


def _extension_names(app: Any) -> list[str]:
    """Extension files loaded (their file or folder names)."""
    import os

    names = []
    for info in getattr(app.pm, "infos", {}).values():
        path = getattr(info, "path", None)
        if path and info.origin == "file" and not info.blocked and not info.error:
            names.append(os.path.basename(str(path).rstrip(os.sep)))
    return names


async def reload_command(ctx: InteractiveContext, args: str) -> None:
    """``/reload``: read settings and resources again (context files, skills, prompts, themes)."""
    session = ctx.session
    if session.is_streaming:
        warn(ctx, "Wait for the current response to finish before reloading.")
        return
    if session.compaction.running:
        warn(ctx, "Wait for compaction to finish before reloading.")
        return
    ctx.show_info("Reloading settings, context files, skills, prompts, themes...")
    try:
        ctx.app.settings.reload()
        await session.reload()
    except Exception as exc:
        ctx.show_error(f"Reload failed: {error_text(exc)}")
        return
    listing = loaded_resources_text(ctx.app, session)
    if listing.plain:
        ctx.show(listing)
    for diagnostic in ctx.app.settings.diagnostics:
        warn(ctx, diagnostic)
    ctx.show_info("Reloaded settings, context files, skills, prompts, themes")


async def quit_command(ctx: InteractiveContext, args: str) -> None:
    """``/quit`` (``/exit``): leave the interactive mode."""
    ctx.request_exit()
