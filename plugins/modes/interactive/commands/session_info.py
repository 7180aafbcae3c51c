"""``/name``, ``/session``, ``/copy`` and ``/export``: naming, statistics, clipboard and export of the session."""

from __future__ import annotations

import asyncio
import datetime
import os
from pathlib import Path
from typing import Any

from piko.plugins.modes.interactive.command_api import InteractiveContext
from piko.plugins.modes.interactive.commands.common import error_text
from piko.plugins.modes.interactive.commands.common import format_int
from piko.plugins.modes.interactive.commands.common import path_argument
from piko.plugins.modes.interactive.commands.common import warn

EXPORT_UNAVAILABLE = "HTML export is not available: no plugin answers piko_export_html (see `pi plugins`)"


async def name_command(ctx: InteractiveContext, args: str) -> None:
    """``/name [name]``: set the session's display name, or show it."""
    from rich.text import Text

    name = args.strip()
    session = ctx.session
    if not name:
        current = session.get_session_name()
        if current:
            ctx.show(Text(f"Session name: {current}", style="dim"))
        else:
            warn(ctx, "Usage: /name <name>")
        return
    session.set_session_name(name)
    ctx.show(Text(f"Session name set: {name}", style="dim"))


def session_info_text(session: Any) -> Any:
    """pi 1.6's ``/session`` block (a rich ``Text``): name, file and id; message counts; tokens (the
    prompt split into cached and uncached once a cache was used); cache warming; and, once
    anything cost money or a cache was re-billed, the cost (by model where it is not only the
    selected one's) and the re-billed cache misses."""
    from rich.text import Text

    from piko.engine.stats import cache_waste
    from piko.engine.stats import usage_cost_breakdown
    from piko.plugins.modes.interactive.footer import format_tokens

    stats = session.get_session_stats()
    tokens = stats.tokens
    entries = session.session_manager.get_entries()
    text = Text()

    def heading(title: str) -> None:
        text.append(title, style="bold")
        text.append("\n")

    def row(label: str, value: Any, note: str = "", indent: str = "") -> None:
        text.append(f"{indent}{label}:", style="dim")
        text.append(f" {value}")
        if note:
            text.append(f" ({note})", style="dim")
        text.append("\n")

    heading("Session Info")
    text.append("\n")
    name = session.get_session_name()
    if name:
        row("Name", name)
    row("File", stats.session_file or "In-memory")
    row("ID", stats.session_id)
    text.append("\n")
    heading("Messages")
    row("Total", stats.total_messages)
    row("User", stats.user_messages)
    row("Assistant", stats.assistant_messages)
    row("Tools", f"{stats.tool_calls} calls, {stats.tool_results} results")
    text.append("\n")
    heading("Tokens")
    prompt = tokens.input + tokens.cache_read + tokens.cache_write
    row("Input", format_int(prompt))
    if prompt > 0 and (tokens.cache_read > 0 or tokens.cache_write > 0):
        row("Cached", format_int(tokens.cache_read), f"{tokens.cache_read / prompt * 100:.1f}%", indent="  ")
        written = f"{format_int(tokens.cache_write)} written to cache" if tokens.cache_write > 0 else ""
        row("Uncached", format_int(tokens.input + tokens.cache_write), written, indent="  ")
    row("Output", format_int(tokens.output))
    row("Total", format_int(tokens.total))
    text.append("\n")
    heading("Cache Warming")
    row("Mode", session.cache_warming_mode)
    row("Status", session.cache_warming_status)
    registry = session.model_registry

    def cache_read_price(provider: str, model_id: str) -> float:
        model = registry.find(provider, model_id)
        return float(model.cost.cache_read) if model is not None else 0.0

    waste = cache_waste(entries, cache_read_price)
    cost = float(stats.cost or 0)
    if cost > 0 or waste.missed_tokens > 0:
        text.append("\n")
        heading("Cost")
        text.append("Total:", style="dim")
        text.append(f" ${cost:.3f}")
        breakdown = usage_cost_breakdown(entries)
        model = session.model
        selected = f"{model.provider if model else None}/{model.id if model else None}"
        if len(breakdown) > 1 or (breakdown[0].key if breakdown else None) != selected:
            for part in breakdown:
                text.append("\n")
                text.append(f"  {part.key}:", style="dim")
                text.append(f" ${part.cost:.3f} ")
                text.append(f"({format_tokens(part.tokens)} tokens)", style="dim")
        if waste.missed_tokens > 0:
            misses = "1 miss" if waste.miss_count == 1 else f"{waste.miss_count} misses"
            detail = f"{format_int(waste.missed_tokens)} tokens, {misses}"
            text.append("\n")
            text.append("Cache Re-billed:", style="dim")
            if waste.missed_cost >= 0.0001:
                text.append(f" ${waste.missed_cost:.3f} ")
                text.append(f"({detail})", style="dim")
            else:
                text.append(f" {detail}")
    text.rstrip()
    return text


async def session_command(ctx: InteractiveContext, args: str) -> None:
    """``/session``: session information and statistics."""
    ctx.show(session_info_text(ctx.session))


