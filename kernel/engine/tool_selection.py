"""Which tools a session starts with, and how it lists them (:func:`describe_tools`): ``--tools``, ``--exclude-tools``, ``--no-tools``,
``--no-builtin-tools``, the ``defaultTools`` setting and the loadout a resumed session recorded.

pi 1.6's rules. The default selection is ``defaultTools`` (``read, bash, edit, write`` unless set)
plus every tool a plugin or extension registers switched on (in registration order when no list
names them, so a tool's ``order`` can place it among the built-ins). ``--tools`` with plain names or
``*`` patterns is an allowlist: the tools it names, in its order, then those its patterns match,
in registration order, and nothing else. ``--tools`` of only ``+name``/``-name`` entries changes
the default selection instead. ``--no-builtin-tools`` empties the built-in part of the default
selection; ``--no-tools`` empties it all (``--no-tools --tools +grep`` is just ``grep``).
``--exclude-tools`` (names or patterns) is applied last. A resumed session that recorded its
loadout gets it back unless ``--tools`` (plain names) or ``--no-tools`` say otherwise, with the
``+name``/``-name`` entries applied to it and the extension tools it never knew switched on.

Everything here works on tool names in registration order (:class:`ToolInfo`), so it does not
depend on how the registry orders built-in tools.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

from piko.lib.records import Record
from piko.lib.tool_names import DEFAULT_TOOL_NAMES
from piko.lib.tool_names import apply_modifiers
from piko.lib.tool_names import is_modifier
from piko.lib.tool_names import is_pattern
from piko.lib.tool_names import name_matcher
from piko.lib.tool_names import resolve_default_tools
from piko.lib.tool_names import split_tool_list
from piko.lib.tool_names import tool_list_error
from piko.lib.tool_names import unmatched

# the custom entry in which piko recorded a session's active tools before it wrote pi 1.6's
# system-message records (still read: older sessions hold it)
LOADOUT_ENTRY = "piko.active_tools"


class ToolInfo(Record, kw_only=False, frozen=True):
    """A registered tool as selection sees it."""

    name: str
    builtin: bool
    default_active: bool


class ToolRequest(Record, frozen=True):
    """What the command line and settings ask for."""

    tools: tuple[str, ...] | None = None  # --tools entries
    exclude: tuple[str, ...] = ()  # --exclude-tools entries
    no_tools: str | None = None  # "all" (--no-tools), "builtin" (--no-builtin-tools) or None
    default_tools: tuple[Any, ...] | None = None  # the merged defaultTools setting

    @property
    def modifiers(self) -> tuple[str, ...]:
        """``--tools`` when it is a list of ``+name``/``-name`` entries (else empty)."""
        return self.tools if self.tools and all(is_modifier(e) for e in self.tools) else ()

    @property
    def keeps_recorded(self) -> bool:
        """Whether a resumed session's recorded loadout applies (no allowlist, no ``--no-tools``)."""
        return (self.tools is None or bool(self.modifiers)) and self.no_tools is None


class Loadout(Record, frozen=True):
    """A loadout a session recorded: the active tools, and every tool it knew of (active or not)."""

    active: tuple[str, ...]
    known: tuple[str, ...]


class ToolChoice(Record, frozen=True):
    """The tools to activate, and the entries that named no registered tool (per option)."""

    active: list[str]
    unknown: dict[str, list[str]]


class ToolSelectionError(ValueError):
    """A ``--tools`` list pi refuses (plain names mixed with ``+``/``-``, patterns in ``+``/``-``)."""


def describe_tools(tools: Any) -> list[dict[str, Any]]:
    """Registered tool definitions as pi's ``getAllTools`` lists them: name, description,
    parameters, the plugin as ``source``, and the annotations a tool has."""
    described: list[dict[str, Any]] = []
    for tool in tools:
        info = {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
            "source": tool.plugin,
        }
        if tool.annotations:
            info["annotations"] = dict(tool.annotations)
        described.append(info)
    return described


