"""When and what a session writes: nothing before the first assistant message, then line by line."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
from session_helpers import assistant
from session_helpers import tool_result
from session_helpers import user

from piko.data.messages import ImageContent
from piko.data.messages import TextContent
from piko.data.messages import ToolCall
from piko.sessions.ids import iso_from_ms
from piko.sessions.ids import ms_from_iso
from piko.sessions.ids import new_entry_id
from piko.sessions.ids import new_session_id
from piko.sessions.manager import SessionManager

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-7][0-9a-f]{2}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def lines(path: str | None) -> list[dict]:
    assert path is not None
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def test_new_session_writes_nothing_until_the_first_assistant_message(agent_dir: Path, work: Path) -> None:
    manager = SessionManager.create(str(work))
    directory = agent_dir / "sessions" / ("--" + str(work).lstrip("/").replace("/", "-") + "--")
    assert manager.session_dir == str(directory) and directory.is_dir()
    assert manager.session_file is not None
    name = os.path.basename(manager.session_file)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_" + manager.session_id + r"\.jsonl", name)
    assert UUID7.match(manager.session_id)

    manager.append_model_change("mock", "mock-1")
    manager.append_thinking_level_change("off")
    first = manager.append_message(user("hello"))
    assert not os.path.exists(manager.session_file)  # pi: no file without an assistant message

    manager.append_message(assistant("hi"))
    written = lines(manager.session_file)
    assert [e["type"] for e in written] == [
        "session",
        "model_change",
        "thinking_level_change",
        "message",
        "message",
    ]
    header = written[0]
    assert list(header) == ["type", "version", "id", "timestamp", "cwd"]
    assert header["version"] == 3 and header["id"] == manager.session_id and header["cwd"] == str(work)
    assert name.startswith(header["timestamp"].replace(":", "-").replace(".", "-"))
    assert written[3]["id"] == first

    before = Path(manager.session_file).read_bytes()
    again = manager.append_message(user("again"))  # from now on: one line per entry, at once
    after = Path(manager.session_file).read_bytes()
    assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 1
    assert json.loads(after.splitlines()[-1])["id"] == again


def test_entry_shapes_and_key_order_are_pis(agent_dir: Path, work: Path) -> None:
    manager = SessionManager.create(str(work))
    m = manager.append_model_change("anthropic", "claude-sonnet-4-5")
    t = manager.append_thinking_level_change("high")
    u = manager.append_message(user("question"))
    a = manager.append_message(assistant("answer"))
    c = manager.append_compaction("summary text", u, 1234, {"readFiles": ["a.py"], "modifiedFiles": []}, True)
    c2 = manager.append_compaction("plain", u, 10)
    b = manager.append_branch_summary(a, "left branch")
    x = manager.append_custom("my-ext", {"n": 1})
    x2 = manager.append_custom("my-ext-empty")
    cm = manager.append_custom_message("note", "text note", True, {"k": 2})
    cm2 = manager.append_custom_message(
        "blocks", [TextContent(text="t"), ImageContent(data="AAAA", mime_type="image/png")], False
    )
    lab = manager.append_label(u, "start")
    lab2 = manager.append_label(u, None)
    s = manager.append_session_info("  My session  ")
    entries = {e["id"]: e for e in lines(manager.session_file)[1:]}
    tree = ["type", "id", "parentId", "timestamp"]
    assert list(entries[m]) == [*tree, "provider", "modelId"]
    assert list(entries[t]) == [*tree, "thinkingLevel"]
    assert list(entries[u]) == [*tree, "message"]
    assert list(entries[u]["message"]) == ["role", "content", "timestamp"]
    assert list(entries[a]["message"]) == [
        "role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp", "responseId",
    ]  # fmt: skip
    assert list(entries[c]) == [*tree, "summary", "firstKeptEntryId", "tokensBefore", "details", "fromHook"]
    assert list(entries[c2]) == [*tree, "summary", "firstKeptEntryId", "tokensBefore"]
    assert list(entries[b]) == [*tree, "fromId", "summary"]
    assert list(entries[x]) == ["type", "customType", "data", "id", "parentId", "timestamp"]
    assert list(entries[x2]) == ["type", "customType", "id", "parentId", "timestamp"]
    assert list(entries[cm]) == [
        "type",
        "customType",
        "content",
        "display",
        "details",
        "id",
        "parentId",
        "timestamp",
    ]
    assert entries[cm2]["content"] == [
        {"type": "text", "text": "t"},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
    ]
    assert list(entries[lab]) == [*tree, "targetId", "label"]
    assert list(entries[lab2]) == [*tree, "targetId"]  # a cleared label has no label key (undefined)
    assert entries[s]["name"] == "My session"
    # Every entry hangs off the one before; the first off nothing.
    ids = list(entries)
    assert entries[ids[0]]["parentId"] is None
    assert all(entries[ids[i]]["parentId"] == ids[i - 1] for i in range(1, len(ids)))
    assert all(ISO.match(e["timestamp"]) and re.fullmatch(r"[0-9a-f]{8}", e["id"]) for e in entries.values())
    # JavaScript's numbers: the cost 0.0000015 stays as pi writes it.
    raw = Path(manager.session_file or "").read_text(encoding="utf-8")
    assert (
        '"cost":{"input":0.0000015,"output":0.0000015,"cacheRead":0,"cacheWrite":0,"total":0.000003}' in raw
    )


def test_in_memory_session_never_writes(agent_dir: Path, work: Path) -> None:
    manager = SessionManager.in_memory(str(work))
    manager.append_message(user("q"))
    manager.append_message(assistant("a"))
    assert manager.session_file is None and not manager.is_persisted()
    assert not (agent_dir / "sessions").exists()
    assert len(manager.build_context().messages) == 2
    assert manager.create_branched_session(manager.get_entries()[0].id) is None
    assert [e.type for e in manager.get_entries()] == ["message"]
    assert not (agent_dir / "sessions").exists()


def test_session_dir_override(tmp_path: Path, work: Path, agent_dir: Path) -> None:
    custom = tmp_path / "custom-sessions"
    manager = SessionManager.create(str(work), session_dir=str(custom))
    manager.append_message(user("q"))
    manager.append_message(assistant("a"))
    assert Path(manager.session_file or "").parent == custom
    assert not (agent_dir / "sessions").exists()


def test_reopened_session_appends_after_the_last_entry(agent_dir: Path, work: Path) -> None:
    manager = SessionManager.create(str(work))
    manager.append_message(user("q"))
    last = manager.append_message(assistant("a"))
    before = Path(manager.session_file or "").read_bytes()

    again = SessionManager.open(manager.session_file or "")
    assert again.session_id == manager.session_id and again.leaf_id == last and again.cwd == str(work)
    new = again.append_message(user("more"))
    data = Path(manager.session_file or "").read_bytes()
    assert data.startswith(before) and data.count(b"\n") == before.count(b"\n") + 1
    assert json.loads(data.splitlines()[-1])["parentId"] == last
    assert again.leaf_id == new


def test_loaded_file_without_assistant_message_gets_no_duplicate_header(tmp_path: Path, work: Path) -> None:
    """pi would write the header and old entries a second time here (its flush writes everything)."""
    path = tmp_path / "s.jsonl"
    path.write_text(
        json.dumps(
            {
                "type": "session",
                "version": 3,
                "id": "x",
                "timestamp": "2026-01-01T00:00:00.000Z",
                "cwd": str(work),
            }
        )
        + "\n",
        encoding="utf-8",
    )
    manager = SessionManager.open(str(path))
    manager.append_message(user("q"))
    assert path.read_text(encoding="utf-8").count("\n") == 1  # still waiting for an assistant message
    manager.append_message(assistant("a"))
    written = lines(str(path))
    assert [e["type"] for e in written] == ["session", "message", "message"]


def test_deleted_file_is_written_whole_again(agent_dir: Path, work: Path) -> None:
    manager = SessionManager.create(str(work))
    manager.append_message(user("q"))
    manager.append_message(assistant("a"))
    os.unlink(manager.session_file or "")
    manager.append_message(user("again"))
    assert [e["type"] for e in lines(manager.session_file)] == ["session", "message", "message", "message"]


def test_new_session_with_parent_and_explicit_missing_path(
    tmp_path: Path, work: Path, agent_dir: Path
) -> None:
    manager = SessionManager.create(str(work))
    old_id = manager.session_id
    path = manager.new_session(parent_session="/some/parent.jsonl")
    assert path == manager.session_file and manager.session_id != old_id
    manager.append_message(user("q"))
    manager.append_message(assistant("a"))
    header = lines(manager.session_file)[0]
    assert list(header) == ["type", "version", "id", "timestamp", "cwd", "parentSession"]
    assert header["parentSession"] == "/some/parent.jsonl"

    target = tmp_path / "explicit" / "named.jsonl"
    target.parent.mkdir()
    opened = SessionManager.open(str(target), cwd=str(work))
    assert opened.session_file == str(target) and opened.get_entries() == []
    opened.append_message(user("q"))
    opened.append_message(assistant("a"))
    assert lines(str(target))[0]["cwd"] == str(work)


def test_ids_timestamps_and_session_ids() -> None:
    taken = {f"{i:08x}" for i in range(1000)}
    for _ in range(200):
        assert re.fullmatch(r"[0-9a-f]{8}", new_entry_id(taken)) and new_entry_id(taken) not in taken
    ids = [new_session_id() for _ in range(2000)]
    assert all(UUID7.match(i) for i in ids)
    assert ids == sorted(ids) and len(set(ids)) == len(ids)  # monotonic within a millisecond
    now_ms = time.time_ns() // 1_000_000
    assert abs(int(ids[-1].replace("-", "")[:12], 16) - now_ms) < 5000
    assert iso_from_ms(1795978950908) == "2026-11-29T19:02:30.908Z"
    assert ms_from_iso("2026-11-29T19:02:30.908Z") == 1795978950908
    assert ms_from_iso("2026-11-29T20:02:30.9+01:00") == 1795978950900
    assert ms_from_iso("not a date") is None


def test_full_id_after_100_collisions() -> None:
    class Everything:
        def __contains__(self, item: object) -> bool:
            return True

    assert len(new_entry_id(Everything())) == 36  # pi falls back to a whole UUID


def test_append_accepts_wire_dicts_and_tool_rounds(agent_dir: Path, work: Path) -> None:
    manager = SessionManager.create(str(work))
    manager.append_message({"role": "user", "content": "plain string", "timestamp": 5})
    call = ToolCall(id="call_1", name="bash", arguments={"command": "ls"})
    manager.append_message(assistant("running", tool_call=call))
    manager.append_message(tool_result("call_1", "a.txt\n"))
    written = lines(manager.session_file)
    assert written[1]["message"] == {"role": "user", "content": "plain string", "timestamp": 5}
    assert written[2]["message"]["content"][1] == {
        "type": "toolCall",
        "id": "call_1",
        "name": "bash",
        "arguments": {"command": "ls"},
    }
    assert written[3]["message"]["toolCallId"] == "call_1"
    context = manager.build_context()
    assert context.messages[0].content == "plain string"


def test_label_on_unknown_entry_and_branch_to_unknown_fail(agent_dir: Path, work: Path) -> None:
    manager = SessionManager.in_memory(str(work))
    with pytest.raises(ValueError, match="Entry nope not found"):
        manager.append_label("nope", "x")
    with pytest.raises(ValueError, match="Entry nope not found"):
        manager.branch("nope")
    with pytest.raises(ValueError, match="Entry nope not found"):
        manager.create_branched_session("nope")


def test_failed_write_keeps_entries_and_retries(agent_dir: Path, work: Path) -> None:
    manager = SessionManager.create(str(work))
    manager.append_message(user("q"))
    manager.append_message(assistant("a"))
    path = Path(manager.session_file or "")
    path.unlink()
    path.mkdir()  # writing now fails (the file is a directory)
    lost = manager.append_message(user("while broken"))
    assert isinstance(manager.write_error, OSError)
    assert "could not write the session file" in manager.diagnostics[-1].message
    path.rmdir()
    manager.append_message(assistant("recovered"))
    assert manager.write_error is None
    written = lines(str(path))
    assert [e.get("id") for e in written[1:]][-2] == lost and len(written) == 5


def test_values_json_cannot_hold_are_written_plainly(agent_dir: Path, work: Path) -> None:
    import datetime

    manager = SessionManager.create(str(work))
    manager.append_message(user("q"))
    manager.append_message(assistant("a"))
    when = datetime.datetime(2026, 1, 2, 3, 4, 5)
    manager.append_custom("odd", {"when": when, "pair": (1, 2), "block": TextContent(text="t")})
    data = lines(manager.session_file)[-1]["data"]
    assert data == {"when": str(when), "pair": [1, 2], "block": {"type": "text", "text": "t"}}
