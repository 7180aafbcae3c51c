"""pi 1.6's ``/tree`` selector (help, search prompt, counter, search and cleared search) and
``/session`` screen in a real terminal, at the width the other screen tests use (100 columns).

What is expected was read off pi 1.6.0 in tmux on the same conversation: a tool call, then two
more questions (pi shows one more row, its start-up ``[system]`` entry, which piko does not write).
"""

from __future__ import annotations

import re

TURNS = [
    {
        "blocks": [
            {"text": "Let me read it."},
            {"tool_call": {"name": "read", "arguments": {"path": "notes.txt"}}},
        ],
        "usage": {"input": 1200, "output": 40, "cacheRead": 0, "cacheWrite": 3000},
    },
    {"blocks": [{"text": "The file says hello."}], "usage": {"input": 150, "output": 30, "cacheRead": 3000}},
    {"blocks": [{"text": "Second answer alpha."}], "usage": {"input": 5000, "output": 25, "cacheRead": 100}},
    {"blocks": [{"text": "Third answer beta."}], "usage": {"input": 100, "output": 20, "cacheRead": 5200}},
]
ROWS = [
    "user: read notes.txt please",
    "assistant: Let me read it.",
    "[read: notes.txt]",
    "assistant: The file says hello.",
    "user: second question",
    "assistant: Second answer alpha.",
    "user: third question",
    "assistant: Third answer beta.",
]


def _tree(screen: str) -> tuple[list[str], int | None, str]:
    """The tree's rows, the place of the selected one, and the counter line."""
    lines = screen.split("Type to search:", 1)[1].splitlines()[1:]
    rows = [line for line in lines if "• " in line]
    names = [re.sub(r"^[\s→]*• ", "", row).rstrip(" ✓").strip() for row in rows]
    selected = next((n for n, row in enumerate(rows) if row.lstrip().startswith("→")), None)
    counter = next((line.strip() for line in lines if re.match(r"\s*\(\d+/\d+\)", line)), "")
    return names, selected, counter


def _conversation(term):
    t = term(turns=TURNS, work_files={"notes.txt": "hello file\n"})
    t.wait_ready()
    for question, answer in (
        ("read notes.txt please", "The file says hello."),
        ("second question", "Second answer alpha."),
        ("third question", "Third answer beta."),
    ):
        t.submit(question)
        t.wait_for(re.escape(answer))
    return t


def test_tree_help_search_prompt_counter_and_a_cleared_search(term):
    t = _conversation(term)
    t.submit("/tree")
    screen = t.wait_for(r"Type to search:")
    t.save("tree")
    header = screen.split("Session Tree", 1)[1].splitlines()[1:5]
    assert header == [
        "  ↑/↓ move · pgup/pgdn page · ctrl+←/→ branch · shift+l label",
        "  filters ctrl+d/t/u/l/a · cycle ctrl+o/shift+ctrl+o",
        "",
        "  Type to search:",
    ], screen
    assert _tree(screen) == (ROWS, 7, "(8/8)"), screen  # counted though every row fits

    # a search keeps the selection on the selected row's nearest shown ancestor, in tree order
    t.type("second")
    screen = t.wait_for(lambda s: _tree(s)[2] == "(2/2)")
    assert "Type to search: second" in screen
    assert _tree(screen) == (["user: second question", "assistant: Second answer alpha."], 1, "(2/2)"), screen
    # cleared, the selection stays where the search left it (not on the first row)
    t.keys(*["BSpace"] * 6)
    screen = t.wait_for(lambda s: _tree(s)[2] == "(6/8)")
    assert _tree(screen) == (ROWS, 5, "(6/8)"), screen
    # nothing found: pi's words and (0/0); cleared, the same row again
    t.type("zzz")
    screen = t.wait_for(r"\(0/0\)")
    assert "No entries found" in screen, screen
    t.keys(*["BSpace"] * 3)
    screen = t.wait_for(lambda s: _tree(s)[2] == "(6/8)")
    assert _tree(screen)[1] == 5, screen
    # a filter other than the default one is named after the counter
    t.keys("C-t")
    screen = t.wait_for(r"\(5/7\) \[no-tools\]")
    assert "[read: notes.txt]" not in _tree(screen)[0], screen
    t.keys("Escape")
    t.wait_for(lambda s: "Type to search:" not in s)


def test_session_screen_in_pi16_layout(term):
    t = _conversation(term)
    t.submit("/session")
    text = t.wait_for(r"Status: Inactive", scrollback=True)
    t.save("session")
    block = [line.strip() for line in text.split("Session Info")[-1].splitlines()]
    messages = block.index("Messages")
    assert block[messages : messages + 5] == [
        "Messages",
        "Total: 8",
        "User: 3",
        "Assistant: 4",
        "Tools: 1 calls, 1 results",
    ], text
    tokens = block.index("Tokens")
    assert block[tokens + 1].startswith("Input: ") and block[tokens + 2].startswith("Cached: "), text
    assert re.fullmatch(r"Uncached: [\d,]+ \([\d,]+ written to cache\)", block[tokens + 3]), text
    warming = block.index("Cache Warming")
    assert block[warming : warming + 3] == [
        "Cache Warming",
        "Mode: idle",
        "Status: Inactive (cache lifetime unavailable)",
    ], text
    # the faux provider prices nothing, but its cache missed once: pi 1.6 shows the cost block then,
    # the re-billed tokens without a price
    cost = block.index("Cost")
    assert block[cost + 1] == "Total: $0.000", text
    assert re.fullmatch(r"Cache Re-billed: [\d,]+ tokens, 1 miss", block[cost + 2]), text
