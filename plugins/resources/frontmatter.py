"""Reading the ``---`` front matter of markdown resources (skills, prompt templates) with PyYAML.

The block is found as pi finds it: the text starts with ``---`` and the front matter ends at
the next line starting with ``---``; the body after it is trimmed. pi parses the block with the
npm ``yaml`` package (YAML 1.2, core schema); here PyYAML's libyaml parser reads it, imported
on the first file that has front matter (``pi --version`` and a start-up without skills or
templates never load it). Values follow the core schema as pi's package resolves them
(:data:`_CORE_SCHEMA`): ``true``/``false``, ``null``/``~``, decimal, ``0o`` and ``0x`` integers,
floats; ``yes``/``no``/``on``, dates, ``1_000`` and ``<<`` stay text. An unknown ``!tag`` is
ignored, as pi ignores it.

Front matter pi's parser rejects fails here too (:class:`FrontmatterError`), worded and pointed
as pi words it: libyaml's wording of the conditions people run into is mapped to the ``yaml``
package's in :data:`_PI_WORDING` (a plain value holding ``": "``, an unclosed quote or flow
collection, text after a quoted value, tabs in the indentation, a plain value starting with
``@``, a backtick or ``%``, a bad escape); a key given twice, which libyaml accepts, is checked
while the mapping is built. Other errors keep libyaml's wording.

Why a library: the hand-written reader this replaces (364 lines) read a subset of YAML and
agreed with pi's parser on 91 of 139 documents checked against pi 0.73.1; this one agrees on
126 (the rest: rarer errors in libyaml's words, ``!!float``/``!!bool`` tags, flow collections
as keys, a flow list going on at a lower indentation). Its cost, measured with 50 skills:
loading them takes 15.8 ms instead of 5.9 ms (importing PyYAML is 7.5 ms of it), ``pi -p``
127 ms instead of 119 ms (``benchmarks/bench_print_roundtrip.py --skills 50``); nothing
without front matter.

Why PyYAML and not ruamel.yaml (YAML 1.2 by default): both need the core-schema table, since
ruamel's 1.2 resolver also reads dates, ``0b``, ``1_000`` and merge keys, and pi's does not;
PyYAML's libyaml loader takes 36 µs for a typical skill's front matter, ruamel's pure-Python
one 515 µs (50 skills: 2 ms against 26 ms); ruamel rejects a tab after ``key:`` and a trailing
tab, which pi accepts. Without libyaml (a platform PyYAML has no wheel for) its pure-Python
loader is used, with its own wording.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from piko.lib.text import normalize_newlines

_CORE_SCHEMA = (  # YAML 1.2.2 section 10.3.2, as the npm yaml package's core schema has it
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+0123456789."),
    ),
)


_TAB_BLANK_LINE = re.compile(r"^[ \t]*\t[ \t]*$", re.MULTILINE)


class FrontmatterError(ValueError):
    """Front matter pi's YAML parser rejects; the message is worded and pointed as that parser's."""


def _error(message: str, lines: list[str], index: int, column: int, width: int = 1) -> FrontmatterError:
    """``message at line L, column C:`` and the line with a ``^`` pointer under column ``column``
    (0-based), the previous line too when the pointer is at the start, as the ``yaml`` package words it."""
    line_no, col = index + 1, column + 1
    text = f"{message} at line {line_no}, column {col}"
    shown = lines[index] if index < len(lines) else ""
    at = column
    if at >= 60 and len(shown) > 80:
        trim = min(at - 39, len(shown) - 79)
        shown = "…" + shown[trim:]
        at -= trim - 1
    if len(shown) > 80:
        shown = shown[:79] + "…"
    if index > 0 and not shown[:at].strip(" "):
        previous = lines[index - 1]
        shown = (previous[:79] + "…" if len(previous) > 80 else previous) + "\n" + shown
    if shown.strip(" "):
        text += f":\n\n{shown}\n{' ' * at}{'^' * max(1, min(width, 80 - at))}\n"
    return FrontmatterError(text)


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """``(yaml text or None, body)``; the body is trimmed only when there was front matter."""
    normalized = normalize_newlines(text)
    if not normalized.startswith("---"):
        return None, normalized
    end = normalized.find("\n---", 3)
    if end == -1:
        return None, normalized
    return normalized[4:end], normalized[end + 4 :].strip()


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """``(fields, body)`` of a markdown file; raises :class:`FrontmatterError` where pi's parser would."""
    yaml_text, body = split_frontmatter(text)
    if not yaml_text or not yaml_text.strip():
        return {}, body
    import yaml

    # the block ends at its last line's end, as it does for pi's parser (a block scalar keeps
    # its final newline); a blank line holding a tab is blank to pi, an error to libyaml
    source = _TAB_BLANK_LINE.sub("", yaml_text) + "\n"
    try:
        value = yaml.load(source, Loader=_loader())  # a safe loader (see _loader)
    except (yaml.YAMLError, _DuplicateKey) as exc:
        raise _pi_error(yaml_text, source, exc) from None
    return (value if isinstance(value, dict) else {}), body


class _DuplicateKey(Exception):
    def __init__(self, mark: Any) -> None:
        self.mark = mark


