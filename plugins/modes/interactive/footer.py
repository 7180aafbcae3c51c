"""The footer under the editor: where you are, what the session used, and which model answers.

Line 1: the working directory (``~`` for home), the git branch in parentheses, the session
name after ``•``. Line 2: tokens in (``↑``), out (``↓``), cache reads (``R``) and writes
(``W``), the cost, the context use against the window (``(auto)`` while auto-compaction is on;
warning colour above 70%, error above 90%), and on the right the model, its thinking level,
and the provider when several are available. Line 3: extension statuses (``ui.set_status``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from typing import Generic
from typing import TypeVar

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.utils import get_cwidth

T = TypeVar("T")


def format_tokens(count: float) -> str:
    """pi's compact token counts: 999, 1.2k, 45k, 1.2M, 12M."""
    if count < 1000:
        return str(int(count))
    if count < 10000:
        return f"{count / 1000:.1f}k"
    if count < 1000000:
        return f"{round(count / 1000)}k"
    if count < 10000000:
        return f"{count / 1000000:.1f}M"
    return f"{round(count / 1000000)}M"


def _sanitize(text: str) -> str:
    return re.sub(r" +", " ", re.sub(r"[\r\n\t]", " ", text)).strip()


def _truncate(text: str, width: int, ellipsis: str = "...") -> str:
    if get_cwidth(text) <= width:
        return text
    out = ""
    for ch in text:
        if get_cwidth(out + ch + ellipsis) > width:
            break
        out += ch
    return out + ellipsis


class WatchedFile(Generic[T]):
    """What ``parse`` makes of a file's text (of ``None`` when it cannot be read), read again
    only when the file's modification time changed."""

    def __init__(self, path: Path, parse: Callable[[str | None], T]) -> None:
        self.path = path
        self._parse = parse
        self._stamp: float | None = None
        self._value: T | None = None

    def get(self) -> T | None:
        """The parsed content; ``None`` while the file is not there."""
        try:
            stamp = self.path.stat().st_mtime
        except OSError:
            return None
        if stamp != self._stamp:
            self._stamp = stamp
            try:
                text: str | None = self.path.read_text(encoding="utf-8")
            except OSError:
                text = None
            self._value = self._parse(text)
        return self._value


def _branch_of_head(content: str | None) -> str | None:
    """The branch ``.git/HEAD`` names, ``detached`` when it names a commit."""
    if content is None:
        return None
    content = content.strip()
    return content[len("ref: refs/heads/") :] if content.startswith("ref: refs/heads/") else "detached"


def _oauth_providers(content: str | None) -> set[str]:
    """The providers whose ``auth.json`` credential is an OAuth login."""
    try:
        data = json.loads(content or "{}")
    except ValueError:
        data = {}
    return {
        name for name, entry in (data.items() if isinstance(data, dict) else [])
        if isinstance(entry, dict) and entry.get("type") == "oauth"
    }  # fmt: skip


class GitBranch:
    """The current branch from ``.git/HEAD`` (re-read when it changes); None outside a repository."""

    def __init__(self, cwd: str) -> None:
        self.head: WatchedFile[str | None] | None = None
        directory = Path(cwd).resolve()
        for candidate in (directory, *directory.parents):
            git = candidate / ".git"
            if git.is_dir():
                self.head = WatchedFile(git / "HEAD", _branch_of_head)
                break
            if git.is_file():  # a worktree: "gitdir: <path>"
                try:
                    target = git.read_text(encoding="utf-8").strip().removeprefix("gitdir:").strip()
                except OSError:
                    break
                self.head = WatchedFile((candidate / target / "HEAD").resolve(), _branch_of_head)
                break

    def get(self) -> str | None:
        return self.head.get() if self.head is not None else None


class Subscription:
    """Whether a provider's stored credential (``auth.json``) is an OAuth login: the cost shows ``(sub)``."""

    def __init__(self, agent_dir: Path) -> None:
        self.auth = WatchedFile(agent_dir / "auth.json", _oauth_providers)

    def uses(self, provider: str) -> bool:
        return provider in (self.auth.get() or ())


