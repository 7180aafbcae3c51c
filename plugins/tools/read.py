"""The ``read`` tool: a text file's lines (offset/limit, pi's truncation notices) or an image."""

from __future__ import annotations

import errno
import math
import os
from collections.abc import Callable
from typing import Any

from attrs import define

from piko import hookimpl
from piko.data.messages import ImageContent
from piko.data.messages import TextContent
from piko.data.messages import ToolResult
from piko.plugins.tools.builtin import object_schema
from piko.plugins.tools.builtin import param
from piko.plugins.tools.builtin import tool_definition
from piko.plugins.tools.truncate import DEFAULT_MAX_BYTES
from piko.plugins.tools.truncate import DEFAULT_MAX_LINES
from piko.plugins.tools.truncate import TruncationResult
from piko.plugins.tools.truncate import format_size
from piko.plugins.tools.truncate import truncation_result

NAME = "read"

DESCRIPTION = (
    "Read the contents of a file. Supports text files and images (jpg, png, gif, webp). "
    "Images are sent as attachments. For text files, output is truncated to "
    f"{DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first). "
    "Use offset/limit for large files. When you need the full file, continue with offset until complete."
)

PARAMETERS = object_schema(
    {
        "path": param("string", "Path to the file to read (relative or absolute)"),
        "offset": param("number", "Line number to start reading from (1-indexed)"),
        "limit": param("number", "Maximum number of lines to read"),
    },
    required=["path"],
)

PROMPT_SNIPPET = "Read file contents"
PROMPT_GUIDELINES = ["Use read to examine files instead of cat or sed."]

NON_VISION_NOTE = "[Current model does not support images. The image will be omitted from this request.]"


async def execute(
    tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
) -> ToolResult:
    """Read ``params["path"]`` (relative to ``ctx.cwd``): a text window with pi's notices, or an image."""
    import asyncio

    from piko.plugins.tools.abortable import abortable
    from piko.plugins.tools.abortable import check_aborted
    from piko.plugins.tools.node_compat import js_string
    from piko.plugins.tools.node_compat import require_no_null_bytes
    from piko.plugins.tools.paths import resolve_read_path

    check_aborted(signal)
    path = params["path"]
    limit = params.get("limit")
    if limit is not None and limit < 0:
        raise ValueError(f"Invalid limit {js_string(limit)}: the number of lines to read cannot be negative")
    absolute = resolve_read_path(path, ctx.cwd)
    require_no_null_bytes(absolute)
    options = _ReadOptions(
        offset=params.get("offset"),
        limit=limit,
        auto_resize=_setting(ctx, "images.autoResize", True) is not False,
        image_note=_non_vision_note(ctx),
        should_stop=lambda: check_aborted(signal),
    )
    from piko.plugins.tools.file_fallback import workspace_text

    held = await workspace_text(ctx, absolute)
    if held is not None:  # the editor's text, unsaved changes included
        import io

        return _read_text(io.BytesIO(held.encode("utf-8")), path, options)
    return await abortable(asyncio.to_thread(read_file, absolute, path, options), signal)


@define(kw_only=True)
class _ReadOptions:
    """What one read was asked for, and how its images are sent."""

    offset: Any
    limit: Any
    auto_resize: bool
    image_note: str | None
    should_stop: Callable[[], None] | None = None


def _setting(ctx: Any, key: str, default: Any) -> Any:
    settings = getattr(getattr(ctx, "app", None), "settings", None)
    if settings is None:
        return default
    value = settings.get(key)
    return default if value is None else value


def _non_vision_note(ctx: Any) -> str | None:
    model = getattr(ctx, "model", None)
    if model is None:
        return None
    inputs = getattr(model, "input", None) or []
    return None if "image" in inputs else NON_VISION_NOTE


# ---------------------------------------------------------------------------
# The blocking part (runs in a thread)
# ---------------------------------------------------------------------------


def read_file(absolute: str, path: str, options: _ReadOptions) -> ToolResult:
    """Read ``absolute`` (``path`` is how the model named it, used in notices)."""
    from piko.lib.images import SNIFF_BYTES
    from piko.lib.images import detect_image_mime_type
    from piko.plugins.tools.file_kinds import open_for_reading
    from piko.plugins.tools.node_compat import NodeFsError

    _check_readable(absolute)
    with open_for_reading(absolute, should_stop=options.should_stop) as stream:
        try:
            head = stream.read(SNIFF_BYTES)
        except OSError as exc:
            raise NodeFsError(exc, "read") from exc
        mime_type = detect_image_mime_type(head)
        if mime_type is not None:
            return _read_image(head + stream.read(), mime_type, options)
        stream.seek(0)
        result = _read_text(stream, path, options)
        if stream.capped:
            _add_cap_notice(result)
        return result


def _add_cap_notice(result: ToolResult) -> None:
    """Say that a file without a real size (``/proc``, ``/sys``) was read only up to the cap."""
    from piko.plugins.tools.file_kinds import PSEUDO_FILE_MAX_BYTES

    block = result.content[0]
    assert isinstance(block, TextContent)
    block.text += (
        f"\n\n[Read stopped after {format_size(PSEUDO_FILE_MAX_BYTES)}: "
        "this file reports no size and may not end]"
    )


