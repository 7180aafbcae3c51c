"""The fullscreen mode (pi 1.6's default) in a real terminal: sticky editor and footer, a viewport
that follows the answer, scrolling, search, mouse selection and copy, tool output expanded in place."""

from __future__ import annotations

import re

from scripted_turns import TWELVE_ECHOES
from scripted_turns import answers
from scripted_turns import bash_then_answer

RULE = re.compile(r"^─{100}$", re.M)
PARAGRAPHS = "\n\n".join(f"Paragraph {i} of the answer." for i in range(40))
CTRL_SHIFT_F = "\x1b[102;6u"  # what a terminal reporting modified keys sends (CSI u)


def fullscreen(term, **options):
    options.setdefault("tui_mode", "fullscreen")
    t = term(**options)
    t.wait_ready()
    return t


def bottom_lines(screen: str, count: int) -> list[str]:
    return screen.rstrip("\n").split("\n")[-count:]


def test_fullscreen_is_the_default_with_the_editor_and_footer_at_the_bottom(term):
    t = fullscreen(term, tui_mode=None, turns=answers("Short answer."))
    screen = t.screen()
    lines = screen.rstrip("\n").split("\n")
    assert len(lines) == 30, screen  # the whole terminal is the application's
    assert re.fullmatch(r"─{100}", lines[-5]) and re.fullmatch(r"─{100}", lines[-3]), screen
    assert "(auto)" in lines[-1], screen
    screen = t.ask("question", r"Short answer\.")
    assert "(auto)" in bottom_lines(screen, 1)[0], screen
    assert t.history().count("piko v") == 1  # nothing in the scrollback while it runs
    t.keys("C-d")
    history = t.wait_for(r"\[piko exited", scrollback=True)
    t.save("exit")
    # leaving, the transcript is printed into the normal screen, then how to resume
    assert history.count("Short answer.") == 1 and history.count("question") == 1, history
    assert re.search(r"To resume this session:\n\S*piko --session [0-9a-f-]{36}", history), history


def test_the_exit_output_can_be_only_the_resume_hint(term):
    t = fullscreen(
        term,
        turns=answers("Short answer."),
        settings={"fullscreenExitOutput": "resume-hint"},
    )
    t.ask("question", r"Short answer\.")
    t.keys("C-d")
    history = t.wait_for(r"\[piko exited", scrollback=True)
    assert "Short answer." not in history and "To resume this session:" in history, history


def test_the_viewport_follows_a_long_answer_and_keeps_the_editor_fixed(term):
    t = fullscreen(term, turns=answers(PARAGRAPHS), tokens_per_second=800)
    t.submit("long")

    def broken(screen: str) -> bool:
        lines = screen.rstrip("\n").split("\n")
        return len(lines) != 30 or "(auto)" not in lines[-1] or not RULE.search(screen)

    seen, wrong, screen = t.watch_answer("Paragraph 39", broken)
    assert not wrong, f"{len(wrong)} of {seen} screens without the editor or footer:\n{wrong[0]}"
    assert "piko v" not in screen  # scrolled along: the header is above the viewport
    assert "Paragraph 0 " not in screen


def test_scrolling_up_stays_put_and_the_end_key_follows_again(term):
    turns = [{"blocks": [{"text": PARAGRAPHS}]}, {"blocks": [{"text": "Second answer here."}]}]
    t = fullscreen(term, turns=turns)
    t.ask("long", r"Paragraph 39")
    t.wait_for(lambda s: "Working" not in s)
    t.keys("PageUp")
    screen = t.wait_for(r"Jump to latest message · Ctrl\+End")
    t.save("scrolled")
    assert "Paragraph 39" not in screen and "│" in screen  # a scrollbar at the right edge
    top = screen.split("\n")[1]
    t.submit("another")  # sending a message shows the end again
    screen = t.wait_for(r"Second answer here\.")
    assert "Jump to latest" not in screen
    t.keys("C-Home")
    screen = t.wait_for(r"piko v")
    assert "Paragraph 39" not in screen and top not in ("",)
    t.keys("C-End")
    screen = t.wait_for(r"Second answer here\.")
    assert "Jump to latest" not in screen and "piko v" not in screen


def test_the_mouse_wheel_scrolls_the_transcript(term):
    t = fullscreen(term, turns=answers(PARAGRAPHS))
    t.ask("long", r"Paragraph 39")
    t.wait_for(lambda s: "Working" not in s)
    for _ in range(4):
        t.type("\x1b[<64;10;10M")  # wheel up (SGR mouse report)
    screen = t.wait_for(r"Jump to latest message")
    assert "Paragraph 39" not in screen
    for _ in range(20):
        t.type("\x1b[<65;10;10M")  # wheel down, past the end: following again
    screen = t.wait_for(lambda s: "Jump to latest" not in s and "Paragraph 39" in s)


