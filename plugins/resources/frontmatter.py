"""Reading the ``---`` front matter of markdown resources (the simple YAML subset skills and prompts use)."""

from __future__ import annotations

from typing import Any


def _scalar(text: str) -> Any:
    value = text.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    lowered = value.lower()
    if lowered in ("true", "yes"):
        return True
    if lowered in ("false", "no"):
        return False
    if lowered in ("null", "~", ""):
        return None if lowered != "" else ""
    if value.startswith("[") and value.endswith("]"):
        return [_scalar(part) for part in value[1:-1].split(",") if part.strip()]
    return value


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """``(fields, body)``; keys with ``- item`` lines become lists, ``>``/``|`` blocks join lines."""
    if not text.startswith("---"):
        return {}, text
    lines = text.split("\n")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        return {}, text
    fields: dict[str, Any] = {}
    key: str | None = None
    block: list[str] | None = None
    for raw in lines[1:end]:
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        indented = raw[:1] in (" ", "\t")
        stripped = raw.strip()
        if indented and key is not None:
            if stripped.startswith("- "):
                current = fields.get(key)
                if not isinstance(current, list):
                    current = []
                current.append(_scalar(stripped[2:]))
                fields[key] = current
            elif block is not None:
                block.append(stripped)
                fields[key] = " ".join(block)
            continue
        if ":" not in stripped:
            continue
        key, _, value = stripped.partition(":")
        key = key.strip()
        value = value.strip()
        block = None
        if value in (">", "|", ">-", "|-"):
            block = []
            fields[key] = ""
        elif value == "":
            fields[key] = None
        else:
            fields[key] = _scalar(value)
    body = "\n".join(lines[end + 1 :])
    return fields, body
