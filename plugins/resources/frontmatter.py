"""Reading the ``---`` front matter of markdown resources (the YAML subset skills and prompts use).

The block is found as pi finds it: the text starts with ``---`` and the front matter ends at
the next line starting with ``---``; the body after it is trimmed. Values follow YAML 1.2's
core schema (``true``/``false``, ``null``, numbers; ``yes``/``no`` stay text): plain, quoted
and flow-list scalars, ``|``/``>`` block scalars, nested mappings and ``- item`` lists.

The mistakes people make in front matter fail as they fail in pi, whose ``yaml`` package
rejects them, with that package's wording and pointer (:class:`FrontmatterError`): a plain
value holding ``": "`` (``description: Use when: asked``), an unclosed quote or flow list,
text after a quoted value, tabs in the indentation, a key given twice, a plain value starting
with ``@`` or a backtick. Other constructs this reader does not understand are skipped rather
than failing the file.
"""

from __future__ import annotations

import re
from typing import Any

_INT = re.compile(r"^[-+]?\d+$")
_FLOAT = re.compile(r"^[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$")
_RESERVED_STARTS = ("@", "`")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "/": "/", "0": "\0", " ": " "}


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
    """``(fields, body)`` of a markdown file; raises :class:`FrontmatterError` where pi's parser would."""
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
        lead = line[: len(line) - len(line.lstrip())]
        if "\t" in lead:
            raise _error("Tabs are not allowed as indentation", lines, i, lead.index("\t"))
        if _indent(line) > indent:  # stray deeper line: skip it
            i += 1
            continue
        key, rest = _key_value(line.strip())
        if key is None:
            i += 1
            continue
        if key in out:
            raise _error("Map keys must be unique", lines, i, indent)
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
    key_line = i
    start = lines[i].rfind(rest) if rest else -1  # the value's column on the key's line
    i += 1
    if rest[:1] in ("|", ">"):
        return _block_scalar(lines, i, indent, rest)
    if rest and not rest.startswith("#"):
        if rest[:1] in ("'", '"'):
            # a quoted value, maybe going on over the following lines
            parts = [rest]
            while not _closed(" ".join(parts)):
                if i >= len(lines):
                    last = i - 1
                    raise _error(f"Missing closing {rest[0]}quote", lines, last, len(lines[last]))
                parts.append(lines[i].strip())
                i += 1
            value = " ".join(parts)
            after = value[_end_quote(value) + 1 :].strip()
            if after and not after.startswith("#") and i == key_line + 1:
                column = lines[key_line].rfind(after)
                raise _error("Unexpected scalar at node end", lines, key_line, column, len(after))
            return _scalar(value), i
        if rest[:1] == "[":
            if not _comment_free(rest).endswith("]"):
                flow = "Flow sequence in block collection must be sufficiently indented and end with a ]"
                raise _error(flow, lines, key_line, len(lines[key_line]))
            return _scalar(rest), i
        if rest[:1] in _RESERVED_STARTS:
            raise _error(
                f"Plain value cannot start with reserved character {rest[0]}", lines, key_line, start
            )
        parts = [rest]
        while i < len(lines) and not _skippable(lines[i]) and _indent(lines[i]) > indent:
            if lines[i][:1] == "\t":
                raise _error("Tabs are not allowed as indentation", lines, i, 0)
            parts.append(lines[i].strip())  # a plain scalar continued on deeper lines
            i += 1
        if any(_holds_mapping(part) for part in parts):
            raise _error("Nested mappings are not allowed in compact mappings", lines, key_line, start)
        return _scalar(" ".join(parts)), i
    i = _skip(lines, i)
    if i < len(lines):
        nxt = lines[i]
        if _indent(nxt) > indent or (_indent(nxt) == indent and nxt.strip().startswith("- ")):
            return _block(lines, i, _indent(nxt))
    return None, i


def _comment_free(text: str) -> str:
    """A plain scalar without its trailing `` #comment``."""
    return text.split(" #", 1)[0].rstrip()


def _holds_mapping(text: str) -> bool:
    """Whether a plain scalar's text would start a mapping (``a: b`` or ``a:`` at its end)."""
    plain = _comment_free(text)
    return ": " in plain or plain.endswith(":")


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
