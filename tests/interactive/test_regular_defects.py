"""The regular mode's defects found by comparing it with pi 1.6 in tmux, each pinned by a test."""

from __future__ import annotations

import re

from scripted_turns import TWELVE_ECHOES
from scripted_turns import answers
from scripted_turns import bash_then_answer
from support.pi_dirs import mock_provider

CODE = (
    "```python\n"
    + "\n".join(f"value_{i:02d} = {i}  # line {i}" for i in range(60))
    + "\n```\n\nAfter the code."
)


def test_a_block_taller_than_the_terminal_is_in_the_scrollback_once(term):
    t = term(turns=answers(CODE), tokens_per_second=400, height=30)
    t.wait_ready()
    t.ask("show code", r"After the code\.", timeout=40)
    t.wait_for(lambda s: "Working..." not in s)
    t.save("tall-block")
    history = t.history()
    for i in range(60):
        assert history.count(f"value_{i:02d} = {i}") == 1, (i, history)
    # no stale copy of the editor and footer in the middle of the scrollback
    assert len(re.findall(r"^─{100}$", history, re.M)) == 2, history
    assert history.count("(auto)") == 1, history


def test_ctrl_o_expands_the_tool_output_in_place_and_collapses_it_again(term):
    t = term(turns=bash_then_answer(TWELVE_ECHOES, "ran it"))
    t.wait_ready()
    t.ask("run", r"ran it")
    t.keys("C-o")
    # the whole redraw is in (tmux shows a redraw being written part by part)
    history = t.wait_for(lambda h: re.search(r"^ line0\s*$", h, re.M) and "(auto)" in h, scrollback=True)
    t.save("expanded")
    # expanded where it was: one box, its full output before the answer, nothing appended below
    assert history.count("$ echo line0;") == 1, history
    assert history.index("$ echo line0;") < history.index(" line0\n") < history.index("ran it")
    assert "earlier lines" not in history
    assert history.count("ran it") == 1
    t.keys("C-o")
    history = t.wait_for(lambda h: "earlier lines, ctrl+o to expand)" in h and "(auto)" in h, scrollback=True)
    t.save("collapsed")
    assert not re.search(r"^ line0\s*$", history, re.M), history
    assert history.count("$ echo line0;") == 1
    assert history.count("ran it") == 1


def test_new_replaces_the_conversation_on_screen(term):
    t = term(turns=answers("The first answer."))
    t.wait_ready()
    t.ask("first question", r"The first answer\.")
    t.submit("/new")
    t.wait_for(r"New session started")
    history = t.history()
    t.save("new")
    assert "first question" not in history and "The first answer." not in history, history
    assert history.count("piko v") == 1  # the header is drawn again, once
    assert len(re.findall(r"^─{100}$", history, re.M)) == 2


def test_tree_navigation_replaces_the_conversation_on_screen(term):
    turns = answers("Answer one.", "Answer two.")
    t = term(turns=turns)
    t.wait_ready()
    t.ask("question one", r"Answer one\.")
    t.ask("question two", r"Answer two\.")
    t.submit("/tree")
    t.wait_for(r"Session Tree")
    t.keys("Up")  # from the leaf (answer two) to "user: question two"
    t.wait_for(r"→ .*user: question two")
    t.keys("Enter")
    t.wait_for(r"Summarize branch\?")
    t.keys("Enter")  # No summary
    t.wait_for(r"Navigated to selected point")
    history = t.history()
    t.save("tree")
    assert "Answer two." not in history, history
    assert history.count("Answer one.") == 1 and history.count("question one") == 1
    assert re.search(r"^question two\s*$", t.screen(), re.M)  # back in the editor


def test_a_status_replaces_the_status_before_it(term):
    t = term()
    t.wait_ready()
    t.keys("C-t")
    t.wait_for(r"Thinking blocks: hidden")
    t.keys("C-t")
    t.wait_for(r"Thinking blocks: visible")
    t.keys("BTab")
    screen = t.wait_for(r"Current model does not support thinking")
    assert "Thinking blocks" not in t.history(), screen


REASONING_MODELS = {
    "providers": {
        "local": mock_provider(
            "http://127.0.0.1:9",
            [
                {"id": "plain", "name": "Plain", "reasoning": False},
                {"id": "thinker", "name": "Thinker", "reasoning": True},
            ],
            "local-key",
        )
    }
}


