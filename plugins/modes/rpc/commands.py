"""The commands of RPC mode: their fields, checks, and what each answers (pi 0.73.1's shapes).

Each command is a :class:`Command` with the fields it takes and an ``async run(host, command)``
returning the response's ``data`` (:data:`NO_DATA` for none). A field that is missing, of the
wrong type or outside its values is refused before anything runs, with a message naming it.
``prompt`` answers by itself (once the session accepted the prompt, as pi does).
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from piko.data.messages import THINKING_LEVELS
from piko.data.wire import record_to_wire
from piko.data.wire import to_wire

NO_DATA: Any = object()  # the response has no "data" key
ANSWERED: Any = object()  # the command wrote its own response


class CommandError(Exception):
    """A command refused: the message becomes the error response."""


# ---------------------------------------------------------------------------
# Field checks
# ---------------------------------------------------------------------------


def _is_image(value: Any) -> bool:
    if not isinstance(value, dict) or value.get("type") != "image":
        return False
    if isinstance(value.get("data"), str) and isinstance(value.get("mimeType"), str):
        return True
    source = value.get("source")  # the older shape: {"type": "base64", "mediaType", "data"}
    return (
        isinstance(source, dict)
        and isinstance(source.get("data"), str)
        and isinstance(source.get("mediaType"), str)
    )


KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "string": (lambda v: isinstance(v, str), "a string"),
    "boolean": (lambda v: isinstance(v, bool), "a boolean"),
    "images": (
        lambda v: isinstance(v, list) and all(_is_image(i) for i in v),
        'an array of images ({"type": "image", "data": <base64>, "mimeType": <type>})',
    ),
    "thinking_level": (
        lambda v: isinstance(v, str) and v in THINKING_LEVELS,
        "one of " + ", ".join(f'"{level}"' for level in THINKING_LEVELS),
    ),
    "queue_mode": (lambda v: v in ("all", "one-at-a-time"), '"all" or "one-at-a-time"'),
    "streaming_behavior": (lambda v: v in ("steer", "followUp"), '"steer" or "followUp"'),
}


class Field:
    """A field a command takes: its name, its kind (a key of :data:`KINDS`), whether it must be there."""

    __slots__ = ("kind", "name", "required")

    def __init__(self, name: str, kind: str, required: bool = True) -> None:
        self.name, self.kind, self.required = name, kind, required


class Command:
    """One RPC command: what runs it and the fields it takes."""

    __slots__ = ("fields", "run")

    def __init__(
        self, run: Callable[[Any, dict[str, Any]], Awaitable[Any]], fields: list[Field] | None = None
    ) -> None:
        self.run = run
        self.fields = fields or []

    def check(self, name: str, command: dict[str, Any]) -> None:
        """Raise :class:`CommandError` when a field is missing or has the wrong type."""
        for spec in self.fields:
            value = command.get(spec.name)
            test, wanted = KINDS[spec.kind]
            if value is None:
                if spec.required:
                    raise CommandError(f'Invalid "{name}" command: missing "{spec.name}" ({wanted})')
                continue
            if not test(value):
                raise CommandError(f'Invalid "{name}" command: "{spec.name}" must be {wanted}')


def _session_call(
    part: str, method: str, field: str | None = None
) -> Callable[[Any, dict[str, Any]], Awaitable[Any]]:
    """A command that calls ``session.<part>.<method>`` (with the command's ``field``) and answers no data."""

    async def run(host: Any, command: dict[str, Any]) -> Any:
        call = getattr(getattr(host.session, part), method)
        if field is None:
            call()
        else:
            call(command[field])
        return NO_DATA

    return run


def _images(command: dict[str, Any]) -> list[Any] | None:
    """The ``images`` field as :class:`~piko.data.messages.ImageContent` blocks (None when absent)."""
    raw = command.get("images")
    if not raw:
        return None
    from piko.data.wire import blocks_from_wire

    blocks = []
    for image in raw:
        source = image.get("source")
        if "data" not in image and isinstance(source, dict):
            image = {"type": "image", "data": source["data"], "mimeType": source["mediaType"]}
        blocks.append(image)
    return list(blocks_from_wire(blocks))


# ---------------------------------------------------------------------------
# Prompting
# ---------------------------------------------------------------------------


async def prompt(host: Any, command: dict[str, Any]) -> Any:
    accepted = False

    def preflight(ok: bool) -> None:
        nonlocal accepted
        if ok and not accepted:
            accepted = True
            host.respond(command, "prompt", {"disposition": host.session.prompt_disposition})

    try:
        await host.session.prompt(
            command["message"],
            _images(command),
            streaming_behavior=command.get("streamingBehavior"),
            source="rpc",
            preflight_result=preflight,
        )
    except Exception as exc:
        if not accepted:
            raise
        host.log(f"prompt failed after it was accepted: {exc}")
    return ANSWERED


async def steer(host: Any, command: dict[str, Any]) -> Any:
    return {"disposition": await host.session.steer(command["message"], _images(command), source="rpc")}


async def follow_up(host: Any, command: dict[str, Any]) -> Any:
    return {"disposition": await host.session.follow_up(command["message"], _images(command), source="rpc")}


async def abort(host: Any, command: dict[str, Any]) -> Any:
    await host.session.abort()
    return NO_DATA


async def clear_queue(host: Any, command: dict[str, Any]) -> Any:
    return record_to_wire(host.session.queues.clear())


# ---------------------------------------------------------------------------
# State
# ---------------------------------------------------------------------------


def session_state(session: Any) -> dict[str, Any]:
    """``get_state``'s data; unset model, file and name are left out, as pi leaves them out."""
    state = {
        "model": to_wire(session.model) if session.model is not None else None,
        "thinkingLevel": session.thinking_level,
        "isStreaming": session.is_streaming,
        "isCompacting": session.compaction.running,
        "steeringMode": session.queues.steering_mode,
        "followUpMode": session.queues.follow_up_mode,
        "sessionFile": session.session_file,
        "sessionId": session.session_id,
        "sessionName": session.get_session_name(),
        "autoCompactionEnabled": session.compaction.enabled,
        "messageCount": len(session.messages),
        "pendingMessageCount": session.queues.pending_count,
    }
    return {k: v for k, v in state.items() if v is not None}


async def get_state(host: Any, command: dict[str, Any]) -> Any:
    return session_state(host.session)


async def get_messages(host: Any, command: dict[str, Any]) -> Any:
    return {"messages": [to_wire(m) for m in host.session.messages]}


# ---------------------------------------------------------------------------
# Model and thinking
# ---------------------------------------------------------------------------


async def set_model(host: Any, command: dict[str, Any]) -> Any:
    provider, model_id = command["provider"], command["modelId"]
    available = host.session.model_registry.available_models()
    model = next((m for m in available if m.provider == provider and m.id == model_id), None)
    if model is None:
        raise CommandError(f"Model not found: {provider}/{model_id}")
    await host.session.set_model(model)
    return to_wire(model)


async def cycle_model(host: Any, command: dict[str, Any]) -> Any:
    result = await host.session.models.cycle()
    return None if result is None else record_to_wire(result)


async def get_available_models(host: Any, command: dict[str, Any]) -> Any:
    return {"models": [to_wire(m) for m in host.session.model_registry.available_models()]}


async def set_thinking_level(host: Any, command: dict[str, Any]) -> Any:
    host.session.set_thinking_level(command["level"])
    return NO_DATA


async def cycle_thinking_level(host: Any, command: dict[str, Any]) -> Any:
    level = host.session.models.cycle_thinking_level()
    return {"level": level} if level else None


async def get_available_thinking_levels(host: Any, command: dict[str, Any]) -> Any:
    return {"levels": host.session.models.available_thinking_levels()}


# ---------------------------------------------------------------------------
# Compaction, retry, shell
# ---------------------------------------------------------------------------


async def compact(host: Any, command: dict[str, Any]) -> Any:
    if host.session.compaction.running:
        raise CommandError("Compaction is already running")
    return record_to_wire(await host.session.compact(command.get("customInstructions")))


async def bash(host: Any, command: dict[str, Any]) -> Any:
    if host.session.shell.is_running:
        raise CommandError("A bash command is already running (abort it with abort_bash)")

    def streamed(delta: str) -> None:  # pi 1.6: every chunk, with the command's id when it had one
        record = {"type": "bash_execution_update", **({"id": command["id"]} if "id" in command else {})}
        host.output.send({**record, "delta": delta})

    result = await host.session.shell.execute(
        command["command"], exclude_from_context=bool(command.get("excludeFromContext")), on_chunk=streamed
    )
    data = {
        "output": result.output,
        "exitCode": result.exit_code,
        "cancelled": result.cancelled,
        "truncated": result.truncated,
        "fullOutputPath": result.full_output_path,
    }
    return {k: v for k, v in data.items() if v is not None}


# ---------------------------------------------------------------------------
# Sessions
# ---------------------------------------------------------------------------


async def get_session_stats(host: Any, command: dict[str, Any]) -> Any:
    """pi's ``SessionStats``; an in-memory session has no ``sessionFile``, no window no ``contextUsage``."""
    stats = record_to_wire(host.session.get_session_stats())
    return {k: v for k, v in stats.items() if v is not None}


async def export_html(host: Any, command: dict[str, Any]) -> Any:
    from piko.engine.export import ExportFailed
    from piko.engine.export import export_running_session

    try:
        path = await export_running_session(host.session, command.get("outputPath"))
    except ExportFailed as exc:
        raise CommandError(str(exc)) from exc
    return {"path": path}


async def new_session(host: Any, command: dict[str, Any]) -> Any:
    result = await host.session.new_session(command.get("parentSession"))
    return {"cancelled": result.cancelled}


async def switch_session(host: Any, command: dict[str, Any]) -> Any:
    """pi's ``{"cancelled"}``, plus ``"warnings"`` about a damaged file (also written to stderr,
    as pi writes what a new session's loading found)."""
    result = await host.session.switch_session(command["sessionPath"])
    data: dict[str, Any] = {"cancelled": result.cancelled}
    if result.warnings:
        data["warnings"] = list(result.warnings)
        host.app.notices.extend(result.warnings)
        host.app.report()
    return data


async def fork(host: Any, command: dict[str, Any]) -> Any:
    result = await host.session.fork(command["entryId"])
    if result.text is None:
        return {"cancelled": result.cancelled}
    return {"text": result.text, "cancelled": result.cancelled}


async def clone(host: Any, command: dict[str, Any]) -> Any:
    leaf = host.session.session_manager.leaf_id
    if not leaf:
        raise CommandError("Cannot clone session: no current entry selected")
    result = await host.session.fork(leaf, "at")
    return {"cancelled": result.cancelled}


async def get_fork_messages(host: Any, command: dict[str, Any]) -> Any:
    return {"messages": [record_to_wire(m) for m in host.session.get_fork_messages()]}


async def get_last_assistant_text(host: Any, command: dict[str, Any]) -> Any:
    return {"text": host.session.get_last_assistant_text()}


# What JavaScript's String.prototype.trim removes (Python's str.strip differs at the edges).
_JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


async def set_session_name(host: Any, command: dict[str, Any]) -> Any:
    name = command["name"].strip(_JS_WHITESPACE)
    if not name:
        raise CommandError("Session name cannot be empty")
    host.session.set_session_name(name)
    return NO_DATA


async def get_entries(host: Any, command: dict[str, Any]) -> Any:
    from piko.plugins.modes.rpc.tree import entries_data

    since = command.get("since")
    try:
        return entries_data(host.session.session_manager, since)
    except KeyError:
        raise CommandError(f"Entry not found: {since}") from None


async def get_tree(host: Any, command: dict[str, Any]) -> Any:
    from piko.plugins.modes.rpc.tree import tree_data

    return tree_data(host.session.session_manager)


# ---------------------------------------------------------------------------
# Commands a prompt can run
# ---------------------------------------------------------------------------


async def get_commands(host: Any, command: dict[str, Any]) -> Any:
    return {"commands": host.session.get_commands()}


# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------

_MESSAGE = [Field("message", "string"), Field("images", "images", required=False)]

COMMANDS: dict[str, Command] = {
    "prompt": Command(prompt, [*_MESSAGE, Field("streamingBehavior", "streaming_behavior", required=False)]),
    "steer": Command(steer, list(_MESSAGE)),
    "follow_up": Command(follow_up, list(_MESSAGE)),
    "abort": Command(abort),
    "clear_queue": Command(clear_queue),
    "new_session": Command(new_session, [Field("parentSession", "string", required=False)]),
    "get_state": Command(get_state),
    "get_messages": Command(get_messages),
    "set_model": Command(set_model, [Field("provider", "string"), Field("modelId", "string")]),
    "cycle_model": Command(cycle_model),
    "get_available_models": Command(get_available_models),
    "set_thinking_level": Command(set_thinking_level, [Field("level", "thinking_level")]),
    "cycle_thinking_level": Command(cycle_thinking_level),
    "get_available_thinking_levels": Command(get_available_thinking_levels),
    "set_steering_mode": Command(
        _session_call("queues", "set_steering_mode", "mode"), [Field("mode", "queue_mode")]
    ),
    "set_follow_up_mode": Command(
        _session_call("queues", "set_follow_up_mode", "mode"), [Field("mode", "queue_mode")]
    ),
    "compact": Command(compact, [Field("customInstructions", "string", required=False)]),
    "set_auto_compaction": Command(
        _session_call("compaction", "set_enabled", "enabled"), [Field("enabled", "boolean")]
    ),
    "set_auto_retry": Command(
        _session_call("retry", "set_enabled", "enabled"), [Field("enabled", "boolean")]
    ),
    "abort_retry": Command(_session_call("retry", "abort")),
    "bash": Command(
        bash, [Field("command", "string"), Field("excludeFromContext", "boolean", required=False)]
    ),
    "abort_bash": Command(_session_call("shell", "abort")),
    "get_session_stats": Command(get_session_stats),
    "export_html": Command(export_html, [Field("outputPath", "string", required=False)]),
    "switch_session": Command(switch_session, [Field("sessionPath", "string")]),
    "fork": Command(fork, [Field("entryId", "string")]),
    "clone": Command(clone),
    "get_fork_messages": Command(get_fork_messages),
    "get_last_assistant_text": Command(get_last_assistant_text),
    "set_session_name": Command(set_session_name, [Field("name", "string")]),
    "get_commands": Command(get_commands),
    "get_entries": Command(get_entries, [Field("since", "string", required=False)]),
    "get_tree": Command(get_tree),
}
