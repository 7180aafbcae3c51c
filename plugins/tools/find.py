"""The ``find`` tool: files and directories by glob, from ``rg --files`` (pi used fd)."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from itertools import compress
from itertools import repeat
from operator import itemgetter
from operator import methodcaller
from typing import Any

from piko import hookimpl
from piko.data.messages import TextContent
from piko.data.messages import ToolResult
from piko.plugins.tools.builtin import object_schema
from piko.plugins.tools.builtin import param
from piko.plugins.tools.builtin import tool_definition
from piko.plugins.tools.truncate import DEFAULT_MAX_BYTES

NAME = "find"
DEFAULT_LIMIT = 1000

DESCRIPTION = (
    "Search for files by glob pattern. Returns matching file paths relative to the search directory. "
    f"Respects .gitignore. Output is truncated to {DEFAULT_LIMIT} results or {DEFAULT_MAX_BYTES // 1024}KB "
    "(whichever is hit first)."
)

PARAMETERS = object_schema(
    {
        "pattern": param(
            "string", "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"
        ),
        "path": param("string", "Directory to search in (default: current directory)"),
        "limit": param("number", "Maximum number of results (default: 1000)"),
    },
    required=["pattern"],
)

PROMPT_SNIPPET = "Find files by glob pattern (respects .gitignore)"

RG_FILES_ARGS = ["--files", "--hidden", "--no-require-git", "--color=never", "--glob", "!.git"]


class FindToolError(Exception):
    """A failed search; the message is pi's error text."""


# ---------------------------------------------------------------------------
# Globs (fd --glob semantics: globset with literal separators)
# ---------------------------------------------------------------------------

_ANY_CHAR = "[^/\n]"


def _class_to_regex(pattern: str, i: int) -> tuple[str, int] | None:
    """Translate ``[...]`` starting at ``pattern[i] == "["``; ``None`` when it is not closed."""
    j = i + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    items: list[str] = []
    first = True
    while j < len(pattern):
        char = pattern[j]
        if char == "]" and not first:
            body = "".join(items)
            return (f"[^/\n{body}]" if negate else f"[{body}]"), j + 1
        first = False
        if j + 2 < len(pattern) and pattern[j + 1] == "-" and pattern[j + 2] != "]":
            items.append(f"{re.escape(char)}-{re.escape(pattern[j + 2])}")
            j += 3
            continue
        items.append(re.escape(char))
        j += 1
    return None


def glob_to_regex(pattern: str, *, in_alternative: bool = False) -> str:
    """The regex (unanchored, one line) for a glob: ``*``/``?`` stay within a path component,
    ``**/``, ``/**/`` and a trailing ``/**`` cross directories, ``[...]`` classes, ``{a,b}``."""
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif char == "*":
            if i + 1 < n and pattern[i + 1] == "*":
                at_start = i == 0 or pattern[i - 1] == "/"
                after = i + 2
                at_end = after == n
                if at_start and (at_end or pattern[after] == "/"):
                    if i == 0 and at_end:
                        out.append(".*")
                        i = after
                    elif i == 0:
                        out.append("(?:/?|.*/)")
                        i = after + 1
                    elif at_end:
                        out.pop()  # the "/" before "**"
                        out.append("/.*")
                        i = after
                    else:
                        out.pop()
                        out.append("(?:/|/.*/)")
                        i = after + 1
                    continue
                out.append(f"{_ANY_CHAR}*")
                i = after
                continue
            out.append(f"{_ANY_CHAR}*")
            i += 1
        elif char == "?":
            out.append(_ANY_CHAR)
            i += 1
        elif char == "[":
            translated = _class_to_regex(pattern, i)
            if translated is None:
                out.append(re.escape(char))
                i += 1
            else:
                out.append(translated[0])
                i = translated[1]
        elif char == "{" and not in_alternative:
            close = pattern.find("}", i + 1)
            if close == -1:
                out.append(re.escape(char))
                i += 1
                continue
            options = pattern[i + 1 : close].split(",")
            out.append("(?:" + "|".join(glob_to_regex(o, in_alternative=True) for o in options) + ")")
            i = close + 1
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


_GLOB_SPECIAL = frozenset("*?[{\\")
_name_of = itemgetter(2)
_dir_of = itemgetter(0)


