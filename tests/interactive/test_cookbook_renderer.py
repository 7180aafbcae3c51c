"""docs/cookbook.md, "A tool with a custom renderer": the todo tool draws its call and its list in a
real terminal (tmux), collapsed and expanded with Ctrl+O."""

from __future__ import annotations

from support.doc_blocks import code_block


def _add(item: str) -> dict[str, object]:
    return {"blocks": [{"tool_call": {"name": "todo", "arguments": {"add": item}}}]}


def test_the_todo_tool_draws_itself(term, tmp_path):
    todo = tmp_path / "todo.py"
    todo.write_text(code_block("cookbook.md", "def render_result"), encoding="utf-8")
    turns = [_add(item) for item in ("milk", "eggs", "tea", "jam")] + [{"blocks": [{"text": "Four items."}]}]
    t = term(turns=turns, args=["--provider", "faux", "-e", str(todo)], height=60)
    t.wait_ready()
    t.submit("shopping list")
    screen = t.wait_for(r"Four items\.")
    assert "todo add milk" in screen and "todo add jam" in screen
    last = screen.rsplit("todo add jam", 1)[1]
    assert "○ eggs" in last and "○ tea" in last and "○ jam" in last and "○ milk" not in last  # last 3
    assert "[ ] milk" not in screen  # the content the model got is not what is drawn
    t.keys("C-o")
    expanded = t.wait_for(r"todo add jam(.|\n)*○ milk(.|\n)*○ jam")
    assert "○ milk" in expanded.rsplit("todo add jam", 1)[1]
