"""The ``edit`` tool: exact (then fuzzy) text replacements in one file, with pi's numbered diff."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from typing import Any

from piko import hookimpl
from piko.data.messages import TextContent
from piko.data.messages import ToolResult
from piko.plugins.tools.builtin import object_schema
from piko.plugins.tools.builtin import param
from piko.plugins.tools.builtin import tool_definition

NAME = "edit"

DESCRIPTION = (
    "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, "
    "non-overlapping region of the original file. If two changes affect the same block or nearby lines, "
    "merge them into one edit instead of emitting overlapping edits. Do not include large unchanged "
    "regions just to connect distant changes."
)

PARAMETERS = object_schema(
    {
        "path": param("string", "Path to the file to edit (relative or absolute)"),
        "edits": {
            "type": "array",
            "items": object_schema(
                {
                    "oldText": param(
                        "string",
                        "Exact text for one targeted replacement. It must be unique in the original file "
                        "and must not overlap with any other edits[].oldText in the same call.",
                    ),
                    "newText": param("string", "Replacement text for this targeted edit."),
                },
                required=["oldText", "newText"],
                closed=True,
            ),
            "description": (
                "One or more targeted replacements. Each edit is matched against the original file, not "
                "incrementally. Do not include overlapping or nested edits. If two changes touch the same "
                "block or nearby lines, merge them into one edit instead."
            ),
        },
    },
    required=["path", "edits"],
    closed=True,
)

PROMPT_SNIPPET = (
    "Make precise file edits with exact text replacement, including multiple disjoint edits in one call"
)
PROMPT_GUIDELINES = [
    "Use edit for precise changes (edits[].oldText must match exactly)",
    "When changing multiple separate locations in one file, use one edit call with multiple entries in edits[] "
    "instead of multiple edit calls",
    "Each edits[].oldText is matched against the original file, not after earlier edits are applied. "
    "Do not emit overlapping or nested edits. Merge nearby changes into one edit.",
    "Keep edits[].oldText as small as possible while still being unique in the file. "
    "Do not pad with large unchanged regions.",
]

INVALID_INPUT = "Edit tool input is invalid. edits must contain at least one replacement."


def prepare_arguments(arguments: Any) -> Any:
    """pi's argument repair, run before schema validation.

    ``edits`` sent as a JSON string is parsed; the older top-level ``oldText``/``newText`` pair
    becomes one more entry of ``edits``. Anything else is returned unchanged.
    """
    if not isinstance(arguments, dict):
        return arguments
    args = dict(arguments)
    if isinstance(args.get("edits"), str):
        try:
            parsed = json.loads(args["edits"])
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            args["edits"] = parsed
    old_text, new_text = args.get("oldText"), args.get("newText")
    if not isinstance(old_text, str) or not isinstance(new_text, str):
        return args
    edits = list(args["edits"]) if isinstance(args.get("edits"), list) else []
    edits.append({"oldText": old_text, "newText": new_text})
    rest = {k: v for k, v in args.items() if k not in ("oldText", "newText")}
    return {**rest, "edits": edits}


def _validated_edits(params: dict[str, Any]) -> list[dict[str, str]]:
    edits = params.get("edits")
    if not isinstance(edits, list) or not edits:
        raise ValueError(INVALID_INPUT)
    for edit in edits:
        if (
            not isinstance(edit, dict)
            or not isinstance(edit.get("oldText"), str)
            or not isinstance(edit.get("newText"), str)
        ):
            raise ValueError("Edit tool input is invalid. Each edit needs oldText and newText strings.")
    return edits


async def execute(
    tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
) -> ToolResult:
    """Apply ``params["edits"]`` to ``params["path"]`` (relative to ``ctx.cwd``)."""
    import asyncio

    from piko.plugins.tools.abortable import abortable
    from piko.plugins.tools.abortable import check_aborted
    from piko.plugins.tools.file_fallback import write_with_fallback
    from piko.plugins.tools.mutation_queue import file_mutation_lock
    from piko.plugins.tools.node_compat import require_no_null_bytes
    from piko.plugins.tools.node_compat import to_utf8_bytes
    from piko.plugins.tools.paths import resolve_to_cwd

    params = prepare_arguments(params)
    edits = _validated_edits(params)
    path: str = params["path"]
    absolute = resolve_to_cwd(path, ctx.cwd)
    require_no_null_bytes(absolute)
    from piko.plugins.tools.file_fallback import workspace_text

    async with file_mutation_lock(absolute):
        check_aborted(signal)
        held = await workspace_text(ctx, absolute)
        planned = await abortable(
            asyncio.to_thread(
                _plan_edit, absolute, path, edits, _may_fall_back(ctx), lambda: check_aborted(signal), held
            ),
            signal,
        )
        final_text, base, new = planned
        await abortable(write_with_fallback(ctx, absolute, to_utf8_bytes(final_text), final_text), signal)
    diff, first_changed = await asyncio.to_thread(_diff, base, new)
    return ToolResult(
        content=[TextContent(text=f"Successfully replaced {len(edits)} block(s) in {path}.")],
        details={"diff": diff, "firstChangedLine": first_changed},
    )


def _may_fall_back(ctx: Any) -> bool:
    dispatcher = getattr(getattr(ctx, "app", None), "dispatcher", None)
    return dispatcher is not None and bool(dispatcher.has_handlers("file_write_fallback"))


def _diff(base: str, new: str) -> tuple[str, int | None]:
    from piko.plugins.tools.edit_diff import generate_diff

    return generate_diff(base, new)


def _plan_edit(
    absolute: str,
    path: str,
    edits: list[dict[str, str]],
    may_fall_back: bool,
    should_stop: Callable[[], None] | None = None,
    held: str | None = None,
) -> tuple[str, str, str]:
    """Read the file (or take ``held``, the workspace's text) and apply the edits:
    ``(text to write, base text, new text)`` (LF forms for the diff)."""
    from piko.lib.text import normalize_newlines
    from piko.plugins.tools.edit_diff import apply_edits
    from piko.plugins.tools.edit_diff import detect_line_ending
    from piko.plugins.tools.edit_diff import restore_line_endings
    from piko.plugins.tools.edit_diff import strip_bom
    from piko.plugins.tools.file_kinds import open_for_reading
    from piko.plugins.tools.node_compat import NodeFsError

    if held is not None:
        text = held
    else:
        _check_access(absolute, path, may_fall_back)
        with open_for_reading(absolute, verb="edit", should_stop=should_stop) as stream:
            try:
                text = stream.read().decode("utf-8", "replace")  # the bytes are dropped at once
            except OSError as exc:
                raise NodeFsError(exc, "read") from exc
            if stream.capped:  # writing back what was read would cut the file
                raise ValueError(f"Cannot edit {absolute}: it reports no size and may not end")
    bom, content = strip_bom(text)
    ending = detect_line_ending(content)
    base, new = apply_edits(normalize_newlines(content), edits, path)
    return bom + restore_line_endings(new, ending), base, new


def _check_access(absolute: str, path: str, may_fall_back: bool) -> None:
    """pi's ``access(path, R_OK | W_OK)``; a write denial passes when a write fallback may finish it."""
    from piko.plugins.tools.file_fallback import FALLBACK_ERRNOS
    from piko.plugins.tools.node_compat import errno_code

    if os.access(absolute, os.R_OK | os.W_OK):
        return
    code = _access_errno(absolute)
    if may_fall_back and code in FALLBACK_ERRNOS and os.access(absolute, os.R_OK):
        return
    raise ValueError(f"Could not edit file: {path}. Error code: {errno_code(code)}.")


def _access_errno(absolute: str) -> int:
    """The errno of ``access(path, R_OK | W_OK)`` (``os.access`` only says yes or no)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.access(os.fsencode(absolute), os.R_OK | os.W_OK) != 0:
            return ctypes.get_errno() or errno.EACCES
    except (OSError, AttributeError):
        pass
    try:
        os.stat(absolute)
    except OSError as exc:
        return exc.errno or errno.ENOENT
    return errno.EACCES


@hookimpl
def piko_register_tools(register: Any) -> None:
    register(tool_definition(__name__, default_active=True))
