"""pi 1.6's ``system`` messages (the prompt and tool loadout it records in a session file) in a
resumed session: as in pi 1.6's TUI, the transcript shows none of them, collapsed or expanded
(Ctrl+O), and /tree lists each as ``[system]``; malformed ones change none of that, and the file
is only appended to.

``fixtures/pi16_system_messages.jsonl`` was written by the real pi 1.6.0 against the scripted
server (``tests/support/llm_server.py``) in ``/tmp/h18sys/work``: a first prompt (its leading
system message: the prompt's sections and four tools), ``/reload`` after an AGENTS.md was added
and a second prompt (an update of the ``project_context`` section), then ``pi -c --tools read,bash
-p`` (an update of the ``tools`` and ``rules`` sections with ``toolsRemoved``). The tests put the
file in their own working directory.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "pi16_system_messages.jsonl"
RECORDED_CWD = "/tmp/h18sys/work"
RECORDED = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
LAST_RECORDED = RECORDED[-1]["id"]  # the answer to "third question"
THIRD_QUESTION = RECORDED[-2]["id"]
CONVERSATION = [
    "user: hello there",
    "assistant: First answer from the server.",
    "user: second question",
    "assistant: Second answer.",
    "user: third question",
    "assistant: Fourth answer.",
]
TREE = ["[system]", *CONVERSATION[:2], "[system]", *CONVERSATION[2:4], "[system]", *CONVERSATION[4:]]


def _session_in(work: Path, extra: list[dict[str, Any]] | None = None) -> tuple[Path, bytes]:
    """The recorded session, moved to ``work``, with ``extra`` entries after its last; its bytes."""
    text = FIXTURE.read_text(encoding="utf-8").replace(RECORDED_CWD, str(work))
    text += "".join(json.dumps(entry) + "\n" for entry in extra or [])
    path = work.parent / "pi16.jsonl"
    path.write_bytes(text.encode("utf-8"))
    return path, path.read_bytes()


def _prompt_texts() -> list[str]:
    """Pieces of what the recorded system messages hold (section texts, tool descriptions), short
    enough not to be wrapped: none of them may appear in the transcript."""
    pieces = {"[system]", "System prompt", "System update", "toolsAdded", "toolsRemoved"}
    for entry in RECORDED:
        message = entry.get("message") or {}
        if message.get("role") != "system":
            continue
        for value in (message.get("sections") or {}).values():
            pieces.update(row.strip()[:30] for row in (value or "").splitlines() if len(row.strip()) > 8)
        pieces.update(tool["description"][:30] for tool in message.get("toolsAdded") or [])
    return sorted(pieces)


def _transcript_lines(text: str) -> list[str]:
    return [row.strip() for row in text.splitlines() if row.strip()]


def _shown_nothing_of_the_prompt(text: str) -> None:
    shown = [piece for piece in _prompt_texts() if piece in text]
    assert not shown, f"{shown}\n{text}"


def _tree_rows(screen: str) -> list[str]:
    rows = [re.sub(r"^[\s→]*(?:• )?", "", row).rstrip(" ✓") for row in screen.splitlines() if "• " in row]
    return [row.strip() for row in rows]


def _selected(screen: str) -> int | None:
    """The place of the selected row among the tree's rows."""
    rows = [row for row in screen.splitlines() if "• " in row]
    return next((n for n, row in enumerate(rows) if row.lstrip().startswith("→")), None)


@pytest.mark.parametrize("tui_mode", ["regular", "fullscreen"])
def test_a_resumed_pi16_session_shows_its_conversation_and_none_of_its_system_messages(term, tui_mode):
    """On resume, Ctrl+O, /tree (rows, search, going back to a system message) and a new prompt, the
    system messages show nothing where pi 1.6 shows nothing and ``[system]`` where it does."""
    t = term(start=False, tui_mode=tui_mode, height=40, turns=[{"blocks": [{"text": "Fifth answer."}]}])
    session, recorded = _session_in(t.work)
    t.start(["--provider", "faux", "--session", str(session)])
    read = t.history if tui_mode == "regular" else t.screen
    t.wait_for(lambda s: "Fourth answer." in s and "faux-1" in s, scrollback=tui_mode == "regular")
    text = read()
    conversation = [c.split(": ", 1)[1] for c in CONVERSATION]
    assert [row for row in _transcript_lines(text) if row in conversation] == conversation, text
    _shown_nothing_of_the_prompt(text)

    t.keys("C-o")  # expanded, pi 1.6 shows no more of them either
    t.wait_for(r"Tool output: expanded", scrollback=tui_mode == "regular")
    expanded = read()
    assert "Fourth answer." in expanded, expanded
    _shown_nothing_of_the_prompt(expanded)
    t.keys("C-o")
    t.wait_for(r"Tool output: collapsed", scrollback=tui_mode == "regular")

    t.submit("/tree")
    screen = t.wait_for(r"Session Tree")
    t.save(f"tree-{tui_mode}")
    assert _tree_rows(screen) == TREE, screen
    t.type("system")  # the role is what a search finds, as in pi 1.6
    screen = t.wait_for(lambda s: _tree_rows(s) == ["[system]"] * 3)
    t.keys("Escape")
    t.wait_for(lambda s: "Session Tree" not in s)
    t.submit("/tree")
    t.wait_for(r"Session Tree")
    t.keys("Up", "Up")  # from the leaf to the last system message, before "third question"
    t.wait_for(lambda s: _selected(s) == len(TREE) - 3)
    t.keys("Enter")
    t.wait_for(r"Summarize branch\?")
    t.keys("Enter")  # no summary
    # the branch rebuilt up to the system message, which again shows nothing (as pi 1.6)
    text = t.wait_for(r"Navigated to selected point", scrollback=tui_mode == "regular")
    assert [row for row in _transcript_lines(text) if row in conversation] == conversation[:4], text
    _shown_nothing_of_the_prompt(text)
    t.submit("fifth question")
    t.wait_for(r"Fifth answer\.", scrollback=tui_mode == "regular")
    assert session.read_bytes().startswith(recorded)  # appended to, never rewritten