def _check_readable(absolute: str) -> None:
    """pi's ``access(path, R_OK)``: a missing or unreadable file fails with Node's message."""
    from piko.plugins.tools.node_compat import NodeFsError

    if os.access(absolute, os.R_OK):
        return
    try:
        os.stat(absolute)
    except OSError as exc:
        raise NodeFsError(exc, "access", absolute) from exc
    denied = PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    raise NodeFsError(denied, "access", absolute)


def _read_image(data: bytes, mime_type: str, options: _ReadOptions) -> ToolResult:
    import base64

    from piko.lib.images import IMAGE_OMITTED_NOTE
    from piko.lib.images import format_dimension_note
    from piko.lib.images import resize_image

    notes: list[str]
    blocks: list[Any] = []
    if options.auto_resize:
        resized = resize_image(data, mime_type)
        if resized is None:
            notes = [f"Read image file [{mime_type}]", IMAGE_OMITTED_NOTE]
        else:
            notes = [f"Read image file [{resized.mime_type}]"]
            dimension_note = format_dimension_note(resized)
            if dimension_note:
                notes.append(dimension_note)
            blocks.append(ImageContent(data=resized.data, mime_type=resized.mime_type))
    else:
        notes = [f"Read image file [{mime_type}]"]
        blocks.append(ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime_type))
    if options.image_note:
        notes.append(options.image_note)
    return ToolResult(content=[TextContent(text="\n".join(notes)), *blocks], details=None)


def _read_text(stream: Any, path: str, options: _ReadOptions) -> ToolResult:
    from piko.plugins.tools.line_reader import count_lines
    from piko.plugins.tools.line_reader import read_line_window
    from piko.plugins.tools.node_compat import js_string

    offset, limit = options.offset, options.limit
    # pi's arithmetic, fractions and all: a falsy offset starts at the top.
    start_line: float = max(0, offset - 1) if offset else 0
    start_display = start_line + 1
    first = math.trunc(start_line)
    stop: int | None = None
    if limit is not None:
        stop = math.trunc(start_line + limit)
        if stop < 0:  # a slice end counted back from the end of the file
            stop = max(count_lines(stream) + stop, 0)
            stream.seek(0)
    window = read_line_window(stream, first, stop, keep_lines=DEFAULT_MAX_LINES, keep_bytes=DEFAULT_MAX_BYTES)
    total_lines = window.total_lines
    if window.start_beyond_end or start_line >= total_lines:
        raise ValueError(f"Offset {js_string(offset)} is beyond end of file ({total_lines} lines total)")
    truncation = _truncate_window(window)
    details: dict[str, Any] | None = None
    if truncation.first_line_exceeds_limit:
        line_size = format_size(window.first_line_bytes)
        text = (
            f"[Line {js_string(start_display)} is {line_size}, exceeds {format_size(DEFAULT_MAX_BYTES)} limit. "
            f"Use bash: sed -n '{js_string(start_display)}p' {path} | head -c {DEFAULT_MAX_BYTES}]"
        )
        details = {"truncation": truncation.to_details()}
    elif truncation.truncated:
        end_display = start_display + truncation.output_lines - 1
        shown = f"{js_string(start_display)}-{js_string(end_display)} of {total_lines}"
        next_offset = js_string(end_display + 1)
        if truncation.truncated_by == "lines":
            notice = f"[Showing lines {shown}. Use offset={next_offset} to continue.]"
        else:
            notice = f"[Showing lines {shown} ({format_size(DEFAULT_MAX_BYTES)} limit). Use offset={next_offset} to continue.]"
        text = f"{truncation.content}\n\n{notice}"
        details = {"truncation": truncation.to_details()}
    elif limit is not None and min(start_line + limit, total_lines) < total_lines:
        end_line = start_line + limit
        remaining = js_string(total_lines - end_line)
        text = f"{truncation.content}\n\n[{remaining} more lines in file. Use offset={js_string(end_line + 1)} to continue.]"
    else:
        text = truncation.content
    return ToolResult(content=[TextContent(text=text)], details=details)


def _truncate_window(window: Any) -> TruncationResult:
    """What ``truncate_head`` gives for the window's text, computed from the streamed window."""
    totals, limits = (window.window_lines, window.window_bytes), (DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)
    if totals[0] <= DEFAULT_MAX_LINES and totals[1] <= DEFAULT_MAX_BYTES:
        return truncation_result(window.lines, None, totals, limits)
    if window.first_line_bytes > DEFAULT_MAX_BYTES:
        return truncation_result([], "bytes", totals, limits, first_line_exceeds_limit=True)
    truncated_by = "lines" if len(window.lines) >= DEFAULT_MAX_LINES else "bytes"
    return truncation_result(window.lines, truncated_by, totals, limits)


@hookimpl
def piko_register_tools(register: Any) -> None:
    register(tool_definition(__name__, default_active=True))
