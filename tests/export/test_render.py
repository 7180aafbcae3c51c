"""The export page's content: every entry type, tool calls, diffs, images, markdown, the tree, totals."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from export_helpers import RICH
from export_helpers import SAMPLES
from export_helpers import Page
from export_helpers import call
from export_helpers import png_base64
from export_helpers import text

from piko.data.events import ExportRequest
from piko.plugins.export.html import default_output_path
from piko.plugins.export.html import export_html
from piko.plugins.export.session_view import ExportError


def export(source: Path, tmp_path: Path, name: str = "out.html") -> Page:
    out = tmp_path / name
    assert export_html(ExportRequest(session_file=str(source), output_path=str(out))) == str(out)
    return Page(out.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------
# pi's own session files
# ---------------------------------------------------------------------------


def _rich_entries() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RICH.read_text(encoding="utf-8").splitlines()[1:]]


def test_every_entry_type_of_a_pi_session(tmp_path: Path) -> None:
    page = export(RICH, tmp_path)
    entries = _rich_entries()
    leaf = entries[-1]["id"]
    by_id = {e["id"]: e for e in entries}
    branch: set[str] = set()
    current: str | None = leaf
    while current:
        branch.add(current)
        current = by_id[current]["parentId"]
    for entry in entries:
        if entry["type"] == "label":
            assert not page.find(id=f"e-{entry['id']}")
            continue
        element = page.entry(entry["id"])
        # the current branch is shown, other branches are hidden until picked in the tree
        assert ("off" in element["class"].split()) is (entry["id"] not in branch), entry
        tree = page.find("li", **{"data-id": entry["id"]})
        assert len(tree) == 1 and tree[0]["data-parent"] == (entry["parentId"] or "")
    body = page.text
    # name (latest session_info), labels (set, cleared, set again), header totals
    assert "<title>Fixture session renamed - pi session</title>" in page.html
    assert "<h1>Fixture session renamed</h1>" in page.html
    assert "first-again" in body and "checkpoint" in body and "branch-point" in body
    assert "[first]" not in body  # the cleared label
    assert "mock/mock-1, mock-anthropic/mock-claude" in body
    assert "4 user, 5 assistant, 1 tool results, 2 custom, 1 compactions, 1 branch summaries" in body
    assert "Tool calls1" in body.replace("\n", "")
    assert "$0.005" in body
    # messages, thinking, tool call with its output, user shell command, summaries, custom messages
    for expected in (
        "hello",
        "Hello! Ready to help.",
        "Let me think about this.",
        "Thought it through.",
        "echo fixture",
        "fixture",
        "echo from-bash",
        "from-bash",
        "Say hello and run a command.",
        "compacted from 126 tokens",
        "The branch ran a command and compacted.",
        "Injected note",
        "[fixture-note]",
        "array content ✓",
        "not displayed in the session",
        "Model: mock-anthropic/mock-claude",
        "Thinking level: high",
    ):
        assert expected in body, expected
    assert page.find("details", class_="thinking")
    assert page.find("div", class_="tool") and page.find("div", class_="done")
    # the leaf is named on the body (the script starts there) and marked in the tree
    assert page.find("body")[0]["data-leaf"] == leaf
    assert "is-leaf" in page.find("li", **{"data-id": leaf})[0]["class"]


def test_tools_sample_bash_read_write_edit_ls(tmp_path: Path) -> None:
    page = export(SAMPLES / "c-tools-json" / "session.jsonl", tmp_path)
    body = page.text
    assert "echo hello" in body and "hello world\nsecond line" in body
    assert "Successfully wrote 11 bytes to new.txt" in body
    # the edit's diff, lines coloured by kind
    assert re.search(r'<span class="del">-2 beta</span><span class="add">\+2 gamma</span>', page.html)
    assert '<span class="ctx"> 1 alpha</span>' in page.html
    assert "calc.py\nnew.txt\nnotes.txt\nsrc/" in body
    assert len(page.find("div", class_="tool")) == 5
    assert not page.find("div", class_="failed") and not page.find("div", class_="pending")
    # tool results are shown inside their calls and named in the tree
    for label in (
        "[bash: echo hello]",
        "[read: notes.txt]",
        "[write: new.txt]",
        "[edit: new.txt]",
        "[ls: .]",
    ):
        assert label in body


def test_every_sample_session_exports(tmp_path: Path) -> None:
    for sample in sorted(SAMPLES.iterdir()):
        page = export(sample / "session.jsonl", tmp_path, f"{sample.name}.html")
        assert page.find("section", id="conversation")
        assert len(page.find("article")) >= 2, sample.name


# ---------------------------------------------------------------------------
# Escaping: nothing from the session becomes markup
# ---------------------------------------------------------------------------

EVIL = '<script>alert("x")</script><img src=x onerror="alert(1)">'


def test_session_text_never_becomes_markup(session_file: Any, tmp_path: Path) -> None:
    s = session_file()
    s.header["cwd"] = f"/tmp/{EVIL}"
    s.add("model_change", provider=EVIL, modelId=EVIL)
    s.add("thinking_level_change", thinkingLevel=EVIL)
    first = s.user(f"{EVIL}\n\n<b>bold?</b> [click](javascript:alert(1)) ![pic](http://127.0.0.1:9/x.png)")
    s.add("label", targetId=first, label=EVIL)
    s.add("session_info", name=EVIL)
    s.assistant(
        {"type": "thinking", "thinking": EVIL},
        text(f"```html\n{EVIL}\n```\n{EVIL}"),
        call("c1", "bash", command=EVIL),
        call("c2", EVIL, **{"x": EVIL}),
        call("c3", "read", path=EVIL, offset=1, limit=2),
        call("c4", "edit", path=EVIL),
        provider=EVIL,
        model=EVIL,
    )
    s.tool_result("c1", "bash", EVIL)
    s.tool_result("c2", EVIL, EVIL)
    s.tool_result("c3", "read", EVIL)
    s.tool_result("c4", "edit", "ok", details={"diff": f"+1 {EVIL}\n-1 {EVIL}"})
    s.message(
        {
            "role": "bashExecution",
            "command": EVIL,
            "output": EVIL,
            "exitCode": 1,
            "cancelled": False,
            "truncated": False,
        }
    )
    s.add("custom_message", customType=EVIL, content=EVIL, display=True)
    s.add("custom_message", customType=EVIL, content=[text(EVIL)], display=False)
    s.add("compaction", summary=EVIL, firstKeptEntryId=first, tokensBefore=10)
    s.add("branch_summary", fromId=first, summary=EVIL)
    s.add(EVIL, data=EVIL)
    s.message({"role": EVIL, "content": EVIL})
    s.user([{"type": "image", "data": '"><script>alert(1)</script>', "mimeType": f"image/png{EVIL}"}])
    page = export(s.write(), tmp_path)

    # one script (ours, and the CSP admits only it by hash), no event handlers, no foreign loads
    assert len(page.scripts) == 1 and "alert" not in page.scripts[0]
    for tag, attrs in page.elements:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert tag not in ("script", "iframe", "object", "embed", "b") or tag == "script"
        if tag == "img":
            assert attrs["src"].startswith("data:image/png;base64,"), attrs
        if tag == "a":
            assert not attrs.get("href", "").lower().startswith("javascript"), attrs
    assert len(page.find("script")) == 1
    assert page.text.count(EVIL) >= 15  # shown as text, everywhere it occurred
    assert "<b>bold?</b>" in page.text  # raw HTML in markdown is shown, not interpreted
    assert "[image: pic]" in page.text  # a remote image becomes a link, nothing is fetched
    assert "[image: unreadable data]" in page.text


def test_content_security_policy_admits_only_the_page_script(tmp_path: Path) -> None:
    page = export(RICH, tmp_path)
    csp = page.find("meta", **{"http-equiv": "Content-Security-Policy"})[0]["content"]
    digest = base64.b64encode(hashlib.sha256(page.scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp
    assert "default-src 'none'" in csp and "img-src data:" in csp
    # self-contained: no external resource referenced anywhere
    for _tag, attrs in page.elements:
        for name in ("src", "href"):
            value = attrs.get(name, "")
            assert not value or value.startswith(("#", "data:")), attrs


# ---------------------------------------------------------------------------
# Tool calls, images, diffs, markdown
# ---------------------------------------------------------------------------


def test_images_inline_in_user_messages_and_tool_results(session_file: Any, tmp_path: Path) -> None:
    user_png, tool_png = png_base64(color=(10, 200, 10)), png_base64(color=(10, 10, 200))
    s = session_file()
    s.user([text("What is in this picture?"), {"type": "image", "data": user_png, "mimeType": "image/png"}])
    s.assistant(call("r1", "read", path="/home/alice/shot.png"))
    s.tool_result("r1", "read", "Read image file [image/png]", images=[tool_png])
    s.add(
        "custom_message",
        customType="screenshot",
        content=[text("A custom image"), {"type": "image", "data": user_png, "mimeType": "image/jpeg"}],
        display=True,
    )
    page = export(s.write(), tmp_path)
    sources = [attrs["src"] for tag, attrs in page.elements if tag == "img"]
    assert f"data:image/png;base64,{user_png}" in sources
    assert f"data:image/png;base64,{tool_png}" in sources
    assert f"data:image/jpeg;base64,{user_png}" in sources
    assert "~/shot.png" in page.text  # home directories shortened as pi shows them


def test_edit_diff_error_and_pending_calls(session_file: Any, tmp_path: Path) -> None:
    s = session_file()
    s.user("fix it")
    diff = " 1 def add(a, b):\n-2     return a - b\n+2     return a + b\n   ..."
    s.assistant(
        call("e1", "edit", path="calc.py", edits=[{"oldText": "a - b", "newText": "a + b"}]),
        call("e2", "edit", path="missing.py", oldText="x = 1", newText="x = 2"),
        call("b1", "bash", command="exit 3"),
        call("w1", "write", path="app.py", content="import os\n\nprint(os.getcwd())\n"),
        call("p1", "grep", pattern="TODO", path="src"),
    )
    s.tool_result(
        "e1",
        "edit",
        "Successfully replaced 1 block(s) in calc.py.",
        details={"diff": diff, "firstChangedLine": 2},
    )
    s.tool_result("e2", "edit", "Could not find the exact text in missing.py.", error=True)
    s.tool_result("b1", "bash", "\n\nCommand exited with code 3", error=True)
    s.tool_result("w1", "write", "Successfully wrote 33 bytes to app.py")
    page = export(s.write(), tmp_path)
    html = page.html
    assert '<span class="del">-2     return a - b</span><span class="add">+2     return a + b</span>' in html
    boxes = {attrs["id"]: attrs["class"].split() for attrs in page.find("div", class_="tool")}
    assert boxes["call-e1"] == ["tool", "done"]
    assert boxes["call-e2"] == ["tool", "failed"] and boxes["call-b1"] == ["tool", "failed"]
    assert boxes["call-p1"] == ["tool", "pending"]
    assert page.text.count("Error") >= 2 and "Command exited with code 3" in page.text
    # a failed edit shows what it tried to replace
    assert '<span class="del">-x = 1</span><span class="add">+x = 2</span>' in html
    # written files are highlighted by their name (pygments: a keyword span)
    assert '<span class="kn">import</span>' in html
    assert "(3 lines)" in page.text


def test_long_output_is_collapsible(session_file: Any, tmp_path: Path) -> None:
    s = session_file()
    s.user("count")
    s.assistant(call("b1", "bash", command="seq 1 30"))
    s.tool_result("b1", "bash", "\n".join(str(n) for n in range(1, 31)))
    page = export(s.write(), tmp_path)
    assert re.search(
        r'<pre class="output head">1\n2\n3\n4\n5</pre><details class="more"><summary>25 more lines', page.html
    )
    assert "6\n7" in page.text and "30" in page.text  # nothing is dropped, only folded


def test_markdown_code_tables_and_links(session_file: Any, tmp_path: Path) -> None:
    s = session_file()
    s.user("show me")
    s.assistant(
        text(
            "# Plan\n\nSome **bold** and `code` and ~~gone~~.\nNext line.\n\n"
            "```python\ndef f(x):\n    return x * 2\n```\n\n"
            "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
            "[docs](https://example.org/docs) and ![chart](data:image/png;base64," + png_base64() + ")"
        )
    )
    page = export(s.write(), tmp_path)
    html = page.html
    assert "<h1>Plan</h1>" in html and "<strong>bold</strong>" in html and "<code>code</code>" in html
    assert "<s>gone</s>" in html and "<br" in html  # single newlines are line breaks
    assert '<pre class="code hl"><code><span class="k">def</span>' in html
    assert "<table>" in html and "<td>1</td>" in html
    link = page.find("a", href="https://example.org/docs")[0]
    assert link["rel"] == "noopener noreferrer" and link["target"] == "_blank"
    assert any(tag == "img" and attrs.get("alt") == "chart" for tag, attrs in page.elements)


def test_skill_blocks_errors_and_aborts(session_file: Any, tmp_path: Path) -> None:
    s = session_file()
    s.user(
        '<skill name="tidy" location="/skills/tidy/SKILL.md">\nTidy the code.\n</skill>\n\nplease tidy src/'
    )
    s.assistant(text(""), stopReason="error", errorMessage="429 rate limited")
    s.assistant(stopReason="aborted")
    s.message(
        {
            "role": "bashExecution",
            "command": "sleep 9",
            "output": "",
            "exitCode": None,
            "cancelled": True,
            "truncated": False,
        }
    )
    s.message(
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "a\n",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "excludeFromContext": True,
        }
    )
    page = export(s.write(), tmp_path)
    body = page.text
    assert page.find("details", class_="skill") and "tidy" in body and "please tidy src/" in body
    assert "Error: 429 rate limited" in body and "Aborted" in body
    assert "(cancelled)" in body and "not sent to the model" in body
    assert "skill: tidy · user: please tidy src/" in body


# ---------------------------------------------------------------------------
# Tree and branches
# ---------------------------------------------------------------------------


def test_tree_indents_at_forks_and_shows_the_branch(session_file: Any, tmp_path: Path) -> None:
    s = session_file()
    root = s.user("start")
    a1 = s.assistant(text("first answer"))
    s.user("left question")
    left = s.assistant(text("left answer"))
    s.user("right question", parent=a1)
    right = s.assistant(text("right answer"))
    s.add("label", targetId=left, label="keep")
    s.leaf = right
    page = export(s.write(), tmp_path)
    rows = {attrs["data-id"]: attrs["class"].split() for attrs in page.find("li") if "data-id" in attrs}
    assert "d1" not in rows[root] and "d1" not in rows[a1]
    assert "d1" in rows["e3"] and "d1" in rows["e5"]  # the two children of the fork
    # the leaf is the last entry (a label entry, child of the right answer); the left branch is hidden
    assert "off" in page.entry(left)["class"].split()
    assert "off" not in page.entry(right)["class"].split()
    assert "[keep]" in page.text


def test_entries_handed_over_by_a_running_session(session_file: Any, tmp_path: Path) -> None:
    """RPC and /export pass the session's entries (and header) instead of a file."""
    from piko.sessions.entries import SessionHeader
    from piko.sessions.reading import entry_from_dict

    s = session_file()
    s.user("in memory only")
    s.assistant(text("never written"))
    out = tmp_path / "mem.html"
    request = ExportRequest(
        session_file=None,
        entries=[entry_from_dict(e) for e in s.entries],
        header=SessionHeader(s.header),
        output_path=str(out),
    )
    assert export_html(request, leaf_id="e1", system_prompt="You are <careful>.") == str(out)
    page = Page(out.read_text())
    assert "never written" in page.text and "You are <careful>." in page.text
    assert "off" in page.entry("e2")["class"].split()  # the leaf given by the session wins
    # pi's JSON dicts work too; the default name uses the session id when there is no file
    request = ExportRequest(entries=s.entries, header=s.header)
    assert default_output_path(None, s.header["id"]) == f"pi-session-{s.header['id']}.html"
    with pytest.raises(ExportError, match="Nothing to export yet"):
        export_html(ExportRequest(session_file=str(tmp_path / "unsaved.jsonl"), entries=[]))


