"""The ``write`` tool: create or overwrite a file (UTF-8), creating its parent directories."""

from __future__ import annotations

from typing import Any

from piko import hookimpl
from piko.data.messages import TextContent
from piko.data.messages import ToolResult
from piko.plugins.tools.builtin import object_schema
from piko.plugins.tools.builtin import param
from piko.plugins.tools.builtin import tool_definition

NAME = "write"

DESCRIPTION = (
    "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. "
    "Automatically creates parent directories."
)

PARAMETERS = object_schema(
    {
        "path": param("string", "Path to the file to write (relative or absolute)"),
        "content": param("string", "Content to write to the file"),
    },
    required=["path", "content"],
)

PROMPT_SNIPPET = "Create or overwrite files"
PROMPT_GUIDELINES = ["Use write only for new files or complete rewrites."]


async def execute(
    tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
) -> ToolResult:
    """Write ``params["content"]`` to ``params["path"]`` (relative to ``ctx.cwd``)."""
    from piko.lib.text import js_length
    from piko.plugins.tools.abortable import abortable
    from piko.plugins.tools.abortable import check_aborted
    from piko.plugins.tools.file_fallback import write_with_fallback
    from piko.plugins.tools.mutation_queue import file_mutation_lock
    from piko.plugins.tools.node_compat import require_no_null_bytes
    from piko.plugins.tools.node_compat import to_utf8_bytes
    from piko.plugins.tools.paths import resolve_to_cwd

    path: str = params["path"]
    content: str = params["content"]
    absolute = resolve_to_cwd(path, ctx.cwd)
    require_no_null_bytes(absolute)
    async with file_mutation_lock(absolute):
        check_aborted(signal)
        data = to_utf8_bytes(content)
        await abortable(write_with_fallback(ctx, absolute, data, content, make_parents=True), signal)
    # pi reports the string's length in UTF-16 code units and calls it bytes.
    return ToolResult(content=[TextContent(text=f"Successfully wrote {js_length(content)} bytes to {path}")])


@hookimpl
def piko_register_tools(register: Any) -> None:
    register(tool_definition(__name__, default_active=True))