def test_ctrl_o_expands_and_collapses_the_tool_output_in_place(term):
    t = fullscreen(term, turns=bash_then_answer(TWELVE_ECHOES, "ran it"))
    t.ask("run", r"ran it")
    assert "earlier lines, ctrl+o to expand)" in t.screen()
    t.keys("C-o")
    screen = t.wait_for(r"^ line0\s*$")
    t.save("expanded")
    assert "Tool output: expanded" in screen
    assert screen.count("$ echo line0;") == 1 and screen.count("ran it") == 1, screen
    assert screen.index(" line0\n") < screen.index("ran it")
    t.keys("C-o")
    screen = t.wait_for(r"Tool output: collapsed")
    assert "earlier lines, ctrl+o to expand)" in screen and not re.search(r"^ line0\s*$", screen, re.M)
    assert screen.count("Tool output:") == 1  # the status replaced the one before


def test_ctrl_t_hides_and_shows_thinking_in_place(term):
    t = fullscreen(term, turns=[{"blocks": [{"thinking": "Deep private musing."}, {"text": "The answer."}]}])
    screen = t.ask("think", r"The answer\.")
    assert "Deep private musing." in screen
    t.keys("C-t")
    screen = t.wait_for(r"Thinking blocks: hidden")
    assert "Deep private musing." not in screen and "Thinking..." in screen, screen
    assert screen.index("Thinking...") < screen.index("The answer.")
    t.keys("C-t")
    screen = t.wait_for(r"Thinking blocks: visible")
    assert screen.count("Deep private musing.") == 1 and "Thinking..." not in screen, screen


def test_search_finds_matches_and_moves_between_them(term):
    t = fullscreen(term, turns=answers(PARAGRAPHS))
    t.ask("long", r"Paragraph 39")
    t.wait_for(lambda s: "Working" not in s)
    t.type(CTRL_SHIFT_F)
    t.wait_for(r"Search:")
    t.type("Paragraph 3 ")
    screen = t.wait_for(r"1/1")
    assert "Paragraph 3 of the answer." in screen and "Paragraph 39" not in screen, screen
    t.keys("C-u")
    t.type("of the answer")
    screen = t.wait_for(r"40/40")  # the latest match first
    t.keys("Enter")  # the previous one
    screen = t.wait_for(r"39/40")
    t.keys("Escape")
    screen = t.wait_for(lambda s: "Search:" not in s)
    assert re.search(r"^─{100}$", screen, re.M)


def test_dragging_selects_and_copies_the_text(term):
    t = fullscreen(term, turns=answers("Select these words please."))
    t._tmux("set-option", "-g", "set-clipboard", "on")
    screen = t.ask("question", r"Select these words please\.")
    row = next(i for i, line in enumerate(screen.split("\n")) if "Select these" in line) + 1
    column = screen.split("\n")[row - 1].index("these") + 1
    t.type(f"\x1b[<0;{column};{row}M")  # press
    t.type(f"\x1b[<32;{column + 8};{row}M")  # drag
    t.type(f"\x1b[<0;{column + 10};{row}m")  # release: copied
    t.wait_for(r"Copied!")
    assert t._tmux("show-buffer").strip() == "these words"


# every built-in command in fullscreen: what it shows, and whether it opens a dialog (closed with Escape)
COMMANDS = [
    ("/model", r"No models available", False),
    ("/scoped-models", r"No models available", False),
    ("/thinking", r"Current model does not support thinking", False),
    ("/export", r"Session exported to: ", False),
    ("/import", r"Error: Usage: /import <path\.jsonl>", False),
    ("/share", r"Error: GitHub CLI \(gh\) is not installed", False),
    ("/copy", r"Copied last agent message to clipboard", False),
    ("/name shiny", r"Session name set: shiny", False),
    ("/session", r"ID: [0-9a-f-]{36}", False),
    ("/changelog", r"What's New", False),
    ("/hotkeys", r"Toggle tool output expansion", False),
    ("/settings", r"Auto-compact: true", True),
    ("/fork", r"Fork from Message", True),
    ("/tree", r"Session Tree", True),
    ("/resume", r"Resume Session", True),
    ("/login", r"Select authentication method", True),
    ("/compact", r"Nothing to compact", False),
    ("/logout", r"No stored credentials to remove", False),
    ("/reload", r"Reloaded settings", False),
    ("/new", r"New session started", False),
]


def test_every_slash_command_works_in_fullscreen(term):
    t = fullscreen(term, turns=answers("An answer."))
    t._tmux("set-option", "-g", "set-clipboard", "on")
    t.ask("question", r"An answer\.")
    for command, shows, dialog in COMMANDS:
        t.submit(command)
        screen = t.wait_for(shows)
        if dialog:
            t.keys("Escape")
        screen = t.wait_for(
            lambda s: (
                "escape cancel" not in s
                and len(RULE.findall(s)) >= 2
                and "(auto)" in s.rstrip().split("\n")[-1]
            )
        )
        assert len(screen.rstrip("\n").split("\n")) == 30, (command, screen)
    assert "An answer." not in t.screen()  # /new replaced the conversation
    t.submit("/quit")
    t.wait_for(r"\[piko exited with 0\]", scrollback=True)
    assert "Traceback" not in t.errors()


