"""``ctx.ui`` in ACP mode: an extension's yes/no or choice about a tool call becomes the client's
permission request; dialogs ACP has no form for (free text, editors, custom components) are
:class:`~piko.extensions.ui.NoOpUI`'s nothing, and notices go to the client as agent messages."""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from piko.extensions.ui import NoOpUI

# words that make a choice a refusal, so the client shows it as one
_REFUSALS = ("no", "deny", "block", "reject", "cancel", "abort", "stop", "don't", "never")

AskPermission = Callable[[str, list[tuple[str, str, str]]], Awaitable[str | None]]


class AcpUI(NoOpUI):
    """``ask(title, [(option_id, name, kind)])`` asks the client; it gives the chosen id or ``None``."""

    has_ui = True

    def __init__(self, ask: AskPermission, notify: Callable[[str], None]) -> None:
        self._ask = ask
        self._notify = notify

    async def confirm(self, title: str, message: str = "", **opts: Any) -> bool:
        text = f"{title}: {message}" if message else title
        chosen = await self._ask(
            text, [("allow", "Allow", "allow_once"), ("reject", "Reject", "reject_once")]
        )
        return chosen == "allow"

    async def select(self, title: str, options: list[Any], **opts: Any) -> Any:
        labels = [str(o.get("label", o.get("value")) if isinstance(o, dict) else o) for o in options]
        choices = [
            (str(i), label, "reject_once" if _is_refusal(label) else "allow_once")
            for i, label in enumerate(labels)
        ]
        chosen = await self._ask(title, choices)
        if chosen is None or not chosen.isdigit() or int(chosen) >= len(options):
            return None
        option = options[int(chosen)]
        return option.get("value", labels[int(chosen)]) if isinstance(option, dict) else option

    def notify(self, message: str, level: str = "info") -> None:
        self._notify(f"{level}: {message}" if level in ("warning", "error") else message)


def _is_refusal(label: str) -> bool:
    words = label.strip().lower()
    return any(words == w or words.startswith(w + " ") or words.startswith(w + ",") for w in _REFUSALS)
