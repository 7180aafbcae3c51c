"""Streaming a window of lines out of a file of any size, with the counts pi's read tool reports.

pi reads the whole file, decodes it as UTF-8 (invalid bytes become U+FFFD) and splits on
``\\n``. This reads in chunks instead: it counts lines before the window, keeps the decoded
lines of the window only up to a line and byte budget, counts the rest, and keeps memory at a
chunk plus the budget whatever the file size. A newline byte never belongs to a multi-byte
sequence, so decoding line by line gives exactly the text whole-file decoding would.
"""

from __future__ import annotations

import codecs
from typing import BinaryIO

from attrs import define
from attrs import field

__all__ = ["LineWindow", "count_lines", "read_line_window"]

CHUNK_SIZE = 1 << 20  # read at call time, so tests can make it tiny


@define(kw_only=True)
class LineWindow:
    """The lines ``[start, stop)`` of a file, as far as the budget allowed keeping them.

    ``lines`` are decoded; when ``complete`` they are the whole window. ``window_lines`` and
    ``window_bytes`` describe the window's text (lines joined with ``\\n``, UTF-8 bytes).
    ``total_lines`` counts the file's lines as ``text.split("\\n")`` does.
    """

    lines: list[str] = field(factory=list)
    complete: bool = True
    first_line_bytes: int = 0
    window_lines: int = 0
    window_bytes: int = 0
    total_lines: int = 0
    start_beyond_end: bool = False


def _utf8_length(decoded: str) -> int:
    return len(decoded) if decoded.isascii() else len(decoded.encode("utf-8"))


def _decoded_size(decoder: codecs.IncrementalDecoder, piece: bytes) -> int:
    """UTF-8 bytes of ``piece`` once decoded (ASCII with nothing pending is its own length)."""
    if piece.isascii() and not decoder.getstate()[0]:
        return len(piece)
    return _utf8_length(decoder.decode(piece))


class _Reader:
    """Chunked reading with a count of the newlines consumed and an end-of-file flag."""

    def __init__(self, stream: BinaryIO, chunk_size: int) -> None:
        self._stream = stream
        self._chunk_size = chunk_size
        self._buffer = b""
        self._pos = 0
        self.newlines = 0
        self.eof = False

    def _available(self) -> bool:
        """Make unread bytes available; ``False`` at end of file."""
        if self._pos < len(self._buffer):
            return True
        chunk = self._stream.read(self._chunk_size)
        if not chunk:
            self.eof = True
            self._buffer, self._pos = b"", 0
            return False
        self._buffer, self._pos = chunk, 0
        return True

    def skip_lines(self, count: int | None) -> int:
        """Consume ``count`` newlines (``None``: all); returns how many were consumed."""
        consumed = 0
        while (count is None or consumed < count) and self._available():
            buffer, pos = self._buffer, self._pos
            found = buffer.count(b"\n", pos)
            need = None if count is None else count - consumed
            if need is None or found < need:
                consumed += found
                self._pos = len(buffer)
                continue
            for _ in range(need):
                pos = buffer.index(b"\n", pos) + 1
            consumed += need
            self._pos = pos
        self.newlines += consumed
        return consumed

    def count_lines(self, count: int | None) -> tuple[int, int]:
        """Consume up to ``count`` lines (``None``: to the end); ``(lines, UTF-8 bytes of their text)``.

        A line is counted once its newline is consumed, or at end of file for the last one;
        the bytes exclude the newlines.
        """
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        lines = 0
        size = 0
        while count is None or lines < count:
            if not self._available():
                size += _utf8_length(decoder.decode(b"", final=True))
                lines += 1
                break
            buffer, pos = self._buffer, self._pos
            need = None if count is None else count - lines
            found = buffer.count(b"\n", pos)
            if need is not None and found >= need:
                end = pos
                for _ in range(need):
                    end = buffer.index(b"\n", end) + 1
                piece = buffer[pos:end]
                self._pos = end
                found = need
            else:
                piece = buffer[pos:] if pos else buffer
                self._pos = len(buffer)
            size += _decoded_size(decoder, piece) - found
            lines += found
            self.newlines += found
        return lines, size

    def read_line(self, keep: int) -> tuple[str | None, int, bool]:
        """The next line: ``(text or None if longer than keep bytes, UTF-8 bytes, ended by a newline)``."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        parts: list[bytes] | None = []
        raw_size = 0
        size = 0
        terminated = False
        while self._available():
            buffer, pos = self._buffer, self._pos
            end = buffer.find(b"\n", pos)
            stop = len(buffer) if end == -1 else end
            piece = buffer[pos:stop]
            self._pos = stop if end == -1 else end + 1
            raw_size += len(piece)
            if parts is not None:
                if raw_size <= keep:
                    parts.append(piece)
                else:
                    parts = None
            size += _decoded_size(decoder, piece)
            if end != -1:
                terminated = True
                self.newlines += 1
                break
        size += _utf8_length(decoder.decode(b"", final=True))
        if parts is None or size > keep:
            return None, size, terminated
        return b"".join(parts).decode("utf-8", "replace"), size, terminated


def count_lines(stream: BinaryIO, chunk_size: int | None = None) -> int:
    """How many lines ``text.split("\\n")`` would give for the whole stream."""
    reader = _Reader(stream, chunk_size or CHUNK_SIZE)
    reader.skip_lines(None)
    return reader.newlines + 1


def read_line_window(
    stream: BinaryIO,
    start: int,
    stop: int | None,
    *,
    keep_lines: int,
    keep_bytes: int,
    chunk_size: int | None = None,
) -> LineWindow:
    """Lines ``[start, stop)`` of ``stream`` (``stop=None``: to the end), keeping decoded lines only
    while at most ``keep_lines`` lines joined by newlines fit in ``keep_bytes`` bytes."""
    reader = _Reader(stream, chunk_size or CHUNK_SIZE)
    window = LineWindow()
    if reader.skip_lines(start) < start:
        window.start_beyond_end = True
        window.total_lines = reader.newlines + 1
        return window
    if stop is not None and stop <= start:
        # An empty slice: its text is "", which is one empty line.
        window.lines = [""]
        window.window_lines = 1
        reader.skip_lines(None)
        window.total_lines = reader.newlines + 1
        return window
    kept_bytes = 0
    content_bytes = 0
    index = start
    at_end = False
    while stop is None or index < stop:
        budget = keep_bytes - kept_bytes - (1 if window.lines else 0)
        storing = window.complete and len(window.lines) < keep_lines and budget >= 0
        text, size, terminated = reader.read_line(budget if storing else -1)
        if index == start:
            window.first_line_bytes = size
        window.window_lines += 1
        content_bytes += size
        if storing and text is not None:
            kept_bytes += size + (1 if window.lines else 0)
            window.lines.append(text)
        else:
            window.complete = False
        index += 1
        if not terminated:
            at_end = True
            break
        if not window.complete:
            break
    if not at_end and not window.complete:
        remaining = None if stop is None else stop - index
        counted, size = reader.count_lines(remaining)
        window.window_lines += counted
        content_bytes += size
    reader.skip_lines(None)
    window.window_bytes = content_bytes + window.window_lines - 1
    window.total_lines = reader.newlines + 1
    return window