def test_ctrl_p_to_a_thinking_model_uses_the_default_level(term):
    import json

    # pi 1.6: the settings' defaultThinkingLevel (without one, the level in effect: off)
    t = term(
        agent_files={"models.json": json.dumps(REASONING_MODELS)},
        args=["--provider", "local", "--model", "plain"],
        settings={"defaultThinkingLevel": "high"},
    )
    t.wait_for(r"plain\s*$")
    t.keys("C-p")
    screen = t.wait_for(r"Switched to ")
    t.save("cycled")
    assert "Switched to Thinker (thinking: high)" in screen, screen
    assert re.search(r"thinker • high\s*$", screen, re.M), screen


def test_resume_opens_on_the_newest_session_not_the_scope_switch(term):
    turns = answers("Old answer.", "New answer.")
    t = term(turns=turns)
    t.wait_ready()
    t.ask("older session question", r"Old answer\.")
    t.submit("/new")
    t.wait_for(r"New session started")
    t.ask("newer session question", r"New answer\.")
    t.submit("/new")
    t.wait_for(r"New session started")
    t.submit("/resume")
    screen = t.wait_for(r"Resume Session")
    t.save("resume")
    assert re.search(r"→ .*newer session question", screen), screen
    t.keys("Enter")
    t.wait_for(r"Resumed session")
    history = t.history()
    assert "New answer." in history and "Old answer." not in history, history


def test_import_copies_a_session_file_in_and_switches_to_it(term, tmp_path):
    t = term(turns=answers("Answer to export."), width=220)
    t.wait_ready()
    t.ask("question to export", r"Answer to export\.")
    t.submit("/export exported.jsonl")
    t.wait_for(r"Session exported to: .*exported\.jsonl")
    t.submit("/new")
    t.wait_for(r"New session started")
    t.submit("/import missing.jsonl")
    t.wait_for(r"Failed to import session: File not found: .*missing\.jsonl")
    t.submit("/import exported.jsonl")
    t.wait_for(r"Replace current session with exported\.jsonl\?")
    t.keys("Enter")  # Yes
    t.wait_for(r"Session imported from: exported\.jsonl")
    history = t.history()
    assert "question to export" in history and "Answer to export." in history
    sessions = list((t.agent / "sessions").rglob("exported*.jsonl"))
    assert len(sessions) == 1, sessions


def test_share_creates_a_gist_with_gh_and_shows_the_viewer_link(term, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "gh-calls.txt"
    gh = bin_dir / "gh"
    gh.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {calls}\n'
        'if [ "$1" = gist ]; then test -s "$4" || exit 3; echo https://gist.github.com/someone/abc123def; fi\n'
    )
    gh.chmod(0o755)
    import os

    t = term(
        turns=answers("Worth sharing."),
        env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "PI_SHARE_VIEWER_URL": "http://127.0.0.1:9/view/"},
    )
    t.wait_ready()
    t.ask("question", r"Worth sharing\.")
    t.submit("/share")
    screen = t.wait_for(r"Gist: https://gist\.github\.com/someone/abc123def")
    assert "Share URL: http://127.0.0.1:9/view/#abc123def" in screen
    recorded = calls.read_text().splitlines()
    assert recorded[0] == "auth status"
    assert recorded[1].startswith("gist create --public=false ") and recorded[1].endswith("session.html")


def test_share_to_radius_says_what_is_missing(term):
    t = term(settings={"sessionShareDestination": "radius"})
    t.wait_ready()
    t.submit("/share")
    t.wait_for(r"Radius authentication is not configured\. Run '/login radius' first\.")


def test_changelog_shows_whats_new(term):
    t = term()
    t.wait_ready()
    t.submit("/changelog")
    t.wait_for(r"What's New")


def test_ctrl_x_copies_the_last_answer_through_the_terminal(term):
    t = term(turns=answers("Copy me please."))
    t.wait_ready()
    t._tmux("set-option", "-g", "set-clipboard", "on")
    t.ask("question", r"Copy me please\.")
    t.keys("C-x")
    t.wait_for(r"Copied last agent message to clipboard")
    assert t._tmux("show-buffer").strip() == "Copy me please."


def test_the_editor_and_footer_stay_on_screen_while_an_answer_streams(term):
    paragraphs = "\n\n".join(f"Paragraph {i}: " + "lorem ipsum dolor sit amet " * 5 for i in range(30))
    t = term(turns=answers(paragraphs), tokens_per_second=2000)
    t.wait_ready()
    t.submit("go")
    seen, broken, _ = t.watch_answer(
        "Paragraph 29", lambda screen: "(auto)" not in screen or not re.search(r"^─{100}$", screen, re.M)
    )
    assert seen > 0
    assert not broken, f"{len(broken)} of {seen} screens without the editor or footer:\n{broken[0]}"
