"""How the results of an event's handlers combine: one reducer per semantics, and the events with
rules of their own (pi's rules for ``input``, ``tool_call``, ``context``, ...).

A reducer is ``async (dispatcher, handlers, name, event, ctx, signal) -> result``: it calls each
handler through ``dispatcher._call`` (which applies the budget and reports failures) and folds
what they return. The hook specs name each event's reducer (:mod:`piko.platform.semantics`);
events without one use the generic reducer of their semantics (:data:`GENERIC`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any

import attrs

from piko.data.messages import AssistantMessage
from piko.data.messages import TextContent
from piko.lib.text import snake
from piko.platform.semantics import Semantics

if TYPE_CHECKING:
    from piko.platform.dispatch import Dispatcher
    from piko.platform.dispatch import Handler

# ---------------------------------------------------------------------------
# Handler results
# ---------------------------------------------------------------------------


def normalize_result(result: Any) -> dict[str, Any] | None:
    """A handler's return value as a dict with snake_case keys (``None`` stays ``None``)."""
    if result is None:
        return None
    if isinstance(result, dict):
        return {snake(k): v for k, v in result.items()}
    if attrs.has(type(result)):
        return {f.name: getattr(result, f.name) for f in attrs.fields(type(result))}
    if hasattr(result, "__dict__"):
        return {snake(k): v for k, v in vars(result).items() if not k.startswith("_")}
    return {"value": result}


def result_field(result: Any, name: str, default: Any = None) -> Any:
    """Read ``name`` (snake_case) from a handler result, accepting camelCase keys too."""
    norm = normalize_result(result)
    if not norm:
        return default
    return norm.get(name, default)


# ---------------------------------------------------------------------------
# Reducers: one per semantics, and special ones where an event has its own rules
# ---------------------------------------------------------------------------


async def _answers(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any
) -> AsyncIterator[tuple[Handler, dict[str, Any]]]:
    """Call the handlers in turn; yield each one that answered, with its answer normalized."""
    for handler in handlers:
        norm = normalize_result(await d._call(handler, name, event, ctx, signal=signal))
        if norm:
            yield handler, norm