async def copy_command(ctx: InteractiveContext, args: str) -> None:
    """``/copy``: the last assistant text to the clipboard."""
    from piko.plugins.modes.interactive.commands.clipboard import copy_to_clipboard

    text = ctx.session.get_last_assistant_text()
    if not text:
        ctx.show_error("No agent messages to copy yet.")
        return
    try:
        await asyncio.to_thread(copy_to_clipboard, text)
    except Exception as exc:
        ctx.show_error(error_text(exc))
        return
    ctx.show_info("Copied last agent message to clipboard")


def _absolute(path: str, cwd: str) -> str:
    expanded = os.path.expanduser(path)
    return expanded if os.path.isabs(expanded) else os.path.join(cwd, expanded)


def export_jsonl(session: Any, output_path: str | None = None) -> str:
    """The current branch as a linear session file (header, then entries re-chained); returns its path."""
    from piko.lib import jsonio
    from piko.sessions.entries import CURRENT_SESSION_VERSION

    manager = session.session_manager
    if output_path is None:
        stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        output_path = "session-" + stamp.replace(":", "-").replace(".", "-") + ".jsonl"
    path = Path(_absolute(output_path, session.cwd))
    path.parent.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    header = {
        "type": "session",
        "version": CURRENT_SESSION_VERSION,
        "id": manager.get_session_id(),
        "timestamp": now,
        "cwd": manager.get_cwd(),
    }
    lines = [jsonio.dumps(header)]
    previous: str | None = None
    for entry in manager.get_branch():
        data = dict(entry.to_json())
        data["parentId"] = previous
        lines.append(jsonio.dumps(data))
        previous = entry.id
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


async def export_html(ctx: InteractiveContext, output_path: str | None) -> str:
    """Ask the exporter plugin (``piko_export_html``) for an HTML page; returns the path written."""
    if not ctx.app.dispatcher.has_handlers("export_html"):
        raise RuntimeError(EXPORT_UNAVAILABLE)
    from piko.engine.export import export_running_session

    session = ctx.session
    return await export_running_session(session, _absolute(output_path, session.cwd) if output_path else None)


async def export_command(ctx: InteractiveContext, args: str) -> None:
    """``/export [path]``: HTML through the exporter plugin; a ``.jsonl`` path writes the branch as JSONL."""
    output = path_argument(args)
    try:
        if output and output.endswith(".jsonl"):
            written = await asyncio.to_thread(export_jsonl, ctx.session, output)
        else:
            written = await export_html(ctx, output)
    except Exception as exc:
        ctx.show_error(f"Failed to export session: {error_text(exc)}")
        return
    ctx.show_info(f"Session exported to: {written}")


SHARE_DESTINATIONS = ("auto", "gist", "radius")
DEFAULT_SHARE_VIEWER_URL = "https://pi.dev/session/"


def share_viewer_url(gist_id: str) -> str:
    """Where a shared gist is viewed (``PI_SHARE_VIEWER_URL`` overrides pi's viewer)."""
    return f"{os.environ.get('PI_SHARE_VIEWER_URL') or DEFAULT_SHARE_VIEWER_URL}#{gist_id}"


async def share_command(ctx: InteractiveContext, args: str) -> None:
    """``/share``: the session as a private GitHub gist (``gh``) and its viewer link.

    The target is the ``sessionShareDestination`` setting (pi's ``auto``, ``gist``, ``radius``):
    piko has no Radius login, so ``auto`` creates a gist and ``radius`` reports what is missing.
    """
    import shutil
    import tempfile

    destination = str(ctx.app.settings.get("sessionShareDestination") or "auto")
    if destination not in SHARE_DESTINATIONS:
        warn(ctx, f"Unknown sessionShareDestination {destination!r}; using a gist")
    if destination == "radius":
        ctx.show_error("Radius authentication is not configured. Run '/login radius' first.")
        return
    if shutil.which("gh") is None:
        ctx.show_error("GitHub CLI (gh) is not installed. Install it from https://cli.github.com/")
        return
    status = await asyncio.create_subprocess_exec(
        "gh", "auth", "status", stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    if await status.wait() != 0:
        ctx.show_error("GitHub CLI is not logged in. Run 'gh auth login' first.")
        return
    with tempfile.TemporaryDirectory(prefix="pi-share-") as folder:
        try:
            page = await export_html(ctx, os.path.join(folder, "session.html"))
        except Exception as exc:
            ctx.show_error(f"Failed to export session: {error_text(exc)}")
            return
        ctx.show_info("Creating gist...")
        process = await asyncio.create_subprocess_exec(
            "gh",
            "gist",
            "create",
            "--public=false",
            page,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await process.communicate()
    if process.returncode != 0:
        detail = err.decode("utf-8", "replace").strip() or "Unknown error"
        ctx.show_error(f"Failed to create gist: {detail}")
        return
    gist_url = out.decode("utf-8", "replace").strip()
    gist_id = gist_url.rstrip("/").split("/")[-1] if gist_url else ""
    if not gist_id:
        ctx.show_error("Failed to parse gist ID from gh output")
        return
    ctx.show_info(f"Share URL: {share_viewer_url(gist_id)}\nGist: {gist_url}")
