"""The regular mode's defects found by comparing it with pi 1.6 in tmux, each pinned by a test."""

from __future__ import annotations

import re

CODE = "```python\n" + "\n".join(f"value_{i:02d} = {i}  # line {i}" for i in range(60)) + "\n```\n\nAfter the code."


def test_a_block_taller_than_the_terminal_is_in_the_scrollback_once(term):
    t = term(turns=[{"blocks": [{"text": CODE}]}], tokens_per_second=400, height=30)
    t.wait_ready()
    t.submit("show code")
    t.wait_for(r"After the code\.", timeout=40)
    t.wait_for(lambda s: "Working..." not in s)
    t.save("tall-block")
    history = t.history()
    for i in range(60):
        assert history.count(f"value_{i:02d} = {i}") == 1, (i, history)
    # no stale copy of the editor and footer in the middle of the scrollback
    assert len(re.findall(r"^─{100}$", history, re.M)) == 2, history
    assert history.count("(auto)") == 1, history
