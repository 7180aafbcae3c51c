"""piko against the real pi: the same scenario compacts the same way, and each folds the other's summaries.

``fixtures/pi_split_turn`` is a run of pi 0.73.1 (see its PROVENANCE.md). piko runs the same
scenario as a subprocess (``python -m piko -p --mode json``); where pi is installed, pi also
continues a session piko compacted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from builders import words

from piko.plugins.compaction import prompts

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "pi_split_turn"
PI_BIN = Path(os.environ.get("PI_PREFIX", "/work/scratch/pi073")) / "node_modules" / ".bin" / "pi"
MOCK_MODEL = ("--provider", "mock", "--model", "mock-1")
NOTES = "line of notes text " * 200 + "\n"

needs_pi = pytest.mark.skipif(
    shutil.which("node") is None or not PI_BIN.exists(),
    reason=f"needs node and pi 0.73.1 at {PI_BIN} (set PI_PREFIX)",
)


def fixture_lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURE / name).read_text(encoding="utf-8").splitlines() if line]


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [])


def conversation_part(body: dict[str, Any]) -> str:
    return text_of(body["messages"][-1]).split("</conversation>")[0]


def setup_scenario(world: Any, turns: list[dict[str, Any]]) -> None:
    server = world.start_server(turns)
    world.write_models(server.base_url, 2500, 500)
    shutil.copyfile(FIXTURE / "settings.json", world.agent_dir / "settings.json")
    (world.project / "notes.txt").write_text(NOTES, encoding="utf-8")


def run_cli(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False
    )


def piko(*args: str) -> list[str]:
    return [sys.executable, "-m", "piko", *args]


def only_session(agent_dir: Path) -> Path:
    (path,) = list((agent_dir / "sessions").glob("*/*.jsonl"))
    return path


def test_print_mode_compacts_like_pi(world) -> None:
    setup_scenario(world, json.loads((FIXTURE / "scenario.json").read_text(encoding="utf-8")))
    done = run_cli(
        piko("-p", "--mode", "json", "read notes.txt please", "--provider", "mock", "--model", "mock-1"),
        world.project,
    )
    assert done.returncode == 0, done.stderr

    # --mode json shows the compaction (pi 0.73.1 exits before printing compaction_end)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    compaction_events = [e for e in events if e["type"].startswith("compaction")]
    assert compaction_events[0] == {"type": "compaction_start", "reason": "threshold"}
    end = compaction_events[1]
    assert (end["type"], end["reason"], end["aborted"], end["willRetry"]) == (
        "compaction_end",
        "threshold",
        False,
        False,
    )
    assert "errorMessage" not in end
    assert [e["type"] for e in events].index("compaction_start") > [e["type"] for e in events].index(
        "agent_end"
    )

    # the session file: the same entries as pi's, the same cut, the same numbers
    ours = [
        json.loads(line) for line in only_session(world.agent_dir).read_text(encoding="utf-8").splitlines()
    ]
    theirs = fixture_lines("session.jsonl")
    assert [e["type"] for e in ours] == [e["type"] for e in theirs]
    our_entry, their_entry = ours[-1], theirs[-1]
    assert list(our_entry) == list(their_entry)
    position = {e["id"]: i for i, e in enumerate(ours)}
    their_position = {e["id"]: i for i, e in enumerate(theirs)}
    assert position[our_entry["firstKeptEntryId"]] == their_position[their_entry["firstKeptEntryId"]]
    for key in ("tokensBefore", "details", "fromHook"):
        assert our_entry[key] == their_entry[key], key
    assert end["result"]["firstKeptEntryId"] == our_entry["firstKeptEntryId"]
    # both summaries: no history, the turn prefix summary, the file list
    assert our_entry["summary"] == (
        prompts.NO_EARLIER_HISTORY
        + prompts.SPLIT_TURN_SEPARATOR
        + "## Goal\nRead the notes.\n\n## Next Steps\n1. Continue.\n\n<read-files>\nnotes.txt\n</read-files>"
    )

    # the summarization request: the conversation serialized exactly as pi does, the same budget
    our_request = world.requests()[2]
    their_request = fixture_lines("requests.jsonl")[2]["body"]
    assert conversation_part(our_request) == conversation_part(their_request)
    assert our_request["max_completion_tokens"] == their_request["max_completion_tokens"] == 500
    assert our_request["messages"][0]["role"] == "system" and "tools" not in our_request
    assert len(world.requests()) == 3


def test_piko_folds_a_pi_compaction(world, run) -> None:
    """A session compacted by pi, continued and compacted again by piko."""
    setup_scenario(
        world,
        [
            {
                "blocks": [{"text": words("Next I would summarize.", 40)}],
                "usage": {"input": 300, "output": 20},
            },
            {"blocks": [{"text": "## Goal\nPIKO SUMMARY"}]},
        ],
    )
    # keep the new answer and question (43 tokens), summarize pi's kept message
    world.write_settings({"compaction": {"reserveTokens": 1000, "keepRecentTokens": 42}})
    session_path = world.root / "pi-made.jsonl"
    shutil.copyfile(FIXTURE / "session.jsonl", session_path)
    pi_summary = fixture_lines("session.jsonl")[-1]["summary"]

    async def scenario() -> Any:
        from piko.app.application import App

        app = App(cwd=world.project, agent_dir=world.agent_dir).boot()
        app.options.update({"provider": "mock", "model": "mock-1", "session": str(session_path)})
        session = await app.create_agent_session()
        context = [type(m).__name__ for m in session.messages]
        await session.prompt("what next?")
        outcome = await session.compact()
        return context, outcome

    context, outcome = run(scenario())
    assert context == ["CompactionSummaryMessage", "AssistantMessage"]
    text = text_of(world.requests()[1]["messages"][-1])
    # pi's summary is updated (its file list travels in the details, not in the prompt)
    assert "<previous-summary>\nNo prior history.\n\n---\n\n**Turn Context (split turn):**" in text
    assert "<read-files>" not in text
    assert pi_summary.split("\n\n<read-files>")[0] in text
    assert "[Assistant]: I read notes.txt." in text  # pi's kept entry is summarized now
    assert outcome.details == {"readFiles": ["notes.txt"], "modifiedFiles": []}
    assert outcome.summary == "## Goal\nPIKO SUMMARY\n\n<read-files>\nnotes.txt\n</read-files>"


@needs_pi
def test_pi_folds_a_piko_compaction(world) -> None:
    """A session compacted by piko, continued by pi until pi compacts it again."""
    turns = json.loads((FIXTURE / "scenario.json").read_text(encoding="utf-8"))
    setup_scenario(world, turns[:3])  # the fourth turn is never asked for (no history to summarize)
    made = run_cli(
        piko("-p", "read notes.txt please", "--provider", "mock", "--model", "mock-1"), world.project
    )
    assert made.returncode == 0, made.stderr
    session_path = only_session(world.agent_dir)
    piko_entry = json.loads(session_path.read_text(encoding="utf-8").splitlines()[-1])
    assert piko_entry["type"] == "compaction"
    before = len(world.server.requests)
    world.server.add_turns(
        [
            {
                "blocks": [{"text": "Next I would " + "summarize the notes " * 30}],
                "usage": {"input": 2000, "output": 100},
            },
            {"blocks": [{"text": "## Goal\nPI SUMMARY"}]},
            {"blocks": [{"text": "## Original Request\nPI PREFIX"}]},
        ]
    )
    done = run_cli(
        [str(PI_BIN), "--session", str(session_path), "-p", "--mode", "json", "what next?", *MOCK_MODEL],
        world.project,
    )
    assert done.returncode == 0, done.stderr
    bodies = [r["body"] for r in world.server.requests[before:]]
    # pi's context starts with piko's summary
    assert piko_entry["summary"] in text_of(bodies[0]["messages"][1])
    # pi's own compaction takes piko's summary as the previous one and keeps its file list
    summarizer = next(b for b in bodies[1:] if "<previous-summary>" in text_of(b["messages"][-1]))
    assert piko_entry["summary"] in text_of(summarizer["messages"][-1])
    pi_entry = json.loads(session_path.read_text(encoding="utf-8").splitlines()[-1])
    assert pi_entry["type"] == "compaction" and pi_entry["fromHook"] is False
    assert pi_entry["details"] == {"readFiles": ["notes.txt"], "modifiedFiles": []}
