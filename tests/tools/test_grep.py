"""The grep tool: pi's output format, limits and notices, ignore files, dotfiles, errors."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from tool_harness import ToolRun
from tool_harness import aborted_signal
from tool_harness import make_app
from tool_harness import run_tool
from tool_harness import run_tool_async

from piko.lib.abort import AbortController


def write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def grep_run(root: Path, **params: Any) -> ToolRun:
    return run_tool("grep", params, root, app=make_app(root))


def ok_text(run: ToolRun) -> str:
    assert run.ok, run.error
    return run.text


def test_match_lines_relative_paths_sorted_by_file(work: Path) -> None:
    write(work, "b.txt", "x\nneedle two\n")
    write(work, "a/deep/c.txt", "needle one\nneedle three\n")
    run = grep_run(work, pattern="needle")
    assert ok_text(run) == "a/deep/c.txt:1: needle one\na/deep/c.txt:2: needle three\nb.txt:2: needle two"
    assert run.details is None


def test_context_blocks_like_pi(work: Path) -> None:
    write(work, "f.txt", "l1\nl2\nhit a\nl4\nhit b\nl6\n")
    out = ok_text(grep_run(work, pattern="hit", context=1))
    # every match gets its own block; overlapping context lines repeat, as in pi
    assert out == "f.txt-2- l2\nf.txt:3: hit a\nf.txt-4- l4\nf.txt-4- l4\nf.txt:5: hit b\nf.txt-6- l6"


def test_context_at_file_edges(work: Path) -> None:
    write(work, "f.txt", "hit\nafter")
    assert ok_text(grep_run(work, pattern="hit", context=3)) == "f.txt:1: hit\nf.txt-2- after"


def test_single_file_path_shows_its_name(work: Path) -> None:
    write(work, "sub/file.py", "def f():\n    return 1\n")
    assert ok_text(grep_run(work, pattern="return", path="sub/file.py")) == "file.py:2:     return 1"


def test_ignore_case_literal_and_glob(work: Path) -> None:
    write(work, "a.py", "Foo.bar\nfooXbar\n")
    write(work, "a.md", "foo.bar\n")
    assert (
        ok_text(grep_run(work, pattern="foo.bar", ignoreCase=True, literal=True, glob="*.py"))
        == "a.py:1: Foo.bar"
    )
    assert ok_text(grep_run(work, pattern="foo.bar", glob="*.py")) == "a.py:2: fooXbar"


def test_glob_with_directories(work: Path) -> None:
    write(work, "src/x.spec.ts", "it()\n")
    write(work, "src/x.ts", "it()\n")
    assert ok_text(grep_run(work, pattern="it", glob="**/*.spec.ts")) == "src/x.spec.ts:1: it()"


@pytest.mark.parametrize(
    ("git_repo", "ignores", "needles", "found"),
    [
        pytest.param(
            False,
            {".gitignore": "ignored.txt\nbuild/\n"},
            ["ignored.txt", "build/out.txt", "kept.txt"],
            "kept.txt:1: needle",
            id="gitignore_respected_outside_a_git_repo",
        ),
        pytest.param(
            True,
            {".gitignore": "*.log\n", "sub/.gitignore": "local.txt\n"},
            ["app.log", ".git/needle-file", "sub/local.txt", "sub/other.txt"],
            "sub/other.txt:1: needle",
            id="gitignore_respected_in_a_git_repo_and_git_dir_never_searched",
        ),
    ],
)
def test_gitignore_respected(
    work: Path, git_repo: bool, ignores: dict[str, str], needles: list[str], found: str
) -> None:
    if git_repo:
        subprocess.run(["git", "init", "-q", str(work)], check=True)
    for name, rules in ignores.items():
        write(work, name, rules)
    for name in needles:
        write(work, name, "needle\n")
    assert ok_text(grep_run(work, pattern="needle")) == found


def test_dotfiles_are_searched(work: Path) -> None:
    write(work, ".env", "SECRET=needle\n")
    write(work, ".config/tool.toml", "needle = 1\n")
    assert (
        ok_text(grep_run(work, pattern="needle")) == ".config/tool.toml:1: needle = 1\n.env:1: SECRET=needle"
    )


def test_limit_notice_and_details(work: Path) -> None:
    write(work, "f.txt", "".join(f"m{i}\n" for i in range(10)))
    run = grep_run(work, pattern="m", limit=3)
    assert ok_text(run) == (
        "f.txt:1: m0\nf.txt:2: m1\nf.txt:3: m2\n\n[3 matches limit reached. Use limit=6 for more, or refine pattern]"
    )
    assert run.details == {"matchLimitReached": 3}


def test_default_limit_is_100(work: Path) -> None:
    write(work, "f.txt", "hit\n" * 150)
    run = grep_run(work, pattern="hit")
    lines = ok_text(run).split("\n")
    assert lines[99] == "f.txt:100: hit"
    assert lines[-1] == "[100 matches limit reached. Use limit=200 for more, or refine pattern]"
    assert run.details == {"matchLimitReached": 100}


def test_exactly_limit_matches_still_reports_the_limit(work: Path) -> None:
    # pi stops rg at the limit without knowing whether more matches exist
    write(work, "f.txt", "hit\nhit\n")
    assert grep_run(work, pattern="hit", limit=2).details == {"matchLimitReached": 2}


def test_long_lines_cut_at_500_chars(work: Path) -> None:
    write(work, "f.txt", "match " + "a" * 600 + "\n")
    run = grep_run(work, pattern="match")
    out = ok_text(run)
    assert out == (
        "f.txt:1: match "
        + "a" * 494
        + "... [truncated]\n\n[Some lines truncated to 500 chars. Use read tool to see full lines]"
    )
    assert run.details == {"linesTruncated": True}


def test_byte_limit_notice_and_truncation_details(work: Path) -> None:
    write(work, "f.txt", "".join(f"hit {i:04d} {'x' * 400}\n" for i in range(200)))
    run = grep_run(work, pattern="hit", limit=1000)
    out = ok_text(run)
    assert out.endswith("\n\n[50.0KB limit reached]")
    details = run.details
    assert set(details) == {"truncation"}
    truncation = details["truncation"]
    assert truncation["truncated"] is True and truncation["truncatedBy"] == "bytes"
    assert truncation["maxLines"] == 2**53 - 1 and truncation["maxBytes"] == 51200
    assert truncation["totalLines"] == 200 and truncation["outputLines"] == len(out.split("\n")) - 2


def test_all_notices_together(work: Path) -> None:
    write(work, "f.txt", "".join(f"hit {'y' * 700}\n" for _ in range(120)))
    run = grep_run(work, pattern="hit", limit=110)
    assert ok_text(run).endswith(
        "\n\n[110 matches limit reached. Use limit=220 for more, or refine pattern. 50.0KB limit reached. "
        "Some lines truncated to 500 chars. Use read tool to see full lines]"
    )
    assert list(run.details) == ["matchLimitReached", "truncation", "linesTruncated"]


def test_crlf_and_invalid_utf8_lines(work: Path) -> None:
    write(work, "crlf.txt", b"one hit\r\ntwo\r\n")
    write(work, "bad.txt", b"hit \xff\xfe here\n")
    out = ok_text(grep_run(work, pattern="hit"))
    assert out == "bad.txt:1: hit \ufffd\ufffd here\ncrlf.txt:1: one hit"


def test_context_reads_crlf_files_like_pi(work: Path) -> None:
    write(work, "f.txt", b"a\r\nhit\r\nc\r\n")
    assert ok_text(grep_run(work, pattern="hit", context=1)) == "f.txt-1- a\nf.txt:2: hit\nf.txt-3- c"


def test_no_matches(work: Path) -> None:
    write(work, "f.txt", "nothing\n")
    run = grep_run(work, pattern="absent")
    assert ok_text(run) == "No matches found" and run.details is None


def test_path_not_found(work: Path) -> None:
    run = grep_run(work, pattern="x", path="missing")
    assert str(run.error) == f"Path not found: {work / 'missing'}"


def test_invalid_regex_reports_rg_error(work: Path) -> None:
    write(work, "f.txt", "x\n")
    run = grep_run(work, pattern="(unclosed")
    assert not run.ok
    assert "regex parse error" in str(run.error)


def test_pattern_starting_with_dash_is_a_pattern(work: Path) -> None:
    write(work, "f.txt", "a --flag here\n")
    assert ok_text(grep_run(work, pattern="--flag")) == "f.txt:1: a --flag here"


def test_tilde_and_at_paths(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(work))
    write(work, "notes/todo.md", "- hit\n")
    assert ok_text(grep_run(work, pattern="hit", path="~/notes")) == "todo.md:1: - hit"
    assert ok_text(grep_run(work, pattern="hit", path="@notes")) == "todo.md:1: - hit"


def test_abort_before_start(work: Path) -> None:
    run = run_tool("grep", {"pattern": "x"}, work, app=make_app(work), signal=aborted_signal())
    assert str(run.error) == "Operation aborted"


def test_abort_while_rg_runs(work: Path) -> None:
    from piko.plugins.tools.ripgrep import run_rg

    fifo = work / "pipe"
    os.mkfifo(fifo)  # rg blocks opening it until aborted (the grep tool refuses FIFOs before that)

    async def main() -> Any:
        controller = AbortController()
        task = asyncio.ensure_future(
            run_rg(["--json", "x", str(fifo)], lambda block: False, signal=controller.signal)
        )
        await asyncio.sleep(0.3)
        assert not task.done()
        controller.abort()
        return await asyncio.wait_for(task, 5)

    assert asyncio.run(main()).aborted is True


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_special_files_are_refused_before_rg_reads_them_forever(work: Path, kind: str) -> None:
    path = "/dev/zero"
    if kind == "fifo":
        os.mkfifo(work / "pipe")
        path = str(work / "pipe")
    run = asyncio.run(asyncio.wait_for(run_tool_async("grep", {"pattern": "x", "path": path}, work), 20))
    what = "a FIFO (named pipe)" if kind == "fifo" else "a character device"
    assert str(run.error) == f"Cannot search {path}: it is {what}, not a regular file or directory"


# -- pi's own grep tool (tests/fixtures/pi_exec_oracle) -------------------------------------------


def _oracle_cases() -> list[Any]:
    from test_find import oracle_cases

    return oracle_cases("grep")


@pytest.mark.parametrize(("tree", "case", "expected"), _oracle_cases())
def test_same_as_pi_grep(
    work: Path, tree: dict[str, str], case: dict[str, Any], expected: dict[str, Any]
) -> None:
    from test_find import make_oracle_tree
    from test_find import normalise

    make_oracle_tree(work, tree)
    assert normalise(run_tool("grep", case["params"], work, app=make_app(work))) == expected