# ---------------------------------------------------------------------------
# Files: reading never writes, bad input is a clear error
# ---------------------------------------------------------------------------


def test_default_output_name_is_pis() -> None:
    assert default_output_path("/x/2026-11-30T10-00-00-000Z_abc.jsonl", "abc") == (
        "pi-session-2026-11-30T10-00-00-000Z_abc.html"
    )
    assert default_output_path("notes.txt", None) == "pi-session-notes.txt.html"


def test_old_versions_are_read_not_rewritten(tmp_path: Path) -> None:
    source = Path(__file__).resolve().parents[1] / "session" / "fixtures" / "v1_session.jsonl"
    copy = tmp_path / "v1.jsonl"
    copy.write_bytes(source.read_bytes())
    page = export(copy, tmp_path)
    assert copy.read_bytes() == source.read_bytes()
    assert len(page.find("article")) >= 2


def test_broken_lines_are_reported_and_the_rest_exported(session_file: Any, tmp_path: Path) -> None:
    s = session_file()
    s.user("before the damage")
    s.assistant(text("still here"))
    path = s.write()
    lines = path.read_text().splitlines()
    lines.insert(2, "{not json")
    lines.append(
        '{"type":"message","id":"zz","parentId":"e2","timestamp":"x","message":{"role":"assistant","content":5}}'
    )
    path.write_text("\n".join(lines) + "\n")
    page = export(path, tmp_path)
    assert "before the damage" in page.text and "still here" in page.text
    assert "could not be read" in page.text
    assert "unreadable message" in page.text


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: d / "missing.jsonl", "File not found: "),
        (lambda d: d, "is a directory"),
        (lambda d: (d / "x.jsonl").write_text("hello\n") and d / "x.jsonl", "not a session file"),
    ],
)
def test_bad_input_files(tmp_path: Path, setup: Any, message: str) -> None:
    with pytest.raises(ExportError, match=re.escape(message)):
        export_html(ExportRequest(session_file=str(setup(tmp_path)), output_path=str(tmp_path / "o.html")))
    assert not (tmp_path / "o.html").exists()


