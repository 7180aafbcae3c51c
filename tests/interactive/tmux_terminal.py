"""Drive ``piko`` in a real terminal: a private tmux server, keys in, screens and scrollback out.

Each :class:`Terminal` runs one ``piko`` (offline ``faux`` provider, scripted turns) in its own
tmux server (``-L``) with no user configuration, in a temporary HOME, agent dir and work dir.
``screen()`` is what is visible now, ``history()`` everything including the scrollback;
``save(name)`` writes both (and the coloured screen) under ``tests/interactive/screens/``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

TMUX = shutil.which("tmux")
SCREENS = Path(__file__).resolve().parent / "screens"
PIKO = str(Path(sys.executable).with_name("piko"))


class Terminal:
    """One piko in one tmux pane."""

    def __init__(
        self,
        root: Path,
        *,
        turns: list[Any] | None = None,
        args: list[str] | None = None,
        settings: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        width: int = 100,
        height: int = 30,
        tokens_per_second: float | None = None,
        name: str = "term",
        agent_files: dict[str, str] | None = None,
        work_files: dict[str, str] | None = None,
        tui_mode: str | None = "regular",
        inside_tmux: bool = False,
    ) -> None:
        assert TMUX is not None, "tmux is required"
        self.root = root
        self.name = name
        self.home = root / "home"
        self.agent = self.home / ".pi" / "agent"
        self.work = root / "work"
        self.agent.mkdir(parents=True, exist_ok=True)
        self.work.mkdir(parents=True, exist_ok=True)
        self.script = root / "turns.json"
        self.script.write_text(json.dumps(turns or []), encoding="utf-8")
        # most tests read the scrollback, so they run the regular mode unless they ask otherwise
        # (``tui_mode=None``: no setting, piko's default)
        settings = {**({"tuiMode": tui_mode} if tui_mode else {}), **(settings or {})}
        (self.agent / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        for rel, text in (agent_files or {}).items():
            path = self.agent / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        for rel, text in (work_files or {}).items():
            path = self.work / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        self.socket = f"piko-test-{uuid.uuid4().hex[:10]}"
        self.stderr = root / f"stderr-{uuid.uuid4().hex[:6]}.txt"
        self.args = list(args if args is not None else ["--provider", "faux"])
        self.env = dict(env or {})
        self.inside_tmux = inside_tmux  # piko sees the pane's TMUX and TMUX_PANE (it can open panes)
        if tokens_per_second is not None:
            self.env["PIKO_FAUX_TOKENS_PER_SECOND"] = str(tokens_per_second)
        self.width = width
        self.height = height
        self.started = False

    # -- process -------------------------------------------------------------------------------

    def _tmux(self, *args: str, check: bool = True) -> str:
        done = subprocess.run(
            [str(TMUX), "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            check=False,
        )
        if check and done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout

    def environment(self) -> dict[str, str]:
        keep = ("PATH", "LANG", "LC_ALL", "TMPDIR", "PYTHONPATH")
        env = {k: v for k, v in os.environ.items() if k in keep}
        env.update(
            {
                "HOME": str(self.home),
                "PI_CODING_AGENT_DIR": str(self.agent),
                "PIKO_FAUX_SCRIPT": str(self.script),
                "PI_OFFLINE": "1",
                "COLORTERM": "truecolor",
                "LANG": os.environ.get("LANG") or "C.UTF-8",
            }
        )
        env.update(self.env)
        return env

    def start(self, args: list[str] | None = None) -> Terminal:
        env = self.environment()
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        if self.inside_tmux:
            exports += ' TMUX="$TMUX" TMUX_PANE="$TMUX_PANE"'
        command = " ".join(shlex.quote(a) for a in [PIKO, *(args if args is not None else self.args)])
        shell = (
            f"cd {shlex.quote(str(self.work))} && env -i {exports} {command} 2>>{shlex.quote(str(self.stderr))}; "
            f"code=$?; trap '' INT; echo; echo \"[piko exited with $code]\"; sleep 600"
        )
        self._tmux(
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            str(self.width),
            "-y",
            str(self.height),
            "sh",
            "-c",
            shell,
        )
        self._tmux("set-option", "-g", "history-limit", "20000", check=False)
        self.started = True
        return self

    def close(self) -> None:
        if self.started:
            path = self._tmux("display", "-p", "#{socket_path}", check=False).strip()
            self._tmux("kill-server", check=False)
            self.started = False
            if path:  # tmux leaves the socket file of a killed server
                Path(path).unlink(missing_ok=True)

    def errors(self) -> str:
        try:
            return self.stderr.read_text(encoding="utf-8")
        except OSError:
            return ""

    # -- input ---------------------------------------------------------------------------------

    def keys(self, *keys: str) -> None:
        """tmux key names: ``Enter``, ``Escape``, ``C-c``, ``M-Enter``, ``BTab``..."""
        self._tmux("send-keys", "-t", "main", *keys)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "main", "-l", text)

    def submit(self, text: str) -> None:
        self.type(text)
        time.sleep(0.15)
        self.keys("Enter")

    def ask(self, prompt: str, answer: str, *, timeout: float = 15.0) -> str:
        """Submit ``prompt`` and wait for the model's ``answer`` (a regex) on the screen; the screen."""
        self.submit(prompt)
        return self.wait_for(answer, timeout=timeout)

    def paste(self, text: str) -> None:
        """A bracketed paste (as a terminal sends it for Ctrl+Shift+V)."""
        self._tmux("set-buffer", "-b", "p", text)
        self._tmux("paste-buffer", "-p", "-b", "p", "-t", "main")

    # -- output --------------------------------------------------------------------------------

    def screen(self, *, colors: bool = False) -> str:
        args = ["capture-pane", "-p", "-t", "main"]
        if colors:
            args.append("-e")
        return self._tmux(*args)

    def history(self) -> str:
        """The scrollback and the screen, oldest line first."""
        return self._tmux("capture-pane", "-p", "-t", "main", "-S", "-", "-E", "-")

    def wait_for(
        self, pattern: str | Callable[[str], bool], *, timeout: float = 15.0, scrollback: bool = False
    ) -> str:
        """Wait until the screen (or the scrollback) shows ``pattern`` (a regex or a predicate)."""
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            text = self.history() if scrollback else self.screen()
            ok = pattern(text) if callable(pattern) else re.search(pattern, text, re.MULTILINE) is not None
            if ok:
                return text
            time.sleep(0.1)
        raise AssertionError(
            f"timed out waiting for {pattern!r}; screen:\n{text}\n--- stderr:\n{self.errors()}"
        )

    def watch_answer(self, last: str, is_broken: Callable[[str], bool]) -> tuple[int, list[str], str]:
        """Read the screen while an answer streams, until it shows ``last`` and the agent is done:
        how many screens showed the answer (a ``Paragraph``), those ``is_broken`` finds wrong, and
        the last screen."""
        seen, broken = 0, []
        while True:
            screen = self.screen()
            if "Paragraph" in screen:
                seen += 1
                if is_broken(screen):
                    broken.append(screen)
            if last in screen and "Working" not in screen:
                return seen, broken, screen
            assert seen < 5000, "the answer never finished"

    def wait_ready(self, timeout: float = 20.0) -> str:
        """Start-up is done: the footer shows the model and the header was printed; the screen."""
        self.wait_for(
            lambda s: ("faux-1" in s or "no-model" in s) and "piko v" in s, timeout=timeout, scrollback=True
        )
        return self.screen()

    def save(self, label: str) -> Path:
        SCREENS.mkdir(parents=True, exist_ok=True)
        path = SCREENS / f"{self.name}-{label}.txt"
        path.write_text(self.screen(), encoding="utf-8")
        (SCREENS / f"{self.name}-{label}.ans").write_text(self.screen(colors=True), encoding="utf-8")
        (SCREENS / f"{self.name}-{label}.history.txt").write_text(self.history(), encoding="utf-8")
        return path