def test_switching_to_regular_at_run_time_keeps_the_conversation(term):
    t = fullscreen(term, turns=answers("An answer."))
    t.ask("question", r"An answer\.")
    t.submit("/settings")
    t.wait_for(r"Auto-compact")
    t.type("tui mode")
    t.wait_for(r"TUI mode: fullscreen")
    t.keys("Enter")
    t.wait_for(r"TUI mode: regular", timeout=10)
    t.keys("Escape")
    screen = t.wait_for(lambda s: "TUI mode" not in s and RULE.search(s))
    t.save("switched")
    # regular: the editor right under the conversation, not at the bottom of the terminal
    footer_row = next(i for i, line in enumerate(screen.split("\n")) if "(auto)" in line)
    assert footer_row < 25, screen
    history = t.history()
    assert history.count("An answer.") == 1 and history.count("piko v") == 1, history
    assert '"tuiMode": "regular"' in (t.agent / "settings.json").read_text()


def test_an_invalid_tui_mode_is_refused(term):
    t = term(args=["--provider", "faux", "--tui-mode", "sideways"])
    history = t.wait_for(r"\[piko exited with 1\]", scrollback=True)
    assert 'Invalid TUI mode "sideways". Valid values: regular, fullscreen' in t.errors(), history


def test_tree_filters_labels_and_folds_with_its_keys(term):
    turns = answers("Answer one.", "Answer two.")
    t = fullscreen(term, turns=turns)
    t.ask("question one", r"Answer one\.")
    t.ask("question two", r"Answer two\.")
    t.submit("/tree")
    t.wait_for(r"Type to search:")
    t.keys("C-u")  # user messages only: pi 1.6 says so after the counter
    screen = t.wait_for(r"\(2/2\) \[user\]")
    rows = screen.split("Session Tree")[1]
    assert "assistant: Answer one." not in rows and "user: question one" in rows, screen
    t.keys("Up")
    t.wait_for(r"→ .*user: question one")
    t.keys("L")  # shift+l: a label for the entry
    t.wait_for(r"Label")
    t.type("start here")
    t.keys("Enter")
    t.wait_for(r"\[start here\] user: question one")
    t.keys("C-d")  # the default filter again: no label after the counter
    t.wait_for(lambda s: "[user]" not in s and re.search(r"\(\d+/\d+\)\n", s) is not None)
    t.keys("C-Left")  # fold what is under the selected entry
    screen = t.wait_for(r"⊞")
    assert "question two" not in screen.split("Session Tree")[1], screen
    t.keys("C-Right")
    t.wait_for(r"• user: question two")
    t.keys("Escape")
    t.wait_for(lambda s: "Type to search:" not in s)


def test_resume_sorts_and_filters_named_sessions_with_its_keys(term):
    turns = answers("Old answer.", "New answer.")
    t = fullscreen(term, turns=turns)
    t.ask("old question", r"Old answer\.")
    t.submit("/name first-one")
    t.submit("/new")
    t.wait_for(r"New session started")
    t.ask("new question", r"New answer\.")
    t.submit("/resume")
    t.wait_for(r"old question|first-one")
    t.save("resume")
    t.keys("C-s")  # threaded -> recent
    t.wait_for(r"Recent")
    t.keys("C-n")  # named sessions only
    t.wait_for(lambda s: "Name: Named" in s and "new question" not in s.split("Search:")[1])
    t.keys("C-n")
    t.wait_for(lambda s: "new question" in s.split("Search:")[-1])
    t.keys("Escape")
    t.wait_for(lambda s: "Recent" not in s and RULE.search(s))


def test_a_resumed_session_of_thousands_of_messages_opens_scrolls_and_searches(term, tmp_path):
    from bench_long_session import write_session

    t = term(tui_mode="fullscreen", start=False, turns=answers("Still quick."))
    session = tmp_path / "long.jsonl"
    last = write_session(session, str(t.work), 3000)
    t.start(["--provider", "faux", "--session", str(session)])
    t.wait_for(lambda s: last in s and "(auto)" in s, timeout=60)
    t.keys("C-Home")
    t.wait_for(r"Question 0: how does part 0 work\?", timeout=60)
    t.keys("C-End")
    t.wait_for(lambda s: last in s and "Jump to latest" not in s, timeout=60)
    t.type(CTRL_SHIFT_F)
    t.wait_for(r"Search:")
    t.type("part 1500 work")
    screen = t.wait_for(r"1/1\s", timeout=120)
    assert "Question 1500: how does part 1500 work?" in screen, screen
    t.keys("Escape")
    t.ask("and now?", r"Still quick\.", timeout=60)  # streams with the long transcript behind it