def request_from(options: dict[str, Any], settings: Any) -> ToolRequest:
    """The :class:`ToolRequest` of the parsed command line and the settings."""
    listed = options.get("tools")
    tools = tuple(split_tool_list(str(listed))) if listed is not None else None
    if tools is not None:
        error = tool_list_error(tools)
        if error:
            raise ToolSelectionError(f"--tools: {error}")
    excluded = options.get("exclude_tools")
    no_tools = "all" if options.get("no_tools") else "builtin" if options.get("no_builtin_tools") else None
    configured = settings.get("defaultTools") if settings is not None else None
    return ToolRequest(
        tools=tools,
        exclude=tuple(split_tool_list(str(excluded))) if excluded else (),
        no_tools=no_tools,
        default_tools=tuple(configured) if isinstance(configured, list) else None,
    )


def default_names(request: ToolRequest) -> list[str]:
    """The default selection's named tools: ``defaultTools`` resolved, ``[]`` under a no-tools flag."""
    if request.no_tools:
        return []
    if request.default_tools is None:
        return list(DEFAULT_TOOL_NAMES)
    return resolve_default_tools(request.default_tools)


def choose_tools(
    registered: Sequence[ToolInfo], request: ToolRequest, recorded: Loadout | None = None
) -> ToolChoice:
    """The active tools for ``request`` over the ``registered`` tools (in registration order)."""
    names = [t.name for t in registered]
    excluded = name_matcher(request.exclude)
    modifiers = request.modifiers
    base = default_names(request)
    if modifiers:
        wanted = apply_modifiers(base, modifiers)
        allowed = name_matcher(wanted) if request.no_tools == "all" else None
    elif request.tools is not None:
        wanted = [e for e in request.tools if not is_pattern(e)]
        allowed = name_matcher(request.tools)
    else:
        wanted = base
        allowed = name_matcher([]) if request.no_tools == "all" else None

    def usable(name: str) -> bool:
        return name in names and not excluded(name) and (allowed is None or allowed(name))

    if recorded is not None and request.keeps_recorded:
        fresh = [
            t.name for t in registered if not t.builtin and t.default_active and t.name not in recorded.known
        ]
        wanted = apply_modifiers([*recorded.active, *fresh], modifiers)
        active = [n for n in dict.fromkeys(wanted) if usable(n)]
    else:
        active = [n for n in dict.fromkeys(wanted) if usable(n)]
        if allowed is not None and request.tools is not None and not modifiers:
            active += [n for n in names if n not in active and usable(n)]  # what the patterns match
        elif allowed is None:
            active += [t.name for t in registered if not t.builtin and t.default_active and usable(t.name)]
        active = list(dict.fromkeys(active))
        if request.tools is None and request.default_tools is None:  # nothing named: registration order
            position = {name: i for i, name in enumerate(names)}
            active.sort(key=lambda name: position[name])
    unknown = {
        option: missing
        for option, entries in (("--tools", request.tools or ()), ("--exclude-tools", request.exclude))
        if (missing := unmatched(entries, names))
    }
    return ToolChoice(active=active, unknown=unknown)


# ---------------------------------------------------------------------------
# The loadout a session recorded
# ---------------------------------------------------------------------------


def recorded_loadout(branch: Sequence[Any]) -> Loadout | None:
    """The last loadout recorded on ``branch`` (session entries, root first), or None.

    The records are pi 1.6's: ``system`` messages whose ``toolsAdded``/``toolsRemoved`` replayed in
    order give the loadout (the branch's first one declares it whole). Older piko sessions hold
    ``custom`` entries of type :data:`LOADOUT_ENTRY` (read still); the later record wins, and a
    ``system`` message after such an entry patches what it recorded.
    """
    active: list[str] | None = None
    known: set[str] = set()
    for entry in branch:
        if entry.type == "custom" and entry.raw.get("customType") == LOADOUT_ENTRY:
            data = entry.raw.get("data")
            if not isinstance(data, dict) or not isinstance(data.get("active"), list):
                continue
            active = [n for n in data["active"] if isinstance(n, str)]
            known.update(n for n in data.get("known") or [] if isinstance(n, str))
            known.update(active)
        elif entry.type == "message" and getattr(entry, "role", None) == "system":
            message = entry.raw.get("message")
            if not isinstance(message, dict):
                continue
            active = list(replay(active or (), message))
            known.update(_tool_names(message.get("toolsAdded")) + _tool_names(message.get("toolsRemoved")))
    if active is None:
        return None
    return Loadout(active=tuple(active), known=tuple(sorted(known)))


