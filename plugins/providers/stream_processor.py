"""The base of the provider APIs' stream processors: the builder, the events not yet handed on,
the one text or thinking block open while a wire format streams them one after another, and
the loop that hands on each parsed piece's events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Generic
from typing import Literal
from typing import TypeVar

from piko.data.streaming import StreamEvent
from piko.plugins.providers.builder import MessageBuilder

OpenBlock = Literal["text", "thinking"]
Chunk = TypeVar("Chunk")


class StreamProcessor(Generic[Chunk]):
    """Feeds one wire format's parsed pieces (``Chunk``) into ``builder``: :meth:`handle` applies
    one; ``emit`` queues the events that :meth:`drain` hands on."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.events: list[StreamEvent] = []
        self.emit = self.events.append
        self.current: OpenBlock | None = None

    def handle(self, chunk: Chunk) -> None:
        """Apply one parsed piece of the wire format to the message (each API its own)."""
        raise NotImplementedError

    def finish(self) -> None:
        """The stream ended: end what is still open."""
        self.close_block()

    async def process(self, chunks: AsyncIterator[Chunk]) -> AsyncIterator[list[StreamEvent]]:
        """Each of ``chunks`` handled and its events handed on as one list (before the next is
        applied), then those of :meth:`finish`: a decoder's events."""
        async for chunk in chunks:
            self.handle(chunk)
            if batch := self.drain():
                yield batch
        self.finish()
        if batch := self.drain():
            yield batch

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
