"""The ``grep`` tool: search file contents with ripgrep, pi's output format and limits."""

from __future__ import annotations

import math
import os
from typing import Any

from piko import hookimpl
from piko.data.messages import TextContent
from piko.data.messages import ToolResult
from piko.lib.text import normalize_newlines
from piko.plugins.tools.builtin import object_schema
from piko.plugins.tools.builtin import param
from piko.plugins.tools.builtin import tool_definition
from piko.plugins.tools.truncate import DEFAULT_MAX_BYTES
from piko.plugins.tools.truncate import GREP_MAX_LINE_LENGTH

NAME = "grep"
DEFAULT_LIMIT = 100
# pi's byte-only truncation passes Number.MAX_SAFE_INTEGER as the line limit

DESCRIPTION = (
    "Search file contents for a pattern. Returns matching lines with file paths and line numbers. "
    f"Respects .gitignore. Output is truncated to {DEFAULT_LIMIT} matches or {DEFAULT_MAX_BYTES // 1024}KB "
    f"(whichever is hit first). Long lines are truncated to {GREP_MAX_LINE_LENGTH} chars."
)

PARAMETERS = object_schema(
    {
        "pattern": param("string", "Search pattern (regex or literal string)"),
        "path": param("string", "Directory or file to search (default: current directory)"),
        "glob": param("string", "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"),
        "ignoreCase": param("boolean", "Case-insensitive search (default: false)"),
        "literal": param("boolean", "Treat pattern as literal string instead of regex (default: false)"),
        "context": param("number", "Number of lines to show before and after each match (default: 0)"),
        "limit": param("number", "Maximum number of matches to return (default: 100)"),
    },
    required=["pattern"],
)

PROMPT_SNIPPET = "Search file contents for patterns (respects .gitignore)"

_MATCH_PREFIX = b'{"type":"match"'


class GrepToolError(Exception):
    """A failed search; the message is pi's error text."""


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _decode_field(field: Any) -> str | None:
    """rg's ``{"text": ...}`` or ``{"bytes": <base64>}`` (for data that is not UTF-8)."""
    if not isinstance(field, dict):
        return None
    text = field.get("text")
    if isinstance(text, str):
        return text
    raw = field.get("bytes")
    if isinstance(raw, str):
        import base64

        return base64.b64decode(raw).decode("utf-8", "replace")
    return None


def rg_args(
    pattern: str, search_path: str, *, glob: str | None, ignore_case: bool, literal: bool
) -> list[str]:
    """The rg command line: JSON events, dotfiles, .gitignore with or without a git repo, never ``.git/``."""
    args = ["--json", "--line-number", "--color=never", "--hidden", "--no-require-git"]
    if ignore_case:
        args.append("--ignore-case")
    if literal:
        args.append("--fixed-strings")
    if glob:
        args += ["--glob", glob]
    args += ["--glob", "!.git", "--", pattern, search_path]
    return args


class _FileLines:
    """Lines of the files that have matches, read once each (for context blocks)."""

    def __init__(self) -> None:
        self._cache: dict[str, list[str]] = {}

    def get(self, path: str) -> list[str]:
        lines = self._cache.get(path)
        if lines is None:
            try:
                with open(path, encoding="utf-8", errors="replace", newline="") as handle:
                    content = handle.read()
                lines = normalize_newlines(content).split("\n")
            except OSError:
                lines = []
            self._cache[path] = lines
        return lines


