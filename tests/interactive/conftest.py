"""Fixtures for the interactive-mode tests: ``term(...)`` starts piko in a private tmux server."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tmux_terminal import TMUX
from tmux_terminal import Terminal

EXTENSIONS = Path(__file__).resolve().parent / "extensions"


@pytest.fixture
def term(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[..., Terminal]]:
    """``term(turns=..., args=..., settings=..., extensions=(...), start=True, **options)``: a running piko.

    ``extensions`` are file names under ``tests/interactive/extensions`` loaded with ``-e``.
    Screens saved with ``Terminal.save`` are named after the test.
    """
    if TMUX is None:
        pytest.fail(
            "tmux is not installed (apt-get install -y tmux); the interactive tests need a real terminal"
        )
    made: list[Terminal] = []
    base = re.sub(r"[^A-Za-z0-9_-]+", "-", request.node.name).strip("-")

    def make(*, extensions: tuple[str, ...] | list[str] = (), start: bool = True, **options: Any) -> Terminal:
        given = options.pop("args", None)
        args = list(given) if given is not None else ["--provider", "faux"]
        for name in extensions:
            args += ["-e", str(EXTENSIONS / name)]
        name = base if not made else f"{base}-{len(made)}"
        terminal = Terminal(tmp_path / f"t{len(made)}", args=args, name=name, **options)
        made.append(terminal)
        if start:
            terminal.start()
        return terminal

    try:
        yield make
    finally:
        for terminal in made:
            terminal.close()


@pytest.fixture
def tui_mode() -> str:
    """The TUI mode of a test that ``BOTH_MODES`` does not parametrise: the regular one, the terminal's default."""
    return "regular"


@pytest.fixture
def ready(term: Callable[..., Terminal], tui_mode: str) -> Callable[..., Terminal]:
    """``ready(*extensions, **options)``: ``term`` with those extensions, in the test's ``tui_mode``, once
    its start-up is done (``Terminal.wait_ready``)."""

    def make(*extensions: str, **options: Any) -> Terminal:
        terminal = term(extensions=extensions, tui_mode=tui_mode, **options)
        terminal.wait_ready()
        return terminal

    return make
