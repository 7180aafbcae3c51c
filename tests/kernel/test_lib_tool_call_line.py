"""The one-line form of a tool call in the session tree: the interactive mode's and the HTML export's
give pi's line (both are pi's ``formatToolCall``, which differ only in how a path is shortened)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from piko.lib.tool_call_line import read_range
from piko.plugins.export.tools import tool_call_summary
from piko.plugins.modes.interactive.commands.tree_view import format_tool_call

FRONT_ENDS = [
    pytest.param(tool_call_summary, id="export"),
    pytest.param(format_tool_call, id="tree"),
]

# (name, arguments, pi 0.73.1's line), as pi's formatToolCall gives them
LINES = [
    pytest.param("read", {"path": "a.py", "offset": 10, "limit": 5}, "[read: a.py:10-14]", id="read-range"),
    pytest.param("read", {"path": "a.py", "limit": 5}, "[read: a.py:1-5]", id="read-limit-only"),
    pytest.param("read", {"path": "a.py", "offset": 7}, "[read: a.py:7]", id="read-offset-only"),
    pytest.param("read", {"path": "a.py", "offset": 1, "limit": 0}, "[read: a.py:1]", id="read-limit-zero"),
    pytest.param("write", {"file_path": "n.txt"}, "[write: n.txt]", id="write-file-path"),
    pytest.param("bash", {"command": "ls -la\n\tpwd"}, "[bash: ls -la  pwd]", id="bash-one-line"),
    pytest.param(
        "bash", {"command": "x" * 50 + "   "}, f"[bash: {'x' * 50}...]", id="bash-cut-on-raw-length"
    ),
    pytest.param("grep", {"pattern": "a", "file_path": "/tmp/x"}, "[grep: /a/ in .]", id="grep-path-only"),
    pytest.param("find", {"pattern": "*.py", "path": "src"}, "[find: *.py in src]", id="find"),
    pytest.param("ls", {}, "[ls: .]", id="ls-default"),
    pytest.param("custom", {"x": 1.0, "y": "é"}, '[custom: {"x":1,"y":"é"}]', id="other-json-as-js"),
    pytest.param("custom", {"text": "y" * 60}, '[custom: {"text":"' + "y" * 31 + "...]", id="other-cut"),
]


@pytest.mark.parametrize("line", FRONT_ENDS)
@pytest.mark.parametrize(("name", "args", "expected"), LINES)
def test_a_call_reads_as_pi_writes_it(
    line: Callable[[str, Any], str], name: str, args: dict[str, Any], expected: str
) -> None:
    assert line(name, args) == expected


def test_each_front_end_shortens_home_its_own_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/srv/me")
    # the export: any /home/<user> or /Users/<user>; the tree: the running user's HOME
    assert tool_call_summary("ls", {"path": "/home/u/src"}) == "[ls: ~/src]"
    assert format_tool_call("ls", {"path": "/srv/me/src"}) == "[ls: ~/src]"
    assert format_tool_call("ls", {"path": "/home/u/src"}) == "[ls: /home/u/src]"


def test_the_export_header_range_is_the_line_range() -> None:
    assert read_range({"offset": 3, "limit": 2}) == ":3-4"
    assert read_range({}) == ""
