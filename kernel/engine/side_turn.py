"""``ctx.run_ephemeral_turn``: a side turn on the current conversation, kept out of the session.

The question goes to the session's model with a snapshot of the conversation (after the
``context`` handlers, as a real request); the answer comes back to the calling extension and is
neither shown nor recorded. Tool calls the model makes are discarded, never run.
"""

from __future__ import annotations

import contextvars
import copy
import time
from collections.abc import Callable
from typing import Any

from piko.data.messages import AssistantMessage
from piko.data.messages import TextContent
from piko.data.messages import UserMessage
from piko.data.streaming import Context
from piko.lib.abort import AbortController

REPLY_LIMIT = 4096  # bytes of reply kept when dedupe_reply is on

# Set while a side turn's context and provider hooks run: a side turn started there is refused
# (the recursion bound of the reference); ``on_text_delta`` runs outside it.
_IN_SIDE_TURN: contextvars.ContextVar[bool] = contextvars.ContextVar("piko_in_side_turn", default=False)


class SideTurnResult:
    """``reply_text`` (also ``result["replyText"]``) and the whole assistant ``message``."""

    __slots__ = ("message", "reply_text")

    def __init__(self, reply_text: str, message: AssistantMessage) -> None:
        self.reply_text = reply_text
        self.message = message

    def __getitem__(self, key: str) -> Any:
        return {"replyText": self.reply_text, "reply_text": self.reply_text, "message": self.message}[key]

    def __repr__(self) -> str:
        return f"SideTurnResult(reply_text={self.reply_text!r})"


def dedupe(text: str) -> str:
    """Runs of more than three identical lines collapsed to three; at most 4 KiB kept."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(out) >= 3 and out[-1] == out[-2] == out[-3] == line:
            continue
        out.append(line)
    joined = "\n".join(out)
    data = joined.encode("utf-8")
    if len(data) > REPLY_LIMIT:
        joined = data[:REPLY_LIMIT].decode("utf-8", errors="ignore")
    return joined


async def run_side_turn(
    session: Any,
    prompt_text: str,
    *,
    tools: bool = True,
    max_tokens: int | None = None,
    max_context_bytes: int | None = None,
    on_text_delta: Callable[[str], Any] | None = None,
    signal: Any = None,
    history: list[Any] | None = None,
    dedupe_reply: bool = True,
) -> SideTurnResult:
    """Ask the session's model ``prompt_text`` on a snapshot of the conversation; see the module doc.

    Started from the ``context``, ``before_provider_request`` or ``after_provider_response``
    handlers of a running side turn, it raises ``RuntimeError``."""
    if _IN_SIDE_TURN.get():
        raise RuntimeError(
            "run_ephemeral_turn: a side turn cannot start another from its context or provider hooks"
        )
    token = _IN_SIDE_TURN.set(True)
    try:
        return await _side_turn(
            session, prompt_text, tools=tools, max_tokens=max_tokens, max_context_bytes=max_context_bytes,
            on_text_delta=on_text_delta, signal=signal, history=history, dedupe_reply=dedupe_reply,
        )  # fmt: skip
    finally:
        _IN_SIDE_TURN.reset(token)


async def _side_turn(
    session: Any,
    prompt_text: str,
    *,
    tools: bool,
    max_tokens: int | None,
    max_context_bytes: int | None,
    on_text_delta: Callable[[str], Any] | None,
    signal: Any,
    history: list[Any] | None,
    dedupe_reply: bool,
) -> SideTurnResult:
    from piko.data.wire import to_wire
    from piko.engine.loop import tool_spec
    from piko.lib import jsonio

    for name, value in (("max_tokens", max_tokens), ("max_context_bytes", max_context_bytes)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
            raise ValueError(f"run_ephemeral_turn: {name} must be a positive integer; got {value!r}")
    config = session._loop_config()
    question = UserMessage(content=[TextContent(text=str(prompt_text))], timestamp=int(time.time() * 1000))
    messages = [*copy.deepcopy(list(session.messages)), *copy.deepcopy(list(history or [])), question]
    if config.transform_context is not None:
        messages = await config.transform_context(messages)
    llm_messages = config.convert_to_llm(messages)
    if max_context_bytes is not None:
        size = len(jsonio.dumps(to_wire(llm_messages)).encode("utf-8"))
        if size > max_context_bytes:
            raise ValueError(
                f"run_ephemeral_turn: the context is {size} bytes, over max_context_bytes {max_context_bytes}"
            )
    specs = [tool_spec(t) for t in session.agent.state.tools] if tools else []
    controller = AbortController()
    remove = (
        signal.add_listener(lambda: controller.abort())
        if signal is not None and hasattr(signal, "add_listener")
        else None
    )
    try:
        options = await config.make_options(controller.signal)
        if max_tokens is not None:
            options.max_tokens = max_tokens
        context = Context(system_prompt=session.system_prompt, messages=llm_messages, tools=specs)
        final: AssistantMessage | None = None
        async for event in config.stream_fn(config.model, context, options):
            if event.type == "text_delta" and event.delta and on_text_delta is not None:
                outside = _IN_SIDE_TURN.set(False)  # the caller's own code: not a hook of the turn
                try:
                    delivered = on_text_delta(event.delta)
                    if hasattr(delivered, "__await__"):
                        await delivered
                finally:
                    _IN_SIDE_TURN.reset(outside)
            elif event.type in ("done", "error"):
                final = event.final
                break
    except BaseException:
        controller.abort()
        raise
    finally:
        if remove is not None:
            remove()
    if final is None or final.stop_reason in ("error", "aborted"):
        reason = final.error_message if final is not None else "the stream ended without an answer"
        raise RuntimeError(f"run_ephemeral_turn failed: {reason}")
    text = "".join(b.text for b in final.content if isinstance(b, TextContent)).strip()
    return SideTurnResult(dedupe(text) if dedupe_reply else text, final)
