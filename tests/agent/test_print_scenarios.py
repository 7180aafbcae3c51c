"""``pi -p`` and ``pi --mode json`` against the scripted server: the pi transcripts, scenario by scenario."""

from __future__ import annotations

import itertools
from typing import Any

from agent_harness import json_lines
from agent_harness import normalize_event
from agent_harness import sample
from agent_harness import sample_events
from agent_harness import strip_volatile
from support.pi16_additions import without_additions


def _events(stdout: str) -> list[dict[str, Any]]:
    """Our events as pi 0.73.1 would write them (pi 1.6's additions taken out)."""
    return [normalize_event(e) for e in without_additions(json_lines(stdout))]


def test_print_text_says_hi_like_pi(pi_env: Any) -> None:
    env = pi_env(sample("a-print-text", "scenario.json"))
    done = env.run("-p", "say hi", "--provider", "mock", "--model", "mock-1")
    assert done.returncode == 0, done.stderr
    assert done.stdout == sample("a-print-text", "stdout.txt")
    assert done.stderr == ""


def test_print_text_session_file_is_pis(pi_env: Any) -> None:
    env = pi_env(sample("a-print-text", "scenario.json"))
    env.run("-p", "say hi", "--provider", "mock", "--model", "mock-1")
    ours = without_additions(env.session_lines())
    theirs = sample("a-print-text", "session.jsonl")
    assert [strip_volatile(e) for e in ours] == [strip_volatile(e) for e in theirs]
    assert [sorted(e) for e in ours] == [sorted(e) for e in theirs]
    # the parent chain: every entry hangs off the one before it
    for before, after in itertools.pairwise(ours[1:]):
        assert after["parentId"] == before["id"]
    assert ours[1]["parentId"] is None
    assert len(ours[1]["id"]) == 8


def test_json_mode_streams_pis_events(pi_env: Any) -> None:
    env = pi_env(sample("b-print-json", "scenario.json"))
    done = env.run("-p", "--mode", "json", "say hi", "--provider", "mock", "--model", "mock-1")
    assert done.returncode == 0, done.stderr
    assert _events(done.stdout) == [normalize_event(e) for e in sample_events("b-print-json")]
    header = json_lines(done.stdout)[0]
    assert header["id"] == env.session_lines()[0]["id"]


def test_tool_turns_stream_pis_events(pi_env: Any) -> None:
    env = pi_env(sample("c-tools-json", "scenario.json"))
    prompt = "Run echo hello, read notes.txt, create new.txt, edit it, then list the directory."
    done = env.run(
        "--mode", "json", "--tools", "read,bash,edit,write,grep,find,ls",
        "--provider", "mock", "--model", "mock-1", prompt,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _events(done.stdout) == [normalize_event(e) for e in sample_events("c-tools-json")]
    assert (env.work / "new.txt").read_text() == "alpha\ngamma\n"


def test_tool_turns_send_what_pi_sends(pi_env: Any) -> None:
    env = pi_env(sample("c-tools-json", "scenario.json"))
    prompt = "Run echo hello, read notes.txt, create new.txt, edit it, then list the directory."
    env.run(
        "--mode",
        "json",
        "--tools",
        "read,bash,edit,write,grep,find,ls",
        "--provider",
        "mock",
        "--model",
        "mock-1",
        prompt,
    )
    theirs = sample("c-tools-json", "requests.jsonl")
    ours = env.server.requests
    assert len(ours) == len(theirs)
    for mine, pis in zip(ours, theirs, strict=True):
        a, b = dict(mine["body"]), dict(pis["body"])
        # the system prompt is piko's own wording; everything else is pi's
        assert a["messages"][0]["role"] == b["messages"][0]["role"] == "system"
        a["messages"], b["messages"] = a["messages"][1:], b["messages"][1:]
        assert strip_volatile(a) == strip_volatile(b)


def test_parallel_tools_give_results_in_call_order(pi_env: Any) -> None:
    env = pi_env(sample("c-parallel-tools-json", "scenario.json"))
    cmd = sample("c-parallel-tools-json", "cmd.txt")
    assert "Do three things at once." in cmd
    done = env.run("--mode", "json", "--provider", "mock", "--model", "mock-1", "Do three things at once.")
    assert done.returncode == 0, done.stderr
    ours = _events(done.stdout)
    theirs = [normalize_event(e) for e in sample_events("c-parallel-tools-json")]
    # tool_execution_end order depends on which tool finishes first; the rest is fixed
    ends = lambda events: sorted(  # noqa: E731
        str(e) for e in events if e["type"] == "tool_execution_end"
    )
    assert ends(ours) == ends(theirs)
    strip = lambda events: [e for e in events if e["type"] != "tool_execution_end"]  # noqa: E731
    assert strip(ours) == strip(theirs)


def test_retries_exhausted_like_pi(pi_env: Any) -> None:
    turns = [dict(t) for t in sample("f-retry-500-persistent-json", "scenario.json")]
    assert all(t.get("error", {}).get("status") == 500 for t in turns[:12])
    # answer at once: the provider's own retries honour retry-after-ms, the session's use baseDelayMs
    for turn in turns:
        turn["headers"] = {"retry-after-ms": "1"}
    env = pi_env(turns, settings={"retry": {"baseDelayMs": 1}})
    done = env.run("--mode", "json", "--provider", "mock", "--model", "mock-1", "say hi")
    assert done.returncode == 0, done.stderr
    ours = _events(done.stdout)
    theirs = [normalize_event(e) for e in sample_events("f-retry-500-persistent-json")]
    for event in ours + theirs:
        if event["type"] == "auto_retry_start":
            # the same doubling from a different base (pi: 2000 ms; here: 1 ms)
            base = event["delayMs"] // 2 ** (event["attempt"] - 1)
            assert event["delayMs"] == base * 2 ** (event["attempt"] - 1)
            event["delayMs"] = "base * 2^(attempt-1)"
    assert ours == theirs
    assert len(env.server.requests) == 12  # 4 attempts, each with the provider's 2 retries, as pi
