"""Reading the ``---`` front matter of markdown resources (the YAML subset skills and prompts use).

The block is found as pi finds it: the text starts with ``---`` and the front matter ends at
the next line starting with ``---``; the body after it is trimmed. Values follow YAML 1.2's
core schema (``true``/``false``, ``null``, numbers; ``yes``/``no`` stay text): plain, quoted
and flow-list scalars, ``|``/``>`` block scalars, nested mappings and ``- item`` lists.
Anything this reader does not understand is skipped rather than failing the file.
"""

from __future__ import annotations

import re
from typing import Any

_INT = re.compile(r"^[-+]?\d+$")
_FLOAT = re.compile(r"^[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "/": "/", "0": "\0", " ": " "}


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


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
    """``(fields, body)`` of a markdown file."""
    yaml_text, body = split_frontmatter(text)
    if not yaml_text or not yaml_text.strip():
        return {}, body
    lines = yaml_text.split("\n")
    start = _skip(lines, 0)
    if start >= len(lines):
        return {}, body
    value, _ = _block(lines, start, _indent(lines[start]))
    return (value if isinstance(value, dict) else {}), body


def _skippable(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _skip(lines: list[str], i: int) -> int:
    """The index of the next line that is not blank or a comment."""
    while i < len(lines) and _skippable(lines[i]):
        i += 1
    return i


def _is_item(line: str) -> bool:
    stripped = line.strip()
    return stripped == "-" or stripped.startswith("- ")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block(lines: list[str], i: int, indent: int) -> tuple[Any, int]:
    """A mapping or a sequence whose lines start at ``indent``."""
    if i < len(lines) and _is_item(lines[i]):
        return _sequence(lines, i, indent)
    return _mapping(lines, i, indent)


def _mapping(lines: list[str], i: int, indent: int) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    while True:
        i = _skip(lines, i)
        if i >= len(lines):
            break
        line = lines[i]
        if _indent(line) < indent:
            break
        if _indent(line) > indent:  # stray deeper line: skip it
            i += 1
            continue
        key, rest = _key_value(line.strip())
        if key is None:
            i += 1
            continue
        out[key], i = _value_after_key(lines, i, indent, rest)
    return out, i


def _sequence(lines: list[str], i: int, indent: int) -> tuple[list[Any], int]:
    out: list[Any] = []
    while True:
        i = _skip(lines, i)
        if i >= len(lines) or _indent(lines[i]) != indent or not _is_item(lines[i]):
            break
        item = lines[i].strip()[1:].strip()
        i = _skip(lines, i + 1)
        if not item:
            if i < len(lines) and _indent(lines[i]) > indent:
                value, i = _block(lines, i, _indent(lines[i]))
                out.append(value)
            else:
                out.append(None)
            continue
        key, rest = _key_value(item)
        if key is not None and not item.startswith(("'", '"', "[")):
            # "- key: value" starts a mapping inside the list
            child_indent = indent + 2
            first, i = _value_after_key(lines, i - 1, child_indent, rest)
            entry: dict[str, Any] = {key: first}
            more, i = _mapping(lines, i, child_indent) if i < len(lines) else ({}, i)
            entry.update(more)
            out.append(entry)
        else:
            out.append(_scalar(item))
    return out, i


def _key_value(text: str) -> tuple[str | None, str]:
    """``key: rest`` (the key may be quoted); ``(None, "")`` when the line is not one."""
    if text[:1] in ("'", '"'):
        close = text.find(text[0], 1)
        if close != -1 and text[close + 1 : close + 2] == ":":
            return text[1:close], text[close + 2 :].strip()
    match = re.match(r"^([^:#][^:]*?)\s*:(\s+|$)(.*)$", text)
    if not match:
        return None, ""
    return match.group(1).strip(), match.group(3).strip()


def _value_after_key(lines: list[str], i: int, indent: int, rest: str) -> tuple[Any, int]:
    """The value of the key on line ``i``; returns it and the index of the next line to read."""
    i += 1
    if rest[:1] in ("|", ">"):
        return _block_scalar(lines, i, indent, rest)
    if rest and not rest.startswith("#"):
        if rest[:1] in ("'", '"') and not _closed(rest):
            # a quoted value that goes on over the following lines
            parts = [rest]
            while i < len(lines) and not _closed(" ".join(parts)):
                parts.append(lines[i].strip())
                i += 1
            return _scalar(" ".join(parts)), i
        parts = [rest]
        while (
            i < len(lines)
            and not _skippable(lines[i])
            and _indent(lines[i]) > indent
            and rest[:1] not in ("'", '"', "[")
        ):
            parts.append(lines[i].strip())  # a plain scalar continued on deeper lines
            i += 1
        return _scalar(" ".join(parts)), i
    i = _skip(lines, i)
    if i < len(lines):
        nxt = lines[i]
        if _indent(nxt) > indent or (_indent(nxt) == indent and nxt.strip().startswith("- ")):
            return _block(lines, i, _indent(nxt))
    return None, i


def _closed(text: str) -> bool:
    quote = text[0]
    j = 1
    while j < len(text):
        if quote == '"' and text[j] == "\\":
            j += 2
            continue
        if text[j] == quote:
            if quote == "'" and text[j + 1 : j + 2] == "'":
                j += 2
                continue
            return True
        j += 1
    return False


def _block_scalar(lines: list[str], i: int, indent: int, header: str) -> tuple[str, int]:
    """``|`` keeps line breaks, ``>`` folds them into spaces; ``-`` drops the final newline."""
    start = i
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > indent):
        i += 1
    body = lines[start:i]
    while body and not body[-1].strip():
        body.pop()
    if not body:
        return "", i
    cut = min(_indent(line) for line in body if line.strip())
    rows = [line[cut:] for line in body]
    text = "\n".join(rows) if header.startswith("|") else _fold(rows)
    return (text if "-" in header else text + "\n"), i


def _fold(rows: list[str]) -> str:
    """YAML folding: a line break between two text lines is a space, each empty line a newline."""
    out = ""
    previous: str | None = None
    for row in rows:
        if not row:
            out += "\n"
        elif previous and not previous.startswith(" ") and not row.startswith(" "):
            out += " " + row
        elif previous is not None and previous:
            out += "\n" + row
        else:
            out += row
        previous = row
    return out


def _scalar(text: str) -> Any:
    value = text.strip()
    if value[:1] == '"' and _closed(value):
        return _unescape(value[1 : _end_quote(value)])
    if value[:1] == "'" and _closed(value):
        return value[1 : _end_quote(value)].replace("''", "'")
    if value.startswith("[") and value.endswith("]"):
        inner = value[1:-1].strip()
        return [_scalar(part) for part in _split_flow(inner)] if inner else []
    if " #" in value:
        value = value.split(" #", 1)[0].rstrip()
    if value in ("true", "True", "TRUE"):
        return True
    if value in ("false", "False", "FALSE"):
        return False
    if value in ("null", "Null", "NULL", "~", ""):
        return None
    if _INT.match(value):
        return int(value)
    if _FLOAT.match(value):
        return float(value)
    return value


def _end_quote(value: str) -> int:
    quote = value[0]
    j = 1
    while j < len(value):
        if quote == '"' and value[j] == "\\":
            j += 2
            continue
        if value[j] == quote:
            if quote == "'" and value[j + 1 : j + 2] == "'":
                j += 2
                continue
            return j
        j += 1
    return len(value)


def _unescape(text: str) -> str:
    out = []
    j = 0
    while j < len(text):
        ch = text[j]
        if ch == "\\" and j + 1 < len(text):
            nxt = text[j + 1]
            if nxt == "u" and j + 6 <= len(text):
                try:
                    out.append(chr(int(text[j + 2 : j + 6], 16)))
                    j += 6
                    continue
                except ValueError:
                    pass
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            j += 2
            continue
        out.append(ch)
        j += 1
    return "".join(out)


def _split_flow(text: str) -> list[str]:
    parts: list[str] = []
    current = ""
    quote: str | None = None
    for ch in text:
        if quote:
            current += ch
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
            current += ch
        elif ch == ",":
            parts.append(current)
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current)
    return [p.strip() for p in parts if p.strip()]
