"""msgspec's decoding of message lines (``piko.data.fast_decode``) gives what the cattrs path gives.

The fast path takes a subset of lines whole and refuses the rest (``None``: the cattrs path then
decodes them); for each line it takes, the message must equal, to the type of every block, the
one :func:`piko.data.wire.message_from_wire` makes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import msgspec
import orjson
import pytest

from piko.data.fast_decode import MIRRORS
from piko.data.fast_decode import decode_message_line
from piko.data.wire import message_from_wire
from piko.sessions import reading
from piko.sessions.manager import SessionManager

TESTS = Path(__file__).resolve().parent.parent


def slow(line: bytes) -> Any:
    return message_from_wire(orjson.loads(line)["message"])


def same(fast: Any, slow_: Any) -> None:
    """Equal, of the same classes all the way down, and nothing left over in ``extra``."""
    assert type(fast) is type(slow_)
    assert fast == slow_
    assert fast.extra == slow_.extra == {}
    if isinstance(fast.content, list):
        assert [type(b) for b in fast.content] == [type(b) for b in slow_.content]
        assert all(b.extra == {} for b in fast.content)


def line(message: dict[str, Any]) -> bytes:
    entry = {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-12-03T10:00:00.000Z"}
    return json.dumps({**entry, "message": message}, separators=(",", ":")).encode()


ASSISTANT = {
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig", "redacted": False},
        {"type": "text", "text": "hello", "textSignature": "t1"},
        {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a", "n": [1, 2.5]}},
    ],
    "api": "anthropic-messages",
    "provider": "anthropic",
    "model": "claude",
    "usage": {
        "input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 1, "reasoning": 3, "totalTokens": 16,
        "cost": {"input": 0.5, "output": 1, "cacheRead": 0, "cacheWrite": 0, "total": 1.5, "totalFromProvider": True},
    },
    "stopReason": "toolUse",
    "timestamp": 1780000000000,
    "responseId": "r1",
    "rawStopReason": "tool_use",
    "durationMs": 1200,
    "thinkingLevel": "high",
}  # fmt: skip


def test_the_mirrors_have_the_data_model_fields_and_defaults() -> None:
    for cls, mirror in MIRRORS.items():
        fields = [f for f in attrs.fields(cls) if f.name != "extra"]
        info = msgspec.structs.fields(mirror)
        assert [f.name for f in info] == [f.name for f in fields], cls.__name__
        for ours, theirs in zip(fields, info, strict=True):
            default = ours.default.factory() if isinstance(ours.default, attrs.Factory) else ours.default  # type: ignore[arg-type]
            mirrored = theirs.default_factory() if theirs.default is msgspec.NODEFAULT else theirs.default
            if attrs.has(type(default)):
                assert type(mirrored) is MIRRORS[type(default)], (cls.__name__, ours.name)
            else:
                assert mirrored == default and type(mirrored) is type(default), (cls.__name__, ours.name)


def test_every_message_line_of_the_fixtures_decodes_alike() -> None:
    taken = refused = 0
    for path in sorted(TESTS.rglob("*.jsonl")):
        for raw in path.read_bytes().splitlines():
            if not raw.startswith(b'{"type":"message"'):
                continue
            fast = decode_message_line(raw)
            if fast is None:
                refused += 1
                continue
            taken += 1
            same(fast, slow(raw))
    assert taken > 100 and taken > refused, (taken, refused)


@pytest.mark.parametrize(
    "message",
    [
        ASSISTANT,
        {**ASSISTANT, "usage": {"input": 1, "output": 1}, "content": []},
        {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "boom", "timestamp": 1},
        {"role": "user", "content": "hi", "timestamp": 2},
        {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image", "data": "AAAA", "mimeType": "image/jpeg"}], "timestamp": 3},
        {"role": "user"},
        {"role": "toolResult", "toolCallId": "c1", "toolName": "read", "content": [{"type": "text", "text": "x"}],
         "details": {"diff": "-a\n+b", "n": 1}, "isError": True, "durationMs": 5, "timestamp": 4},
    ],
    ids=["assistant", "partial-usage", "error", "user-text", "user-blocks", "user-bare", "tool-result"],
)  # fmt: skip
def test_lines_the_mirrors_take(message: dict[str, Any]) -> None:
    raw = line(message)
    fast = decode_message_line(raw)
    assert fast is not None
    same(fast, slow(raw))


@pytest.mark.parametrize(
    "message",
    [
        {**ASSISTANT, "futureField": 1},  # kept in extra by the cattrs path
        {**ASSISTANT, "content": [{"type": "video", "url": "x"}]},  # a block type it does not know
        {**ASSISTANT, "content": [{"type": "text", "text": "a", "cacheControl": {}}]},
        {**ASSISTANT, "stopReason": "weird"},
        {"role": "user", "content": "hi", "timestamp": "yesterday"},
        {"role": "user", "content": None},
        {"role": "custom", "customType": "note", "content": "hi"},
        {"role": "bashExecution", "command": "ls", "output": ""},
    ],
    ids=["unknown-key", "unknown-block", "block-extra", "stop-reason", "bad-timestamp", "null-content",
         "custom", "bash"],
)  # fmt: skip
def test_lines_the_mirrors_leave_to_cattrs(message: dict[str, Any]) -> None:
    assert decode_message_line(line(message)) is None


def test_cut_and_broken_lines_are_refused() -> None:
    raw = line(ASSISTANT)
    assert decode_message_line(raw[:-20]) is None
    assert decode_message_line(b"not json") is None
    assert decode_message_line(raw.replace(b'"hello"', b'"\\ud800"')) is None  # a lone surrogate


@pytest.mark.parametrize("on_disk", [False, True], ids=["lines-in-memory", "lines-left-on-disk"])
def test_a_long_session_decodes_through_msgspec_to_the_same_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_disk: bool
) -> None:
    from piko.data.messages import AssistantMessage
    from piko.data.messages import TextContent
    from piko.data.messages import UserMessage

    turns = reading.FAST_DECODE_AT
    manager = SessionManager.create(str(tmp_path), session_dir=str(tmp_path / "sessions"))
    for n in range(turns):
        manager.append_message(UserMessage(content=f"question {n}", timestamp=n))
        manager.append_message(
            AssistantMessage(content=[TextContent(text=f"answer {n}")], provider="p", model="m", timestamp=n)
        )
    path = manager.session_file
    assert path is not None
    used: list[int] = []
    real = reading._fast_decoder

    def counting(count: int) -> Any:
        found = real(count)
        used.append(found is not None)
        return found

    monkeypatch.setattr(reading, "_fast_decoder", counting)
    if on_disk:  # no message line kept in memory: all are read back from the file
        monkeypatch.setattr(reading, "KEEP_TAIL", 0)
    fast = SessionManager.open(path, cwd=str(tmp_path)).build_context().messages
    monkeypatch.setattr(reading, "FAST_DECODE_AT", 10**9)
    plain = SessionManager.open(path, cwd=str(tmp_path)).build_context().messages
    assert used[0] is True and used[-1] is False
    assert len(fast) == len(plain) == 2 * turns
    assert fast == plain
    assert [type(m) for m in fast] == [type(m) for m in plain]