def test_unwritable_output_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match=r"Cannot write .*no such directory"):
        export_html(ExportRequest(session_file=str(RICH), output_path=str(tmp_path / "nope" / "o.html")))
    with pytest.raises(ExportError, match="is a directory"):
        export_html(ExportRequest(session_file=str(RICH), output_path=str(tmp_path)))
    assert list(tmp_path.iterdir()) == []  # no temporary file left behind


def test_pi16_system_records_show_as_the_prompt_and_its_updates(tmp_path: Path) -> None:
    """pi 1.6's leading ``system`` message is the system prompt (its text and sections in order, the
    tools it declares); later ones are updates, named by what they change."""
    header = {
        "type": "session",
        "version": 3,
        "id": "s1",
        "timestamp": "2026-12-01T10:00:00.000Z",
        "cwd": "/w",
    }
    lines = [
        header,
        {"type": "message", "id": "a1", "parentId": None, "timestamp": "2026-12-01T10:00:01.000Z",
         "message": {"role": "system", "content": "", "timestamp": 1,
                     "sections": {"intro": "You help with <code>.", "where": "Work in /w."},
                     "toolsAdded": [{"name": "read", "description": "d", "parameters": {}},
                                    {"name": "bash", "description": "d", "parameters": {}}]}},
        {"type": "message", "id": "a2", "parentId": "a1", "timestamp": "2026-12-01T10:00:02.000Z",
         "message": {"role": "user", "content": "hi", "timestamp": 2}},
        {"type": "message", "id": "a3", "parentId": "a2", "timestamp": "2026-12-01T10:00:03.000Z",
         "message": {"role": "system", "content": "", "timestamp": 3,
                     "sections": {"where": "Work in /v.", "intro": None},
                     "toolsRemoved": [{"name": "bash"}]}},
    ]  # fmt: skip
    source = tmp_path / "s.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    page = export(source, tmp_path)
    text = page.text
    assert "System prompt" in text and "2 tools: read, bash" in text
    assert "You help with <code>.\n\nWork in /w." in text  # escaped text, sections in order
    assert "System update" in text and "where, -intro, tools -bash" in text
    assert 'Updated system prompt section "where":\n\nWork in /v.' in text
    assert 'Removed system prompt section "intro".' in text
    assert "[system prompt]" in page.html and "[system update: where, -intro, tools -bash]" in page.html
