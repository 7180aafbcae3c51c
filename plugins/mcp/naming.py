"""MCP tool names as the model sees them (``mcp__<server>__<tool>``) and each tool's exposure."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from collections.abc import Iterable

MAX_TOOL_NAME_LENGTH = 64
RESOURCE_TOOLS = ("list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource")
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def tool_name(server: str, tool: str, is_taken: Callable[[str], bool] = lambda _name: False) -> str:
    """``mcp__<server>__<tool>`` with every other character than letters, digits and ``_`` made
    ``_``; too long or taken, it ends in ``_`` and 8 hex digits of the SHA-256 of ``server\\0tool``."""
    name = _UNSAFE.sub("_", f"mcp__{server}__{tool}")
    if len(name) <= MAX_TOOL_NAME_LENGTH and not is_taken(name):
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_TOOL_NAME_LENGTH - len(digest) - 1]}_{digest}"


def assign_names(server: str, tools: Iterable[str], taken: Callable[[str], bool]) -> dict[str, str]:
    """Names for every tool of one server: tools whose plain names collide all get the suffix, so
    which one keeps the plain name does not depend on the order of the list."""
    unique = list(dict.fromkeys(tools))
    plain = [tool_name(server, t) for t in unique]
    assigned: dict[str, str] = {}
    used: set[str] = set()
    for tool in unique:
        name = tool_name(server, tool, lambda c: taken(c) or c in used or plain.count(c) > 1)
        assigned[tool] = name
        used.add(name)
    return assigned


def _pattern(pattern: str) -> re.Pattern[str]:
    return re.compile("^" + ".*".join(re.escape(part) for part in pattern.split("*")) + "$")


def tool_exposure(server_exposure: str, overrides: dict[str, str], tool: str) -> str:
    """A tool's exposure: an exact ``toolExposure`` key wins, then the first matching pattern,
    then the server's exposure."""
    if tool in overrides:
        return overrides[tool]
    for pattern, exposure in overrides.items():
        if "*" in pattern and _pattern(pattern).match(tool):
            return exposure
    return server_exposure


def name_matcher(entries: Iterable[str]) -> Callable[[str], bool]:
    """Whether a tool name is one of ``entries`` (names, or patterns where ``*`` matches anything)."""
    listed = list(entries)
    names = {e for e in listed if "*" not in e}
    patterns = [_pattern(e) for e in listed if "*" in e]
    return lambda name: name in names or any(p.match(name) for p in patterns)


def is_mcp_tool(name: str) -> bool:
    return name.startswith("mcp__") or name in RESOURCE_TOOLS