class FooterData:
    """Totals over the session's entries, recomputed only when entries were added."""

    def __init__(self) -> None:
        self._key: tuple[int, int] | None = None
        self.totals = (0, 0, 0, 0, 0.0)

    def compute(self, session: Any) -> tuple[int, int, int, int, float]:
        entries = session.session_manager.get_entries()
        key = (len(entries), id(entries[-1]) if entries else 0)
        if key == self._key:
            return self.totals
        inp = out = cache_read = cache_write = 0
        cost = 0.0
        for entry in entries:
            message: Any = getattr(entry, "message", None)
            if getattr(entry, "type", "") != "message" or getattr(message, "ROLE", "") != "assistant":
                continue
            usage = message.usage
            inp += usage.input
            out += usage.output
            cache_read += usage.cache_read
            cache_write += usage.cache_write
            cost += usage.cost.total
        self._key = key
        self.totals = (inp, out, cache_read, cache_write, cost)
        return self.totals


def footer_fragments(
    session: Any,
    width: int,
    *,
    data: FooterData,
    branch: str | None,
    statuses: dict[str, str],
    provider_count: int,
    using_subscription: bool = False,
) -> StyleAndTextTuples:
    """The footer's lines as prompt_toolkit fragments."""
    cwd = str(getattr(session.session_manager, "cwd", None) or session.cwd)
    home = os.path.expanduser("~")
    if home and home != "~" and cwd.startswith(home):
        cwd = "~" + cwd[len(home) :]
    if branch:
        cwd += f" ({branch})"
    name = session.session_manager.get_session_name()
    if name:
        cwd += f" • {name}"
    out: StyleAndTextTuples = [("class:t-dim", _truncate(cwd, width)), ("", "\n")]

    inp, outp, cache_read, cache_write, cost = data.compute(session)
    stats: list[str] = []
    if inp:
        stats.append(f"↑{format_tokens(inp)}")
    if outp:
        stats.append(f"↓{format_tokens(outp)}")
    if cache_read:
        stats.append(f"R{format_tokens(cache_read)}")
    if cache_write:
        stats.append(f"W{format_tokens(cache_write)}")
    if cost or using_subscription:
        stats.append(f"${cost:.3f}" + (" (sub)" if using_subscription else ""))
    model = session.model
    usage = session.get_context_usage() if model is not None else None
    window = (usage.context_window if usage else 0) or (model.context_window if model else 0) or 0
    percent = usage.percent if usage else None
    auto = " (auto)" if session.compaction.enabled else ""
    if usage is None:
        context = f"0.0%/{format_tokens(window)}{auto}"
    elif percent is None:
        context = f"?/{format_tokens(window)}{auto}"
    else:
        context = f"{percent:.1f}%/{format_tokens(window)}{auto}"
    value = percent or 0
    context_style = "class:t-error" if value > 90 else ("class:t-warning" if value > 70 else "class:t-dim")
    left = " ".join(stats)
    left_width = get_cwidth(left) + (1 if left else 0) + get_cwidth(context)

    model_name = model.id if model is not None else "no-model"
    right = model_name
    if model is not None and model.reasoning:
        level = session.thinking_level or "off"
        right = f"{model_name} • thinking off" if level == "off" else f"{model_name} • {level}"
    if provider_count > 1 and model is not None:
        with_provider = f"({model.provider}) {right}"
        if left_width + 2 + get_cwidth(with_provider) <= width:
            right = with_provider
    if left_width > width:
        out.append(("class:t-dim", _truncate(left + " " + context, width)))
    else:
        if left:
            out.append(("class:t-dim", left + " "))
        out.append((context_style, context))
        room = width - left_width
        if room >= 2 + 1:
            shown = right if get_cwidth(right) + 2 <= room else _truncate(right, room - 2, "")
            out.append(("class:t-dim", " " * (room - get_cwidth(shown)) + shown))
    if statuses:
        line = " ".join(_sanitize(statuses[key]) for key in sorted(statuses))
        out.append(("", "\n"))
        if "\x1b" in line:
            from prompt_toolkit.formatted_text import ANSI
            from prompt_toolkit.formatted_text import to_formatted_text

            out.extend(to_formatted_text(ANSI(line)))
        else:
            out.append(("", _truncate(line, width)))
    return out