def _is_literal(text: str) -> bool:
    return bool(text) and "/" not in text and not (_GLOB_SPECIAL & set(text))


def _lines_ending_with(keys: str, block: str, suffix: str) -> list[str]:
    """The lines of ``block`` whose counterpart in ``keys`` (same offsets) ends with ``suffix``."""
    found: list[str] = []
    needle = suffix + "\n"
    keys += "\n"
    size = len(suffix)
    position = keys.find(needle)
    while position != -1:
        start = keys.rfind("\n", 0, position) + 1
        found.append(block[start : position + size])
        position = keys.find(needle, position + 1)
    return found


def _lines_equal_to(keys: str, block: str, name: str) -> list[str]:
    """The lines of ``block`` whose counterpart in ``keys`` (same offsets) is exactly ``name``."""
    found: list[str] = []
    text = f"\n{keys}\n"
    needle = f"\n{name}\n"
    position = text.find(needle)
    while position != -1:
        found.append(block[position : position + len(name)])
        position = text.find(needle, position + 1)
    return found


def _required_literal(pattern: str) -> str:
    """The longest run of plain characters that every match contains (``""`` when unsure)."""
    if "\\" in pattern:
        return ""
    runs: list[str] = []
    current: list[str] = []
    closing = ""
    for char in pattern:
        if closing:
            if char == closing:
                closing = ""
            continue
        if char in "*?[{":
            runs.append("".join(current))
            current = []
            closing = {"[": "]", "{": "}"}.get(char, "")
            continue
        current.append(char)
    runs.append("".join(current))
    return max(runs, key=len)


class GlobMatcher:
    """fd's matching: a pattern without ``/`` tests the entry's name, one with ``/`` its full path.

    Case-insensitive unless the pattern has an upper-case letter (fd's smart case). A full-path
    pattern that does not start with ``/`` or ``**/`` gets ``**/`` in front (pi does this), and
    ``**/name`` (no further ``/``) is the same as the name pattern. Matching works on whole
    blocks of lines with C-level loops: rg lists tens of thousands of files per second.
    """

    def __init__(self, pattern: str, search_path: str) -> None:
        self.ignore_case = not any(char.isupper() for char in pattern)
        full_path = "/" in pattern
        if full_path and not pattern.startswith(("/", "**/")) and pattern != "**":
            pattern = f"**/{pattern}"
        if full_path and pattern.startswith("**/") and "/" not in pattern[3:]:
            pattern, full_path = pattern[3:], False
        self.full_path = full_path
        self.prefix = search_path.rstrip("/") + "/" if full_path else ""
        self.match_all = pattern in ("", "*", "**")
        # fast paths for names: "*.ext" (suffix) and an exact name ("/name" suffix of "/"+path)
        self.suffix: str | None = None
        self.slash_keys = False
        if not full_path and _is_literal(pattern):
            self.suffix, self.slash_keys = "/" + pattern, True
        elif not full_path and pattern.startswith("*") and _is_literal(pattern[1:]):
            self.suffix = pattern[1:]
        # a directory can only match if its path ends with the pattern's literal tail
        special = max((pattern.rfind(char) for char in "*?]}"), default=-1)
        self.tail = "" if "\\" in pattern else pattern[special + 1 :]
        self.literal = _required_literal(pattern)
        if full_path and pattern.startswith("**/"):
            # "(any dirs)/REST" over the absolute path: REST must match right after some "/"
            regex = re.compile(f"/(?:{glob_to_regex(pattern[3:])})\\Z")
            self._test: Callable[[str], Any] = regex.search
        else:
            self._test = re.compile(glob_to_regex(pattern)).fullmatch

    def _keys(self, block: str) -> str:
        if self.full_path:
            block = self.prefix + block.replace("\n", "\n" + self.prefix)
        elif self.slash_keys:
            block = "/" + block.replace("\n", "\n/")
        return block.lower() if self.ignore_case else block

    def matching_lines(self, block: str) -> list[str]:
        """The lines of ``block`` (relative paths, ``\\n``-separated, no final newline) that match."""
        return self.scan(block, with_parents=False)[0]

    def scan(self, block: str, *, with_parents: bool = True) -> tuple[list[str], set[str]]:
        """The matching lines of ``block`` and (unless a pre-check rules out any directory
        match, or ``with_parents`` is false) the set of their parent directories."""
        if self.suffix is not None:
            lowered = block.lower() if self.ignore_case else block
            if len(lowered) == len(block):  # lower() kept every offset: no need to split lines
                matched = _lines_ending_with(lowered, block, self.suffix)
                if self.slash_keys:  # an exact name also matches a top-level entry
                    matched += _lines_equal_to(lowered, block, self.suffix[1:])
                parents: set[str] = set()
                if with_parents and self.tail + "/" in lowered:
                    parents = set(map(_dir_of, map(str.rpartition, block.split("\n"), repeat("/"))))
                return matched, parents
        lines = block.split("\n")
        if self.match_all:
            matched = lines
        else:
            keys_text = self._keys(block)
            with_parents = with_parents and self.tail + "/" in keys_text
            keys = keys_text.split("\n")
            if self.suffix is not None:
                matched = list(compress(lines, map(methodcaller("endswith", self.suffix), keys)))
            else:
                candidates, subjects = lines, keys
                if self.literal:
                    # only lines holding the pattern's longest literal can match: filter in C first
                    keep = list(map(methodcaller("__contains__", self.literal), keys))
                    candidates, subjects = list(compress(lines, keep)), list(compress(keys, keep))
                if not self.full_path:
                    subjects = list(map(_name_of, map(str.rpartition, subjects, repeat("/"))))
                matched = list(compress(candidates, map(self._test, subjects)))
        parents = set()
        if with_parents:
            parents = set(map(_dir_of, map(str.rpartition, lines, repeat("/"))))
        return matched, parents

    def matches(self, relative: str) -> bool:
        return bool(self.matching_lines(relative))


