"""What JSON cannot hold is made plain the same way in a session file and on the RPC wire (piko.data.wire.jsonable)."""

from __future__ import annotations

import json
from pathlib import Path

from piko.data.messages import AssistantMessage
from piko.data.messages import TextContent
from piko.data.messages import Usage
from piko.data.messages import UserMessage
from piko.data.wire import jsonable
from piko.plugins.modes.rpc.jsonl import serialize
from piko.sessions.manager import SessionManager


class Opaque:
    def __str__(self) -> str:
        return "<opaque>"


class BrokenWire:
    def to_wire(self) -> object:
        raise RuntimeError("no wire form")

    def __str__(self) -> str:
        return "<broken>"


AWKWARD = {
    "pair": (1, 2),
    "tags": frozenset({"a"}),
    "raw": b"caf\xc3\xa9 \xff",
    7: "int key",
    "block": TextContent(text="hi"),
    "thing": Opaque(),
    "broken": BrokenWire(),
}
PLAIN = {
    "pair": [1, 2],
    "tags": ["a"],
    "raw": "café \ufffd",
    "7": "int key",
    "block": {"type": "text", "text": "hi"},
    "thing": "<opaque>",
    "broken": "<broken>",
}


def test_jsonable_makes_each_kind_plain() -> None:
    assert jsonable(AWKWARD) == PLAIN
    assert jsonable([None, True, 1.5, "s"]) == [None, True, 1.5, "s"]


def test_a_session_entry_and_an_rpc_record_agree(tmp_path: Path) -> None:
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"))
    manager.append_custom("state", AWKWARD)
    manager.append_message(UserMessage(content="hello", timestamp=1))
    manager.append_message(  # the first answer writes the file
        AssistantMessage(content=[], api="openai-completions", provider="mock", model="mock-1", usage=Usage())
    )
    lines = Path(manager.session_file).read_text(encoding="utf-8").splitlines()
    (custom,) = [json.loads(line) for line in lines if '"custom"' in line]
    assert custom["data"] == PLAIN
    assert json.loads(serialize({"type": "extension_state", "data": AWKWARD}))["data"] == PLAIN
