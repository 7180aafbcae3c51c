"""The write tool: bytes on disk, pi's length wording, parents, errors, abort."""

from __future__ import annotations

from pathlib import Path

from tool_harness import aborted_signal
from tool_harness import run_tool


def test_writes_utf8_and_reports_utf16_length(work: Path) -> None:
    run = run_tool("write", {"path": "a/b/c.txt", "content": "é\U0001f600\n"}, work)
    assert run.text == "Successfully wrote 4 bytes to a/b/c.txt"
    assert run.details is None
    assert (work / "a/b/c.txt").read_bytes() == "é\U0001f600\n".encode()


def test_lone_surrogates_are_written_as_replacement_characters(work: Path) -> None:
    run = run_tool("write", {"path": "s.txt", "content": "a\ud800b"}, work, validate=False)
    assert run.text == "Successfully wrote 3 bytes to s.txt"
    assert (work / "s.txt").read_bytes() == b"a\xef\xbf\xbdb"


def test_overwrite_keeps_the_file_identity(work: Path) -> None:
    target = work / "f.txt"
    target.write_text("a long old content", encoding="utf-8")
    inode = target.stat().st_ino
    assert run_tool("write", {"path": "f.txt", "content": "new"}, work).ok
    assert target.read_text(encoding="utf-8") == "new"
    assert target.stat().st_ino == inode  # truncated in place, as fs.writeFile does


def test_aborted_write_does_nothing(work: Path) -> None:
    run = run_tool("write", {"path": "x.txt", "content": "x"}, work, signal=aborted_signal())
    assert run.text == "Operation aborted"
    assert not (work / "x.txt").exists()


def test_parent_that_is_a_file(work: Path) -> None:
    (work / "f").write_text("", encoding="utf-8")
    assert (
        run_tool("write", {"path": "f/x", "content": ""}, work).text
        == f"EEXIST: file already exists, mkdir '{work / 'f'}'"
    )


def test_a_parent_that_exists_but_refuses_children_ends_with_an_error(work: Path) -> None:
    """mkdir under /proc/<pid> fails with ENOENT although the parent exists: make_dirs used to spin."""
    run = run_tool("write", {"path": "/proc/self/new/x.txt", "content": "a"}, work)
    assert run.text == "ENOENT: no such file or directory, mkdir '/proc/self/new'"


def test_special_files_are_refused(work: Path) -> None:
    """A FIFO without a reader used to block the open for ever; a device is no file to write."""
    import os

    os.mkfifo(work / "pipe")
    run = run_tool("write", {"path": "pipe", "content": "a"}, work)
    assert run.text == f"Cannot write {work / 'pipe'}: it is a FIFO (named pipe), not a regular file"
    run = run_tool("write", {"path": "/dev/zero", "content": "a"}, work)
    assert run.text == "Cannot write /dev/zero: it is a character device, not a regular file"


def test_a_path_with_a_nul_byte_gets_nodes_message(work: Path) -> None:
    run = run_tool("write", {"path": "/tmp/a\x00b", "content": "a"}, work)
    assert run.text == (
        "The argument 'path' must be a string, Uint8Array, or URL without null bytes. Received '/tmp/a\\x00b'"
    )