# ---------------------------------------------------------------------------
# The tool
# ---------------------------------------------------------------------------


async def execute(
    tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
) -> ToolResult:
    """List files and directories under ``path`` whose name (or path) matches ``pattern``."""
    from piko.plugins.tools.ripgrep import run_rg
    from piko.plugins.tools.ripgrep import start_search
    from piko.plugins.tools.truncate import listing_result

    pattern, search_path = start_search(params, signal, ctx.cwd, FindToolError)
    if not os.path.exists(search_path):
        raise FindToolError(f"Path not found: {search_path}")
    if not os.path.isdir(search_path):
        raise FindToolError(f"Not a directory: {search_path}")
    limit_param = params.get("limit")
    limit = max(1, math.ceil(limit_param)) if limit_param is not None else DEFAULT_LIMIT

    matcher = GlobMatcher(pattern, search_path)
    results: list[str] = []
    seen_dirs: set[str] = set()

    def on_output(block_bytes: bytes) -> bool:
        block = block_bytes[:-1].decode("utf-8", "replace")
        matched, parents = matcher.scan(block)
        # rg lists no directories: derive them from the files' parents (those with a file)
        new_dirs: list[str] = []
        for parent in parents - seen_dirs:
            while parent and parent not in seen_dirs:
                seen_dirs.add(parent)
                new_dirs.append(parent)
                parent = parent.rpartition("/")[0]
        if new_dirs:
            results.extend(f"{directory}/" for directory in matcher.matching_lines("\n".join(new_dirs)))
        results.extend(matched)
        return len(results) >= limit

    run = await run_rg(RG_FILES_ARGS, on_output, cwd=search_path, signal=signal)
    if run.aborted or (signal is not None and signal.aborted):
        raise FindToolError("Operation aborted")
    if not results:
        if not run.stopped and run.code not in (0, 1):
            raise FindToolError(run.stderr.strip() or f"rg exited with code {run.code}")
        return ToolResult(content=[TextContent(text="No files found matching pattern")], details=None)

    limit_reached = len(results) >= limit
    if limit_reached:
        del results[limit:]
    results.sort()
    notice = f"{limit} results limit reached. Use limit={limit * 2} for more, or refine pattern"
    return listing_result(results, (notice, "resultLimitReached", limit) if limit_reached else None)


@hookimpl
def piko_register_tools(register: Any) -> None:
    register(tool_definition(__name__, default_active=False))
