"""The input editor's own behaviour: prompt history on disk, collapsed large pastes, ``$EDITOR``.

History is kept in ``<agent dir>/prompt-history.jsonl`` (one JSON string per line, newest
last, the last 1000 kept); pi keeps none across runs, so this is piko's. The user messages of
a resumed session come first when browsing with Up. A paste of more than 10 lines or 1000
characters shows as ``[paste #N +M lines]`` (or ``[paste #N C chars]``) and is expanded when
the message is sent, as pi does.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import subprocess
import tempfile
import time
from collections.abc import AsyncGenerator
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit.history import History

from piko.lib.text import normalize_newlines

HISTORY_FILE = "prompt-history.jsonl"
HISTORY_LIMIT = 1000
_MARKER = re.compile(r"\[paste #(\d+)( (\+\d+ lines|\d+ chars))?\]")


class PromptHistory(History):
    """Prompts sent, oldest first on disk; ``session_entries`` are offered first (newest)."""

    def __init__(
        self, path: Path | None, session_entries: list[str] | None = None, *, held: bool = False
    ) -> None:
        super().__init__()
        self.path = path
        self.session_entries = [e for e in (session_entries or []) if e.strip()]
        self._held: asyncio.Event | None = asyncio.Event() if held else None

    def release(self, session_entries: list[str]) -> None:
        """Let loading go on (held until the session's user messages are known)."""
        self.session_entries = [e for e in session_entries if e.strip()]
        if self._held is not None:
            self._held.set()

    async def load(self) -> AsyncGenerator[str, None]:
        if self._held is not None:
            await self._held.wait()
        async for item in super().load():
            yield item

    def load_history_strings(self) -> Iterable[str]:
        seen: set[str] = set()
        for entry in reversed(self.session_entries):
            if entry not in seen:
                seen.add(entry)
                yield entry
        for entry in reversed(self._read()):
            if entry not in seen:
                seen.add(entry)
                yield entry

    def _read(self) -> list[str]:
        if self.path is None:
            return []
        try:
            raw = self.path.read_text(encoding="utf-8")
        except OSError:
            return []
        entries: list[str] = []
        for line in raw.splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, str):
                entries.append(value)
        if len(entries) > 2 * HISTORY_LIMIT:
            entries = entries[-HISTORY_LIMIT:]
            self._rewrite(entries)
        return entries[-HISTORY_LIMIT:]

    def _rewrite(self, entries: list[str]) -> None:
        assert self.path is not None
        try:
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(
                "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries), encoding="utf-8"
            )
            os.replace(tmp, self.path)
        except OSError:
            pass

    def store_string(self, string: str) -> None:
        if self.path is None or not string.strip():
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(string, ensure_ascii=False) + "\n")
        except OSError:
            pass


class Pastes:
    """Large pastes kept aside while a marker stands for them in the editor."""

    def __init__(self) -> None:
        self.counter = 0
        self.contents: dict[int, str] = {}

    @staticmethod
    def clean(text: str) -> str:
        """Line endings normalised, tabs as spaces, control characters removed (newlines kept)."""
        text = normalize_newlines(text).replace("\t", "    ")
        return "".join(ch for ch in text if ch == "\n" or ord(ch) >= 32)

    def insert_text(self, pasted: str, before_cursor: str) -> str:
        """What to insert for a paste: the text itself, or a marker for a large one."""
        text = self.clean(pasted)
        if text[:1] in ("/", "~", ".") and before_cursor[-1:].isalnum():
            text = " " + text
        lines = text.split("\n")
        if len(lines) > 10 or len(text) > 1000:
            self.counter += 1
            self.contents[self.counter] = text
            if len(lines) > 10:
                return f"[paste #{self.counter} +{len(lines)} lines]"
            return f"[paste #{self.counter} {len(text)} chars]"
        return text

    def expand(self, text: str) -> str:
        """``text`` with every known marker replaced by its paste."""
        if not self.contents or "[paste #" not in text:
            return text

        def replace(match: re.Match[str]) -> str:
            content = self.contents.get(int(match.group(1)))
            return content if content is not None else match.group(0)

        return _MARKER.sub(replace, text)

    def clear(self) -> None:
        self.contents.clear()


def editor_command() -> list[str] | None:
    """``$VISUAL`` or ``$EDITOR`` split into words, or None when neither is set."""
    value = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not value:
        return None
    try:
        return shlex.split(value)
    except ValueError:
        return value.split()


def edit_externally(text: str, suffix: str = ".pi.md") -> str | None:
    """Run the external editor on ``text``; the new text, or None when it failed or none is set.

    Must run with the terminal released (``run_in_terminal``).
    """
    command = editor_command()
    if not command:
        return None
    fd, name = tempfile.mkstemp(prefix=f"pi-editor-{int(time.time() * 1000)}-", suffix=suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        try:
            status = subprocess.call([*command, name])
        except OSError:
            return None
        if status != 0:
            return None
        content = Path(name).read_text(encoding="utf-8")
        return content[:-1] if content.endswith("\n") else content
    finally:
        try:
            os.unlink(name)
        except OSError:
            pass
