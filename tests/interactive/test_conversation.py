"""The interactive mode in a real terminal: typing, streaming, aborting, steering, the scrollback."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from scripted_turns import bash_then_answer

LONG = "\n\n".join(f"Paragraph {i}: " + "lorem ipsum dolor sit amet " * 5 for i in range(60))


def test_start_screen_shows_header_editor_and_footer(term):
    t = term()
    screen = t.wait_ready()
    t.save("start")
    assert "piko v" in screen
    assert "escape interrupt · ctrl+c/ctrl+d clear/exit · / commands · ! bash · ctrl+o more" in screen
    assert re.search(r"^─{100}$", screen, re.M), "the editor's border"
    lines = screen.rstrip("\n").split("\n")
    footer = [line for line in lines if line.strip()][-2:]
    assert footer[0].startswith(str(t.work.resolve()).replace(str(t.home), "~"))
    assert re.search(r"0\.0%/128k \(auto\)\s+faux-1$", footer[1])
    # drawing the editor put nothing into the scrollback
    assert t._tmux("display", "-p", "-t", "main", "#{history_size}").strip() == "0"


def test_prompt_streams_markdown_thinking_and_a_tool(term):
    turns = [
        {
            "blocks": [
                {"thinking": "Considering the request."},
                {
                    "text": "# Plan\n\nSome **bold** words and `code`.\n\n```python\ndef f():\n    return 42\n```\n\n- one\n- two\n"
                },
                {"tool_call": {"name": "bash", "arguments": {"command": "echo tool-output-here"}}},
            ]
        },
        {"blocks": [{"text": "All done."}]},
    ]
    t = term(turns=turns)
    t.wait_ready()
    t.submit("Explain please")
    screen = t.wait_for(r"All done\.")
    t.save("streamed")
    history = t.history()
    assert "Explain please" in history
    assert "Considering the request." in history
    assert " Plan" in history and "#" not in history.split("Plan")[0].split("\n")[-1]
    assert "```python" in history and "def f():" in history
    assert "- one" in history and "- two" in history
    assert "$ echo tool-output-here" in history
    assert re.search(r"^ tool-output-here\s*$", history, re.M)
    assert re.search(r"Took \d+\.\ds", history)
    assert "↑" in screen and "↓" in screen
    # every block is printed once
    assert history.count("Considering the request.") == 1
    assert history.count("def f():") == 1


def test_escape_aborts_a_streaming_answer(term):
    t = term(
        turns=[{"blocks": [{"text": LONG}]}, {"blocks": [{"text": "Next answer."}]}], tokens_per_second=150
    )
    t.wait_ready()
    t.submit("Write a lot")
    t.wait_for(r"Working\.\.\. \(escape to interrupt\)")
    t.wait_for(r"Paragraph 2:", scrollback=True)
    t.keys("Escape")
    screen = t.wait_for(r"Operation aborted")
    t.save("aborted")
    assert "Working..." not in screen
    assert "Paragraph 59" not in t.history()
    t.submit("again")
    t.wait_for(r"Next answer\.")


def streaming_a_long_answer(term, reply: str):
    """piko streaming a 60-paragraph answer (its first paragraph shown), ``reply`` scripted next."""
    t = term(turns=[{"blocks": [{"text": LONG}]}, {"blocks": [{"text": reply}]}], tokens_per_second=300)
    t.wait_ready()
    t.submit("Write a lot")
    t.wait_for(r"Paragraph 1:", scrollback=True)
    return t


def test_enter_while_streaming_steers(term):
    t = streaming_a_long_answer(term, "Steered reply.")
    t.submit("focus on the summary")
    queued = t.wait_for(r"Steering: focus on the summary")
    t.save("steering-queued")
    assert "to edit all queued messages" in queued
    history = t.wait_for(r"Steered reply\.", scrollback=True, timeout=40)
    t.save("steered")
    # the steering message was delivered as a user message after the first answer, before the reply
    assert (
        history.index("Paragraph 59")
        < history.index("focus on the summary")
        < history.index("Steered reply.")
    )
    assert "Steering:" not in t.screen()


def test_alt_enter_queues_a_follow_up(term):
    t = streaming_a_long_answer(term, "Follow-up reply.")
    t.type("and then this")
    t.keys("M-Enter")
    t.wait_for(r"Follow-up: and then this")
    history = t.wait_for(r"Follow-up reply\.", scrollback=True, timeout=40)
    assert history.index("Paragraph 59") < history.index("and then this") < history.index("Follow-up reply.")


def test_long_answer_keeps_the_scrollback(term):
    t = term(
        turns=[{"blocks": [{"text": "First short answer."}]}, {"blocks": [{"text": LONG}]}],
        tokens_per_second=2000,
    )
    t.wait_ready()
    t.submit("first question")
    t.wait_for(r"First short answer\.")
    t.submit("second question")
    t.wait_for(r"Paragraph 59:", timeout=40)
    t.wait_for(lambda s: "Working..." not in s)
    t.save("long-answer")
    history = t.history()
    # nothing was wiped: the header, the first exchange and every paragraph are in the scrollback, once
    assert history.index("piko v") < history.index("first question") < history.index("First short answer.")
    assert history.index("second question") < history.index("Paragraph 0:")
    for i in range(60):
        assert history.count(f"Paragraph {i}:") == 1, i
    # no copy of the bottom region (editor rules, footer) was left in the scrollback
    assert len(re.findall(r"^─{100}$", history, re.M)) == 2
    assert history.count("(auto)") == 1
    assert len(history.split("\n")) > 150


def test_bang_commands_run_in_the_shell(term):
    t = term(turns=[{"blocks": [{"text": "I saw the output."}]}])
    t.wait_ready()
    t.submit("!echo visible-to-model")
    t.wait_for(r"^ visible-to-model", timeout=10)
    t.submit("!!echo hidden-from-model")
    t.wait_for(r"^ hidden-from-model", timeout=10)
    t.save("bang")
    t.submit("what did you see?")
    t.wait_for(r"I saw the output\.")
    # the session file records both; only the first goes to the model
    sessions = list((t.agent / "sessions").rglob("*.jsonl"))
    entries = [json.loads(line) for line in sessions[0].read_text().splitlines()]
    bash = [
        e["message"]
        for e in entries
        if e.get("type") == "message" and e["message"]["role"] == "bashExecution"
    ]
    assert [b["command"] for b in bash] == ["echo visible-to-model", "echo hidden-from-model"]
    assert bash[1].get("excludeFromContext") is True


def test_ctrl_c_twice_quits_and_continue_resumes(term, tmp_path: Path):
    t = term(turns=[{"blocks": [{"text": "Remember the word PELICAN."}]}])
    t.wait_ready()
    t.submit("hello")
    t.wait_for(r"PELICAN")
    t.type("some draft")
    t.keys("C-c")
    t.wait_for(lambda s: "some draft" not in s)
    time.sleep(0.6)  # a second Ctrl+C within half a second quits
    t.keys("C-c", "C-c")
    t.wait_for(r"\[piko exited with 0\]")
    t.close()
    # --continue in the same directory prints the conversation again
    again = term(start=False, turns=[{"blocks": [{"text": "Welcome back."}]}])
    again.root = t.root
    again.home, again.agent, again.work = t.home, t.agent, t.work
    again.start(["--provider", "faux", "--continue"])
    screen = again.wait_ready()
    again.save("continued")
    assert "hello" in screen and "Remember the word PELICAN." in screen
    again.submit("and now?")
    again.wait_for(r"Welcome back\.")


def test_sigterm_quits_cleanly(term):
    import subprocess

    t = term(turns=[{"blocks": [{"text": "hello"}]}])
    t.wait_ready()
    pid = t._tmux("list-panes", "-t", "main", "-F", "#{pane_pid}").strip()
    children = subprocess.run(["pgrep", "-P", pid], capture_output=True, text=True).stdout.split()
    assert children, "piko runs under the pane's shell"
    subprocess.run(["kill", "-TERM", *children], check=True)
    t.wait_for(r"\[piko exited with 0\]")


def test_escape_stops_a_running_tool(term):
    t = term(turns=bash_then_answer("echo started; sleep 30", "never needed"))
    t.wait_ready()
    t.submit("run something slow")
    t.wait_for(r"Elapsed \d+\.\ds")
    t.keys("Escape")
    screen = t.wait_for(lambda s: "Operation aborted" in s and "Working..." not in s, timeout=10)
    t.save("tool-aborted")
    assert re.search(r"Took 0\.\ds", screen)  # it did not run its 30 seconds
    assert "Command aborted" in screen
