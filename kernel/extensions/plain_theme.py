"""The ``ctx.ui.theme`` of modes that draw nothing (print, JSON, RPC): styles give the text back.

pi has a theme in every mode, so an extension styles its status or widget text with
``ctx.ui.theme.fg("dim", text)`` without asking where it runs; here that is the text unchanged.
"""

from __future__ import annotations


class PlainTheme:
    """A theme whose every style leaves the text as it is (``name`` is ``"plain"``)."""

    name = "plain"

    def fg(self, color: str, text: str) -> str:
        """``text`` (no colour to draw it in)."""
        return text

    def bg(self, color: str, text: str) -> str:
        """``text`` (no background to draw it on)."""
        return text

    def bold(self, text: str) -> str:
        return text

    def italic(self, text: str) -> str:
        return text

    def underline(self, text: str) -> str:
        return text

    def inverse(self, text: str) -> str:
        return text

    def strikethrough(self, text: str) -> str:
        return text


PLAIN_THEME = PlainTheme()
