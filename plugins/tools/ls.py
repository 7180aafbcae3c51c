"""The ``ls`` tool: a directory's entries, sorted case-insensitively, directories marked with ``/``."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import Any

from piko import hookimpl
from piko.data.messages import TextContent
from piko.data.messages import ToolResult
from piko.plugins.tools.builtin import object_schema
from piko.plugins.tools.builtin import param
from piko.plugins.tools.builtin import tool_definition
from piko.plugins.tools.truncate import DEFAULT_MAX_BYTES

NAME = "ls"
DEFAULT_LIMIT = 500

DESCRIPTION = (
    "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. "
    f"Includes dotfiles. Output is truncated to {DEFAULT_LIMIT} entries or {DEFAULT_MAX_BYTES // 1024}KB "
    "(whichever is hit first)."
)

PARAMETERS = object_schema(
    {
        "path": param("string", "Directory to list (default: current directory)"),
        "limit": param("number", "Maximum number of entries to return (default: 500)"),
    }
)

PROMPT_SNIPPET = "List directory contents"


async def execute(
    tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
) -> ToolResult:
    """List ``params["path"]`` (default ``.``, relative to ``ctx.cwd``)."""
    import asyncio

    from piko.plugins.tools.abortable import abortable
    from piko.plugins.tools.abortable import check_aborted
    from piko.plugins.tools.paths import resolve_to_cwd

    check_aborted(signal)
    directory = resolve_to_cwd(params.get("path") or ".", ctx.cwd)
    limit = params.get("limit")
    if isinstance(limit, float) and limit.is_integer():
        limit = int(limit)  # JSON's 2.0 is JavaScript's 2
    return await abortable(
        asyncio.to_thread(
            list_directory,
            directory,
            DEFAULT_LIMIT if limit is None else limit,
            lambda: check_aborted(signal),
        ),
        signal,
    )


def list_directory(directory: str, limit: float, should_stop: Callable[[], None] | None = None) -> ToolResult:
    """The listing pi's ``ls`` gives for ``directory`` (blocking; ``should_stop`` raises to stop)."""
    from piko.lib.collation import locale_key
    from piko.plugins.tools.node_compat import js_string
    from piko.plugins.tools.truncate import listing_result

    if not os.path.exists(directory):
        raise ValueError(f"Path not found: {directory}")
    if not os.path.isdir(directory):
        raise ValueError(f"Not a directory: {directory}")
    try:
        names = os.listdir(directory)
    except OSError as exc:
        from piko.plugins.tools.node_compat import node_error_message

        raise ValueError(f"Cannot read directory: {node_error_message(exc, 'scandir', directory)}") from exc
    names.sort(key=lambda name: locale_key(name.lower()))
    entries: list[str] = []
    limit_reached = False
    for name in names:
        if should_stop is not None:
            should_stop()
        if len(entries) >= limit:
            limit_reached = True
            break
        try:
            info = os.stat(os.path.join(directory, name))
        except OSError:
            continue  # entries that cannot be examined (a dangling link) are left out
        entries.append(name + "/" if stat.S_ISDIR(info.st_mode) else name)
    if not entries:
        return ToolResult(content=[TextContent(text="(empty directory)")], details=None)
    notice = f"{js_string(limit)} entries limit reached. Use limit={js_string(limit * 2)} for more"
    return listing_result(entries, (notice, "entryLimitReached", limit) if limit_reached else None)


@hookimpl
def piko_register_tools(register: Any) -> None:
    register(tool_definition(__name__, default_active=False))