async def execute(
    tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
) -> ToolResult:
    """Search with rg; return pi's ``path:line: text`` listing with its notices and details."""
    from piko.lib.jsonio import loads
    from piko.plugins.tools.ripgrep import run_rg
    from piko.plugins.tools.ripgrep import start_search
    from piko.plugins.tools.truncate import listing_result
    from piko.plugins.tools.truncate import truncate_line

    pattern, search_path = start_search(params, signal, ctx.cwd, GrepToolError)
    try:
        is_directory = os.path.isdir(search_path) if os.path.exists(search_path) else None
    except OSError:
        is_directory = None
    if is_directory is None:
        raise GrepToolError(f"Path not found: {search_path}")
    if not is_directory:
        _refuse_special_file(search_path)
    context_param = params.get("context")
    context = math.floor(context_param) if context_param and context_param > 0 else 0
    limit_param = params.get("limit")
    limit = max(1, limit_param if limit_param is not None else DEFAULT_LIMIT)
    if isinstance(limit, float) and limit.is_integer():
        limit = int(limit)

    prefix = search_path.rstrip("/") + "/"
    prefix_len = len(prefix)

    def format_path(file_path: str) -> str:
        if is_directory and file_path.startswith(prefix):
            return file_path[prefix_len:]
        if is_directory:
            relative = os.path.relpath(file_path, search_path)
            if relative != "." and not relative.startswith(".."):
                return relative.replace(os.sep, "/")
        return os.path.basename(file_path)

    matches: list[tuple[str, int, str | None]] = []
    match_count = 0
    match_limit_reached = False

    def on_output(block: bytes) -> bool:
        nonlocal match_count, match_limit_reached
        for line in block.split(b"\n"):
            if not line.startswith(_MATCH_PREFIX):
                continue
            try:
                data = loads(line)["data"]
            except (ValueError, KeyError, TypeError):
                continue
            match_count += 1
            file_path = _decode_field(data.get("path"))
            line_number = data.get("line_number")
            if file_path and isinstance(line_number, int):
                matches.append((file_path, line_number, _decode_field(data.get("lines"))))
            if match_count >= limit:
                match_limit_reached = True
                return True
        return False

    args = rg_args(
        pattern,
        search_path,
        glob=params.get("glob") or None,
        ignore_case=bool(params.get("ignoreCase")),
        literal=bool(params.get("literal")),
    )
    run = await run_rg(args, on_output, signal=signal)
    if run.aborted or (signal is not None and signal.aborted):
        raise GrepToolError("Operation aborted")
    if not run.stopped and run.code not in (0, 1) and match_count == 0:
        raise GrepToolError(run.stderr.strip() or f"ripgrep exited with code {run.code}")
    if match_count == 0:
        return ToolResult(content=[TextContent(text="No matches found")], details=None)

    # rg searches files in parallel; group the output by file, in path order
    matches.sort(key=lambda match: match[0])
    lines_truncated = False
    output_lines: list[str] = []
    files = _FileLines()
    for file_path, line_number, line_text in matches:
        shown_path = format_path(file_path)
        if context == 0 and line_text is not None:
            text = line_text.replace("\r\n", "\n").replace("\r", "")
            if text.endswith("\n"):
                text = text[:-1]
            text, cut = truncate_line(text)
            lines_truncated = lines_truncated or cut
            output_lines.append(f"{shown_path}:{line_number}: {text}")
            continue
        file_lines = files.get(file_path)
        if not file_lines:
            output_lines.append(f"{shown_path}:{line_number}: (unable to read file)")
            continue
        start = max(1, line_number - context) if context > 0 else line_number
        end = min(len(file_lines), line_number + context) if context > 0 else line_number
        for current in range(start, end + 1):
            raw = file_lines[current - 1] if current - 1 < len(file_lines) else ""
            text, cut = truncate_line(raw.replace("\r", ""))
            lines_truncated = lines_truncated or cut
            separator = ":" if current == line_number else "-"
            output_lines.append(f"{shown_path}{separator}{current}{separator} {text}")

    limit_notice = (
        f"{_number_text(limit)} matches limit reached. "
        f"Use limit={_number_text(limit * 2)} for more, or refine pattern"
    )
    lines_notice = f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
    return listing_result(
        output_lines,
        (limit_notice, "matchLimitReached", limit) if match_limit_reached else None,
        (lines_notice, "linesTruncated", True) if lines_truncated else None,
    )


def _refuse_special_file(path: str) -> None:
    """rg reads a device given by name forever and waits for a FIFO's writer: refuse them."""
    from piko.plugins.tools.file_kinds import SpecialFileError
    from piko.plugins.tools.file_kinds import refuse_special_path

    try:
        refuse_special_path("search", path, allowed="a regular file or directory")
    except SpecialFileError as exc:
        raise GrepToolError(str(exc)) from None


@hookimpl
def piko_register_tools(register: Any) -> None:
    register(tool_definition(__name__, default_active=False))