def replay(active: Sequence[str], message: dict[str, Any]) -> tuple[str, ...]:
    """The tools ``active`` becomes under one tool record (``message``, a pi 1.6 ``system``
    message): its ``toolsRemoved`` leave first, then its ``toolsAdded`` not already there follow."""
    removed = set(_tool_names(message.get("toolsRemoved")))
    kept = [n for n in active if n not in removed]
    return (*kept, *(n for n in _tool_names(message.get("toolsAdded")) if n not in kept))


def has_tool_record(branch: Sequence[Any]) -> bool:
    """Whether ``branch`` holds a pi 1.6 tool record (a ``system`` message) that a patch builds on."""
    return any(entry.type == "message" and getattr(entry, "role", None) == "system" for entry in branch)


def _tool_names(tools: Any) -> list[str]:
    if not isinstance(tools, list):
        return []
    return [t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]


def tool_record(
    active: Sequence[str],
    known: Sequence[str],
    before: Sequence[str] | None,
    declare: Callable[[str], dict[str, Any]],
    timestamp: int,
) -> dict[str, Any]:
    """The ``system`` message (wire form) pi 1.6 writes when the active tools change.

    ``before`` is the loadout the branch's records already give (None: none yet). Without one the
    message declares every active tool (``toolsAdded``, each as ``declare(name)`` gives it: name,
    description, parameters) and names the known inactive ones in ``toolsRemoved`` (a no-op for
    pi; piko reads them as tools the session knew). With one it lists only what changed.
    """
    if before is None:
        added = list(active)
        removed = [n for n in known if n not in active]
    else:
        added = [n for n in active if n not in before]
        removed = [n for n in before if n not in active]
    message: dict[str, Any] = {"role": "system", "content": "", "timestamp": timestamp}
    if added:
        message["toolsAdded"] = [declare(n) for n in added]
    if removed:
        message["toolsRemoved"] = [{"name": n} for n in removed]
    return message


class LoadoutRecorder:
    """Records a session's active tools in its file whenever they differ from what the file implies
    (its last recorded loadout, or the default selection when it recorded none), as pi 1.6 does:
    a ``system`` message with ``toolsAdded``/``toolsRemoved`` (:func:`tool_record`), so a plain
    resume in piko or pi 1.6 gets them back; a session on the default tools records nothing."""

    def __init__(
        self,
        manager: Callable[[], Any],
        default_active: Sequence[str],
        declare: Callable[[str], dict[str, Any]],
    ) -> None:
        self.manager = manager  # the session's current session manager (it changes on /resume, /new)
        self.default_active = tuple(default_active)
        self.declare = declare  # a tool's declaration by name: {"name", "description", "parameters"}

    def record(self, active: Sequence[str], known: Sequence[str]) -> tuple[str, ...]:
        """Record ``active`` if the file implies other tools; the active tools in the order the
        file now gives them, which is the order pi 1.6 declares them in: a record lists only what
        changed, so tools the file already had keep their place and new ones follow, and a
        change of order alone is no change."""
        import time

        manager = self.manager()
        branch = manager.get_branch()
        recorded = recorded_loadout(branch)
        if recorded is None:
            if tuple(active) == self.default_active:
                return tuple(active)
        elif set(active) == set(recorded.active):
            return recorded.active
        before = recorded.active if recorded is not None and has_tool_record(branch) else None
        message = tool_record(active, known, before, self.declare, int(time.time() * 1000))
        manager.append_message(message)
        return replay(before or (), message)  # as the file now reads