@functools.cache
def _loader() -> type:
    """PyYAML's safe loader (libyaml's when built in) with the core schema and unique keys."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class CoreSchemaLoader(base):  # type: ignore[valid-type,misc]
        yaml_implicit_resolvers: dict[str | None, list[tuple[str, re.Pattern[str]]]] = {}

        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
            if len(mapping) < len(node.value):  # a key given twice: find the second one
                seen: set[Any] = set()
                for key_node, _value in node.value:
                    key = self.construct_object(key_node)
                    if key in seen:
                        raise _DuplicateKey(key_node.start_mark)
                    seen.add(key)
            return mapping

        def construct_core_int(self, node: Any) -> int:
            text = self.construct_scalar(node)
            if text.startswith(("0o", "0x")):
                return int(text[2:], 8 if text[1] == "o" else 16)
            return int(text)  # decimal, leading zeros included ("012" is 12 in YAML 1.2)

        def construct_untagged(self, node: Any) -> Any:
            """An unknown ``!tag``: the value as if it had none, as pi's parser reads it."""
            if isinstance(node, yaml.MappingNode):
                return self.construct_mapping(node)
            if isinstance(node, yaml.SequenceNode):
                return self.construct_sequence(node)
            return self.construct_scalar(node)

    for tag, pattern, first in _CORE_SCHEMA:
        CoreSchemaLoader.add_implicit_resolver(tag, re.compile(pattern), first)
    CoreSchemaLoader.add_constructor("tag:yaml.org,2002:int", CoreSchemaLoader.construct_core_int)
    CoreSchemaLoader.add_constructor(None, CoreSchemaLoader.construct_untagged)
    return CoreSchemaLoader


# libyaml's wording of a condition -> pi's (the npm yaml package's), and where pi points: "mark"
# where libyaml does, "value" at the plain value before it, "after" just after the last token
# before it, "line" at the start of its line. {next}: the character after the one libyaml points
# at, {opening}: the character the scalar libyaml was reading starts with.
_PI_WORDING: dict[str, tuple[str, str]] = {
    "mapping values are not allowed in this context": (
        "Nested mappings are not allowed in compact mappings",
        "value",
    ),
    "mapping keys are not allowed in this context": (
        "Nested mappings are not allowed in compact mappings",
        "mark",
    ),
    "block sequence entries are not allowed in this context": (
        "Unexpected block-seq-ind on same line with key",
        "mark",
    ),
    "found a tab character that violates indentation": ("Tabs are not allowed as indentation", "mark"),
    "found unknown escape character": ("Invalid escape sequence \\{next}", "mark"),
    "found unexpected end of stream": ("Missing closing {opening}quote", "mark"),
    "did not find expected ',' or ']'": (
        "Flow sequence in block collection must be sufficiently indented and end with a ]",
        "after",
    ),
    "did not find expected ',' or '}'": (
        "Flow map in block collection must be sufficiently indented and end with a }}",
        "after",
    ),
    "did not find expected '-' indicator": ("Sequence item without - indicator", "line"),
}
# "found character that cannot start any token", by the character
_CANNOT_START = {
    "\t": "Tabs are not allowed as indentation",
    "@": "Plain value cannot start with reserved character @",
    "`": "Plain value cannot start with reserved character `",
    "%": "Plain value cannot start with directive indicator character %",
}


def _pi_error(text: str, source: str, exc: Exception) -> FrontmatterError:
    """libyaml's error as pi's ``yaml`` package words and points it (``source``: what libyaml read)."""
    import yaml

    lines = text.split("\n")
    if isinstance(exc, _DuplicateKey):
        return _error("Map keys must be unique", lines, exc.mark.line, exc.mark.column)
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or ""
    if mark is None or not problem:
        return FrontmatterError(str(exc))
    line, column = mark.line, mark.column
    if line >= len(lines):  # the end of what libyaml read: the end of the last line
        line, column = len(lines) - 1, len(lines[-1])
    char, following = lines[line][column : column + 1], lines[line][column + 1 : column + 2]
    before, token = _tokens_around(source, line, column)
    message, where, width = problem[:1].upper() + problem[1:], "mark", 1
    context_mark = getattr(exc, "context_mark", None)
    opening = ""
    if context_mark is not None and context_mark.line < len(lines):
        opening = lines[context_mark.line][context_mark.column : context_mark.column + 1]
    if problem in _PI_WORDING and (problem != "found unexpected end of stream" or opening in ("'", '"')):
        template, where = _PI_WORDING[problem]
        message = template.format(next=following, opening=opening)
    elif problem == "found character that cannot start any token" and char in _CANNOT_START:
        message = _CANNOT_START[char]
    elif problem == "did not find expected key" and before is not None and token is not None:
        # text after a node on its line, or a line indented unlike its mapping
        last_line = before.end_mark.line - (0 if before.end_mark.column else 1)  # a block scalar
        if token.start_mark.line != last_line:  # ends at the start of the next line
            message, line, column = "All mapping items must start at the same column", last_line + 1, 0
        elif isinstance(token, yaml.ScalarToken):
            kind = {"'": "single-quoted-scalar", '"': "double-quoted-scalar"}.get(token.style, "scalar")
            message = f"Unexpected {kind} at node end"
            width = token.end_mark.column - column if token.end_mark.line == line else 1
    if where == "value" and isinstance(before, yaml.ScalarToken):
        line, column = before.start_mark.line, before.start_mark.column
    elif where == "after" and before is not None:
        line, column = before.end_mark.line, before.end_mark.column
    elif where == "line":
        column = 0
    return _error(message, lines, line, column, width)


def _tokens_around(text: str, line: int, column: int) -> tuple[Any, Any]:
    """The last token starting before ``(line, column)`` and the one starting there (or ``None``)."""
    import yaml

    before = token = None
    try:
        for scanned in yaml.scan(text, Loader=_loader()):
            start = (scanned.start_mark.line, scanned.start_mark.column)
            if start == (scanned.end_mark.line, scanned.end_mark.column):
                continue  # zero-width tokens (where a key or a block starts) say nothing
            if start >= (line, column):
                token = scanned
                break
            before = scanned
    except yaml.YAMLError:
        pass  # the scanner stops where the parse did
    return before, token