async def cancel(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    result: dict[str, Any] | None = None
    for handler in handlers:
        value = await d._call(handler, name, event, ctx, signal=signal)
        if value is False:  # omp: returning false from a before-event cancels it
            return {"cancel": True}
        norm = normalize_result(value)
        if norm:
            result = norm
            if norm.get("cancel"):
                return norm
    return result


async def first(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    for handler in handlers:
        result = await d._call(handler, name, event, ctx, signal=signal)
        if result is not None and result is not False:
            return result
    return None


async def chain(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    result = None
    for handler in handlers:
        value = await d._call(handler, name, event, ctx, signal=signal)
        if value is not None:
            result = value
    return result


async def tool_call(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    result: dict[str, Any] | None = None
    contexts: list[str] = []
    failed, cut = object(), object()
    for handler in handlers:
        value = await d._call(handler, name, event, ctx, fail=failed, aborted=cut, signal=signal)
        if value is failed:
            return {"block": True, "reason": f"Blocked: the tool_call handler of {handler.source} failed"}
        if value is cut:
            return {"block": True, "reason": ABORTED_REASON}
        problem = _shape_problem(value, _TOOL_CALL_FIELDS)
        if problem is not None:  # fail closed, as for a raise: a guard that cannot be read guards nothing
            await d.report(handler, name, TypeError(f"tool_call handler returned {problem}"))
            return {
                "block": True,
                "reason": f"Blocked: the tool_call handler of {handler.source} returned {problem}",
            }
        norm = normalize_result(value)
        if not norm:
            continue
        revised = norm.get("input")
        if isinstance(revised, dict):
            event.input = revised
        if norm.get("block"):
            return norm
        add_context(contexts, norm.get("additional_context"))
        result = {k: v for k, v in norm.items() if k != "additional_context"}
    if contexts:
        result = {**(result or {}), "additional_context": contexts}
    return result


def add_context(contexts: list[str], value: Any) -> None:
    """Keep a handler's ``additionalContext`` unless blank or a repeat (ignoring surrounding space)."""
    if isinstance(value, str) and value.strip() and value.strip() not in {c.strip() for c in contexts}:
        contexts.append(value)


ABORTED_REASON = "Operation aborted"

# What a handler result may hold: field -> the types its value may have (None always may).
_TOOL_CALL_FIELDS: dict[str, tuple[type, ...]] = {
    "block": (bool,),
    "reason": (str,),
    "input": (dict,),
    "additional_context": (str,),
}
_BEFORE_AGENT_START_FIELDS: dict[str, tuple[type, ...]] = {
    "message": (dict, object),
    "messages": (list,),
    "system_prompt": (str,),
}
_SCALARS = (str, bytes, int, float, bool, list, tuple, set)


def _shape_problem(value: Any, fields: dict[str, tuple[type, ...]]) -> str | None:
    """What is wrong with a handler's result (``"a str, not ..."``), or ``None`` if it fits ``fields``."""
    wanted = "None or {" + ", ".join(fields) + "}"
    if value is None:
        return None
    if isinstance(value, _SCALARS):
        return f"a {type(value).__name__} ({_short(value)}), not {wanted}"
    norm = normalize_result(value) or {}
    unknown = sorted(set(norm) - set(fields))
    if unknown:
        return f"unknown fields {', '.join(unknown)}, not {wanted}"
    for key, types in fields.items():
        field = norm.get(key)
        if field is None:
            continue
        if not isinstance(field, types) or (object in types and isinstance(field, _SCALARS)):
            return f"{key} as a {type(field).__name__}, not {wanted}"
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


async def tool_result(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    patch: dict[str, Any] = {}
    contexts: list[str] = []
    async for _handler, norm in _answers(d, handlers, name, event, ctx, signal):
        for key in ("content", "details", "structured_content", "is_error"):
            if norm.get(key) is not None:
                value = norm[key]
                if key == "content":
                    from piko.data.wire import blocks_from_wire

                    value = blocks_from_wire(value) if isinstance(value, list) else value
                    if norm.get("structured_content") is None:  # it may no longer match (pi 1.6)
                        event.structured_content = None
                        patch["structured_content"] = None
                setattr(event, key, value)
                patch[key] = value
        add_context(contexts, norm.get("additional_context"))
    if contexts:
        patch["additional_context"] = contexts
    return patch or None


async def input_transform(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    original = (event.text, event.images)
    async for _handler, norm in _answers(d, handlers, name, event, ctx, signal):
        action = norm.get("action")
        if action == "handled" or norm.get("handled") is True:
            return {"action": "handled", "text": event.text, "images": event.images}
        if action == "transform" or (action is None and "text" in norm):
            if norm.get("text") is not None:
                event.text = str(norm["text"]).strip()
            if norm.get("images") is not None:
                event.images = norm["images"]
    changed = (event.text, event.images) != original
    return {"action": "transform" if changed else "continue", "text": event.text, "images": event.images}


async def before_agent_start(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    messages: list[Any] = []
    modified = False
    for handler in handlers:
        value = await d._call(handler, name, event, ctx, signal=signal)
        problem = _shape_problem(value, _BEFORE_AGENT_START_FIELDS) or _messages_problem(value)
        if problem is not None:
            await d.report(
                handler, name, TypeError(f"before_agent_start handler returned {problem}; ignored")
            )
            continue
        norm = normalize_result(value)
        if not norm:
            continue
        if norm.get("message") is not None:
            messages.append(norm["message"])
        for extra in norm.get("messages") or []:
            messages.append(extra)
        if norm.get("system_prompt") is not None:
            event.system_prompt = norm["system_prompt"]
            modified = True
    if not messages and not modified:
        return None
    return {"system_prompt": event.system_prompt if modified else None, "messages": messages}


def _messages_problem(value: Any) -> str | None:
    extra = result_field(value, "messages") if value is not None else None
    for item in extra or []:
        if isinstance(item, _SCALARS):
            return f"messages holding a {type(item).__name__}, not messages"
    return None


async def context(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    from piko.data.wire import message_from_wire

    for handler in handlers:
        value = await d._call(handler, name, event, ctx, signal=signal)
        replacement = value if isinstance(value, list) else result_field(value, "messages")
        if isinstance(replacement, list):
            event.messages = [message_from_wire(m) if isinstance(m, dict) else m for m in replacement]
    return event.messages


async def context_with_system(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    """Each handler sees the previous one's ``systemPrompt`` and ``messages``; a result that is not
    a string prompt or a list of messages leaves that part as it was."""
    from piko.data.wire import message_from_wire

    for handler in handlers:
        value = await d._call(handler, name, event, ctx, signal=signal)
        prompt = result_field(value, "system_prompt")
        if isinstance(prompt, str):
            event.system_prompt = prompt
        replacement = result_field(value, "messages")
        if isinstance(replacement, list):
            event.messages = [message_from_wire(m) if isinstance(m, dict) else m for m in replacement]
    return event.system_prompt, event.messages


async def session_compacting(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    """omp's ``session.compacting``: every handler's ``context`` lines, the last ``prompt`` and the
    merged ``preserveData``."""
    context: list[str] = []
    prompt: str | None = None
    preserve: dict[str, Any] = {}
    async for _handler, norm in _answers(d, handlers, name, event, ctx, signal):
        lines = norm.get("context")
        if isinstance(lines, str):
            lines = [lines]
        if isinstance(lines, list):
            context.extend(str(line) for line in lines if str(line).strip())
        if isinstance(norm.get("prompt"), str) and norm["prompt"].strip():
            prompt = norm["prompt"]
        if isinstance(norm.get("preserve_data"), dict):
            preserve.update(norm["preserve_data"])
    if not context and prompt is None and not preserve:
        return None
    return {"context": context, "prompt": prompt, "preserve_data": preserve}


def prompt_and_messages(event: Any) -> Any:
    return event.system_prompt, event.messages


async def payload(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    for handler in handlers:
        value = await d._call(handler, name, event, ctx, signal=signal)
        if value is not None:
            event.payload = value
    return event.payload


async def _replacing_message(
    d: Dispatcher,
    handlers: list[Handler],
    name: str,
    event: Any,
    ctx: Any,
    signal: Any,
    key: str,
    replace: Callable[[Any, Any], Any],
) -> Any:
    """Walk the handlers; one that returns ``key`` has ``replace(message, value)`` make the new
    message, each seeing the previous one's. A ``ValueError`` from ``replace`` is reported as that
    handler's error and its answer dropped."""
    for handler in handlers:
        value = result_field(await d._call(handler, name, event, ctx, signal=signal), key)
        if value is None:
            continue
        try:
            event.message = replace(event.message, value)
        except ValueError as exc:
            await d.report(handler, name, exc)
    return event.message


def _same_role_message(current: Any, replacement: Any) -> Any:
    from piko.data.messages import message_role
    from piko.data.wire import message_from_wire

    if isinstance(replacement, dict):
        replacement = message_from_wire(replacement)
    if message_role(replacement) != message_role(current):
        raise ValueError("message_end handlers must return a message with the same role")
    return replacement


def _rewritten_text(current: AssistantMessage, content: Any) -> AssistantMessage:
    from piko.data.wire import block_from_wire

    new_blocks = _validated_text_rewrite(current.content, [block_from_wire(b) for b in content])
    return attrs.evolve(current, content=new_blocks)


async def message_end(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    return await _replacing_message(d, handlers, name, event, ctx, signal, "message", _same_role_message)


async def assistant_message(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    return await _replacing_message(d, handlers, name, event, ctx, signal, "content", _rewritten_text)


def _validated_text_rewrite(old: list[Any], new: list[Any]) -> list[Any]:
    """Accept only a rewrite that changes the text of text blocks; edited text loses its signature."""
    if len(old) != len(new):
        raise ValueError("assistant_message: the replacement must keep the number of content blocks")
    result: list[Any] = []
    for before, after in zip(old, new, strict=True):
        if type(before) is not type(after):
            raise ValueError("assistant_message: the replacement must keep block types and order")
        if not isinstance(before, TextContent):
            if attrs.has(type(before)) and attrs.asdict(before) != attrs.asdict(after):
                raise ValueError("assistant_message: only text blocks may change")
            result.append(before)
            continue
        if after.text == before.text:
            result.append(before)
        else:
            result.append(attrs.evolve(before, text=after.text, text_signature=None))
    return result


async def resources(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    collected: dict[str, list[tuple[str, str]]] = {"skill_paths": [], "prompt_paths": [], "theme_paths": []}
    async for handler, norm in _answers(d, handlers, name, event, ctx, signal):
        for key, paths in collected.items():
            for path in norm.get(key) or []:
                paths.append((str(path), handler.source))
    return collected


async def fallback(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    for handler in handlers:
        if await d._call(handler, name, event, ctx, signal=signal) is True:
            return True
    return False


async def session_stop(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    """omp's stop hook: a ``{"decision": "block", "reason"}`` refusal outranks advisory
    ``{"continue": True, "additionalContext"}`` requests, whose contexts are gathered in order."""
    refusal: dict[str, Any] | None = None
    contexts: list[str] = []
    advised = False
    async for _handler, norm in _answers(d, handlers, name, event, ctx, signal):
        if norm.get("decision") == "block":
            if refusal is None:
                refusal = {"block": True, "reason": str(norm.get("reason") or "")}
        elif norm.get("continue"):
            advised = True
            add_context(contexts, norm.get("additional_context"))
    if refusal is not None:
        return refusal
    return {"continue": True, "additional_context": contexts} if advised else None


TRUST_ANSWERS = ("yes", "no", "undecided")


async def project_trust(
    d: Dispatcher, handlers: list[Handler], name: str, event: Any, ctx: Any, signal: Any = None
) -> Any:
    """The first ``{"trusted": "yes" | "no"}`` wins; ``"undecided"`` and nothing pass the turn on;
    any other answer is reported as the handler's error and passes it on too."""
    async for handler, norm in _answers(d, handlers, name, event, ctx, signal):
        answer = norm.get("trusted")
        if answer not in TRUST_ANSWERS:
            await d.report(
                handler,
                name,
                ValueError(
                    f'project_trust must return {{"trusted": "yes" | "no" | "undecided"}}, got {_short(norm)}'
                ),
            )
            continue
        if answer != "undecided":
            return {"trusted": answer, "remember": norm.get("remember") is True, "by": handler.source}
    return None


# ---------------------------------------------------------------------------
# Results when nobody listens
# ---------------------------------------------------------------------------


def unchanged(field: str) -> Callable[[Any], Any]:
    """The event's own ``field``, as no handler changed it."""
    return lambda event: getattr(event, field)


def input_unchanged(event: Any) -> Any:
    return {"action": "continue", "text": event.text, "images": event.images}


def no_resources(event: Any) -> Any:
    return {"skill_paths": [], "prompt_paths": [], "theme_paths": []}


def declined(event: Any) -> bool:
    return False


GENERIC: dict[Semantics, Any] = {
    Semantics.CANCEL: cancel,
    Semantics.FIRST: first,
    Semantics.CHAIN: chain,
    Semantics.BLOCK: tool_call,
    Semantics.COLLECT: resources,
}
"""The reducer of each semantics, for events that do not name one."""