def _message(entry_id: str, parent: str, message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent,
            "timestamp": "2026-12-02T01:00:00.000Z", "message": message}  # fmt: skip


BAD_RECORDS = [
    {"role": "system"},
    {"role": "system", "content": None, "sections": None, "toolsAdded": None, "toolsRemoved": None},
    {"role": "system", "content": 42, "sections": ["preamble"], "toolsAdded": "read",
     "toolsRemoved": {"name": "bash"}, "timestamp": "soon"},
    {"role": "system", "content": [{"type": "text"}, 5, {"type": "text", "text": 7}],
     "sections": {"a": 5, "b": None, "c": ["x"]}, "toolsAdded": [5, {"name": 3}, {"nope": 1}]},
    {"role": "system", "content": {"text": "an object"}, "sections": {"": ""}},
]  # fmt: skip


def _bad_records() -> list[dict[str, Any]]:
    entries, parent = [], LAST_RECORDED
    for number, record in enumerate(BAD_RECORDS):
        entries.append(_message(f"bad{number}", parent, record))
        parent = f"bad{number}"
    entries.append(
        _message("after1", parent, {"role": "user", "content": "after the bad records", "timestamp": 5})
    )
    entries.append(
        _message("after2", "after1", {"role": "assistant", "content": [{"type": "text", "text": "Still here."}],
                 "api": "openai-completions", "provider": "mock", "model": "mock-1", "stopReason": "stop",
                 "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
                 "timestamp": 6})
    )  # fmt: skip
    return entries


def _bad_checkpoint() -> list[dict[str, Any]]:
    """A compaction whose ``systemMessage`` checkpoint has wrongly typed fields."""
    checkpoint = {"role": "system", "content": 7, "sections": "preamble", "toolsAdded": {"name": "read"}}
    compaction = {"type": "compaction", "id": "comp1", "parentId": LAST_RECORDED,
                  "timestamp": "2026-12-02T01:00:00.000Z", "summary": "The talk so far.",
                  "firstKeptEntryId": THIRD_QUESTION, "tokensBefore": 1000, "systemMessage": checkpoint}  # fmt: skip
    return [compaction, _message("after1", "comp1", {"role": "user", "content": "after the bad records"})]


@pytest.mark.parametrize(
    ("extra", "rows"),
    [
        pytest.param(
            _bad_records, [*TREE, *["[system]"] * len(BAD_RECORDS), "user: after the bad records", "assistant: Still here."],
            id="system-messages",
        ),
        pytest.param(
            _bad_checkpoint, [*TREE, "[compaction: 1k tokens]", "user: after the bad records"], id="checkpoint"
        ),
    ],
)  # fmt: skip
def test_malformed_system_records_render_nothing_and_break_nothing(term, extra, rows):
    """Records with missing or wrongly typed fields (pi 1.6 itself stops at start-up on a
    ``toolsRemoved`` that is no list): the rest of the conversation, /tree and the next prompt work."""
    t = term(start=False, height=50, turns=[{"blocks": [{"text": "Answered anyway."}]}])
    session, recorded = _session_in(t.work, extra())
    t.start(["--provider", "faux", "--session", str(session)])
    text = t.wait_for(lambda s: "after the bad records" in s and "faux-1" in s, scrollback=True)
    _shown_nothing_of_the_prompt(text)
    assert "Traceback" not in text and not t.errors().strip(), t.errors()
    t.keys("C-o")
    expanded = t.wait_for(r"Tool output: expanded", scrollback=True)
    assert "after the bad records" in expanded, expanded
    _shown_nothing_of_the_prompt(expanded)
    t.submit("/tree")
    screen = t.wait_for(r"Session Tree")
    shown = _tree_rows(screen)  # the rows around the selected last one
    assert len(shown) > len(BAD_RECORDS) and shown == rows[-len(shown) :], screen
    assert f"({len(rows)}/{len(rows)})" in screen, screen
    t.keys("Escape")
    t.wait_for(lambda s: "Session Tree" not in s)
    t.submit("and now?")
    t.wait_for(r"Answered anyway\.", scrollback=True)
    assert session.read_bytes().startswith(recorded)
