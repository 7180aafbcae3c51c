"""Finding rg (interpreter scripts dir, then PATH), the missing-rg error, and streaming runs."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path

import pytest
from tool_harness import make_app
from tool_harness import run_tool

from piko.plugins.tools import ripgrep


@pytest.fixture(autouse=True)
def fresh_cache():
    ripgrep.clear_cache()
    yield
    ripgrep.clear_cache()


def fake_rg(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "rg"
    path.write_text("#!/bin/sh\necho fake\n")
    path.chmod(0o755)
    return path


def test_finds_the_pinned_rg_next_to_the_interpreter() -> None:
    found = ripgrep.find_rg()
    assert found is not None
    assert os.path.dirname(found) in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable))
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=True).stdout
    assert version.startswith("ripgrep 14.1.0")


def test_candidate_dirs_are_the_interpreter_scripts_dirs() -> None:
    dirs = ripgrep.candidate_dirs()
    assert dirs[0] == sysconfig.get_path("scripts")
    assert os.path.dirname(sys.executable) in dirs


def test_falls_back_to_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ripgrep, "candidate_dirs", lambda: [str(tmp_path / "empty")])
    on_path = fake_rg(tmp_path / "bin")
    assert ripgrep.find_rg(path=f"{tmp_path / 'nothing'}{os.pathsep}{tmp_path / 'bin'}") == str(on_path)


def test_scripts_dir_wins_over_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pinned = fake_rg(tmp_path / "scripts")
    fake_rg(tmp_path / "bin")
    monkeypatch.setattr(ripgrep, "candidate_dirs", lambda: [str(tmp_path / "scripts")])
    assert ripgrep.find_rg(path=str(tmp_path / "bin")) == str(pinned)


def test_non_executable_file_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "rg").write_text("not a program")
    monkeypatch.setattr(ripgrep, "candidate_dirs", lambda: [str(tmp_path / "scripts")])
    assert ripgrep.find_rg(path="") is None


def test_missing_rg_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ripgrep, "candidate_dirs", lambda: [str(tmp_path / "none")])
    monkeypatch.setenv("PATH", str(tmp_path / "none"))
    with pytest.raises(ripgrep.RipgrepNotFoundError) as info:
        ripgrep.require_rg()
    assert "pip install ripgrep==14.1.0" in str(info.value)
    root = tmp_path / "work"
    root.mkdir()
    for tool in ("grep", "find"):
        run = run_tool(tool, {"pattern": "x"}, root, app=make_app(root))
        assert isinstance(run.error, ripgrep.RipgrepNotFoundError), run
        assert "ripgrep (rg) is not available" in str(run.error)


def test_cache_forgets_a_removed_binary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ripgrep, "candidate_dirs", lambda: [str(tmp_path / "scripts")])
    first = fake_rg(tmp_path / "scripts")
    assert ripgrep.find_rg(path="") == str(first)
    first.unlink()
    assert ripgrep.find_rg(path="") is None


# -- run_rg --------------------------------------------------------------------------------------


def test_run_rg_hands_over_whole_lines(tmp_path: Path) -> None:
    for i in range(300):
        (tmp_path / f"file{i:03d}.txt").write_text("x")
    blocks: list[bytes] = []

    def on_output(block: bytes) -> bool:
        blocks.append(block)
        return False

    result = asyncio.run(ripgrep.run_rg(["--files", "--sort", "path"], on_output, cwd=str(tmp_path)))
    assert result.code == 0 and not result.stopped and not result.aborted
    assert all(block.endswith(b"\n") for block in blocks)
    assert b"".join(blocks).decode().splitlines() == [f"file{i:03d}.txt" for i in range(300)]


def test_run_rg_stops_when_asked(tmp_path: Path) -> None:
    # rg reads a FIFO that a writer keeps filling and never closes: only stopping rg ends the run
    fifo = tmp_path / "stream"
    os.mkfifo(fifo)
    done = threading.Event()

    def writer() -> None:
        try:
            with open(fifo, "wb") as handle:
                while not done.is_set():
                    handle.write(b"hit\n" * 4096)
        except BrokenPipeError:
            pass

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    seen: list[bytes] = []

    def on_output(block: bytes) -> bool:
        seen.append(block)
        return True

    try:
        result = asyncio.run(asyncio.wait_for(ripgrep.run_rg(["--json", "hit", str(fifo)], on_output), 20))
    finally:
        done.set()
    thread.join(5)
    assert result.stopped is True and result.aborted is False
    assert len(seen) == 1 and b'"type":"begin"' in seen[0]


def test_run_rg_reports_stderr_and_exit_code(tmp_path: Path) -> None:
    result = asyncio.run(ripgrep.run_rg(["--json", "(", str(tmp_path)], lambda block: False))
    assert result.code == 2 and "regex parse error" in result.stderr


def test_run_rg_surfaces_a_failing_consumer(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("hit\n")

    def broken(block: bytes) -> bool:
        raise ValueError("consumer bug")

    with pytest.raises(ValueError, match="consumer bug"):
        asyncio.run(ripgrep.run_rg(["--json", "hit", str(tmp_path)], broken))
