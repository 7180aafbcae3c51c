"""The base of the provider APIs' stream processors: the builder, the events not yet handed on,
and the one text or thinking block open while a wire format streams them one after another."""

from __future__ import annotations

from typing import Literal

from piko.data.streaming import StreamEvent
from piko.plugins.providers.builder import MessageBuilder

OpenBlock = Literal["text", "thinking"]


class StreamProcessor:
    """Feeds one wire format's pieces into ``builder``; ``emit`` queues the events that
    :meth:`drain` hands to the decoder, one list per piece read."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.events: list[StreamEvent] = []
        self.emit = self.events.append
        self.current: OpenBlock | None = None

    @property
    def index(self) -> int:
        """The content index of the newest block."""
        return len(self.builder.message.content) - 1

    def drain(self) -> list[StreamEvent]:
        """The events emitted since the last call (a new list; empty when there were none)."""
        batch = self.events.copy()
        self.events.clear()
        return batch

    def open_block(self, kind: OpenBlock) -> None:
        """Make the newest block a ``kind`` block: close the other kind and start one, unless
        a block of that kind is open already."""
        if self.current == kind:
            return
        self.close_block()
        if kind == "thinking":
            self.emit(self.builder.thinking_start()[1])
        else:
            self.emit(self.builder.text_start()[1])
        self.current = kind

    def close_block(self) -> None:
        """End the open text or thinking block, if there is one."""
        if self.current == "text":
            self.emit(self.builder.text_end(self.index))
        elif self.current == "thinking":
            self.emit(self.builder.thinking_end(self.index))
        self.current = None
