"""Answers for the in-process faux provider in tests: ones that record what each request carried, and ones held until a gate opens."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from piko.data.messages import UserMessage
from piko.data.messages import text_of


def user_texts(context: Any) -> list[str]:
    """The text of each user message of a faux request's context."""
    return [text_of(m.content) for m in context.messages if isinstance(m, UserMessage)]


def recording(
    seen: list[Any], answer: Any = "ok", what: Callable[[Any], Any] = user_texts
) -> Callable[..., Any]:
    """A faux answer that appends ``what(context)`` of its request to ``seen``, then answers ``answer``."""

    def reply(context: Any, options: Any, state: Any, model: Any) -> Any:
        seen.append(what(context))
        return answer

    return reply


class Held:
    """A faux answer held until :attr:`gate` is set: it appends the request's :func:`user_texts` to
    ``seen`` (when given) as it starts, waits, then answers ``answer``."""

    def __init__(self, answer: Any, seen: list[Any] | None = None) -> None:
        self.answer = answer
        self.seen = seen
        self.gate = asyncio.Event()

    async def __call__(self, context: Any, options: Any, state: Any, model: Any) -> Any:
        if self.seen is not None:
            self.seen.append(user_texts(context))
        await self.gate.wait()
        return self.answer
