"""Interop with the real pi 0.73.1: piko's session files continue in pi, and pi's in piko.

Each test runs ``pi -p`` against the scripted LLM server of ``support/llm_server.py`` on
127.0.0.1 and checks both what pi sent to the model (the history read from the file) and what
it appended to the file.
"""

from __future__ import annotations

from pathlib import Path

from session_helpers import PI_BIN
from session_helpers import assistant
from session_helpers import needs_pi
from session_helpers import user
from support.llm_server import LLMServer
from support.pi_dirs import write_mock_models
from support.pi_runs import run_cli
from support.pi_runs import sent_texts

from piko.data.messages import AssistantMessage
from piko.data.messages import TextContent
from piko.data.messages import UserMessage
from piko.sessions.manager import SessionManager

pytestmark = needs_pi


def configure(agent: Path, base_url: str) -> None:
    write_mock_models(
        agent, base_url, [{"id": "mock-1", "name": "Mock One", "contextWindow": 128000, "maxTokens": 16384}]
    )


def run_pi(agent: Path, cwd: Path, *args: str) -> str:
    done = run_cli([str(PI_BIN)], agent, cwd, "--no-tools", *args, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def context_texts(manager: SessionManager) -> list[str]:
    out = []
    for m in manager.build_context().messages:
        assert isinstance(m, (UserMessage, AssistantMessage))
        content = (
            m.content
            if isinstance(m.content, str)
            else "".join(b.text for b in m.content if isinstance(b, TextContent))
        )
        out.append(f"{m.ROLE}: {content}")
    return out


def test_piko_session_continues_in_pi_and_back(agent_dir: Path, work: Path) -> None:
    turns = [
        {"blocks": [{"text": "Second answer from pi."}]},
        {"blocks": [{"text": "Fourth answer from pi."}]},
    ]
    with LLMServer(turns) as server:
        configure(agent_dir, server.base_url)
        manager = SessionManager.create(str(work))
        manager.append_model_change("mock", "mock-1")
        manager.append_thinking_level_change("off")
        manager.append_message(user("First question"))
        manager.append_message(assistant("First answer from piko."))
        manager.append_session_info("made by piko")
        path = manager.session_file
        assert path is not None
        piko_leaf = manager.leaf_id

        # pi opens piko's file (by id prefix, as --session accepts) and continues it.
        assert "Second answer from pi." in run_pi(
            agent_dir, work, "-p", "Second question", "--session", manager.session_id[:18]
        )
        assert sent_texts(server.requests[0]) == [
            "user: First question",
            "assistant: First answer from piko.",
            "user: Second question",
        ]
        reopened = SessionManager.open(path)
        assert reopened.diagnostics == [] and reopened.session_id == manager.session_id
        pi_entries = reopened.get_entries()[len(manager.get_entries()) :]
        assert pi_entries and pi_entries[0].parent_id == piko_leaf
        assert context_texts(reopened)[-2:] == ["user: Second question", "assistant: Second answer from pi."]
        assert reopened.get_session_name() == "made by piko"

        # piko continues pi's appends; pi continues again (-c: the most recent session of the cwd).
        reopened.append_message(user("Third question"))
        reopened.append_message(assistant("Third answer from piko."))
        assert "Fourth answer from pi." in run_pi(agent_dir, work, "-c", "-p", "Fourth question")
        assert sent_texts(server.requests[1]) == [
            "user: First question",
            "assistant: First answer from piko.",
            "user: Second question",
            "assistant: Second answer from pi.",
            "user: Third question",
            "assistant: Third answer from piko.",
            "user: Fourth question",
        ]
        final = SessionManager.open(path)
        assert final.diagnostics == []
        assert context_texts(final)[-1] == "assistant: Fourth answer from pi."
        assert [e.id for e in final.get_branch()][: len(reopened.get_entries())] == [
            e.id for e in reopened.get_entries()
        ]
        sessions_dir = Path(path).parent
        assert len(list(sessions_dir.glob("*.jsonl"))) == 1  # pi wrote into piko's file, no new one


def test_pi_session_continues_in_piko(agent_dir: Path, work: Path) -> None:
    with LLMServer([{"blocks": [{"text": "Hello from pi."}]}]) as server:
        configure(agent_dir, server.base_url)
        run_pi(agent_dir, work, "-p", "Say hello")
    # piko finds pi's file where pi put it (same directory name, same file name scheme).
    manager = SessionManager.continue_recent(str(work))
    assert manager.diagnostics == [] and manager.session_file is not None
    assert Path(manager.session_file).parent.name == "--" + str(work).lstrip("/").replace("/", "-") + "--"
    assert context_texts(manager) == ["user: Say hello", "assistant: Hello from pi."]
    context = manager.build_context()
    assert context.model == ("mock", "mock-1") and context.thinking_level == "off"
    before = Path(manager.session_file).read_bytes()
    manager.append_message(user("And now piko"))
    manager.append_message(assistant("piko answers"))
    after = Path(manager.session_file).read_bytes()
    assert after.startswith(before)
    again = SessionManager.open(manager.session_file)
    assert context_texts(again)[-2:] == ["user: And now piko", "assistant: piko answers"]
