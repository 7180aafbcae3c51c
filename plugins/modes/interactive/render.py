"""Turning rich renderables into ANSI lines at a width (what is printed and what the live region shows).

:class:`Painter` creates its rich console on first use, so opening the editor does not wait for
rich; markdown (:mod:`.markdown`) is imported the first time an answer is drawn.
"""

from __future__ import annotations

import io
import os
import re
from typing import Any

from piko.plugins.modes.interactive.theme import Theme

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def visible(line: str) -> str:
    """``line`` without its colour codes."""
    return _ANSI.sub("", line)


def color_system() -> str:
    """``truecolor`` when the terminal says so (``$COLORTERM``), else ``256``."""
    if os.environ.get("COLORTERM", "").lower() in ("truecolor", "24bit"):
        return "truecolor"
    if os.environ.get("NO_COLOR"):
        return "standard"
    return "256"


class Painter:
    """Renders rich renderables into ANSI lines at a width, in one theme."""

    def __init__(self, theme: Theme, system: str | None = None) -> None:
        self.theme = theme
        self.color_system = system or color_system()
        self._console: Any = None

    @property
    def console(self) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(
                file=io.StringIO(),
                force_terminal=True,
                force_jupyter=False,
                color_system=self.color_system,  # type: ignore[arg-type]
                width=80,
                theme=self.theme.rich_theme,
                highlight=False,
                emoji=False,
                markup=False,
                legacy_windows=False,
            )
        return self._console

    def lines(self, renderable: Any, width: int) -> list[str]:
        """``renderable`` as ANSI lines: no trailing blank lines, no trailing unstyled spaces."""
        from rich.segment import Segment

        console = self.console
        options = console.options.update_width(max(10, width))
        system = console._color_system
        rendered = console.render_lines(renderable, options, pad=False)
        out: list[str] = []
        for line in rendered:
            segments = [s for s in line if not s.control]
            while segments:
                last = segments[-1]
                if last.text.strip() or (last.style is not None and last.style.bgcolor is not None):
                    break
                segments.pop()
            if segments:
                last = segments[-1]
                if last.style is None or last.style.bgcolor is None:
                    segments[-1] = Segment(last.text.rstrip(), last.style)
            parts = []
            for segment in segments:
                style = segment.style
                parts.append(style.render(segment.text, color_system=system) if style else segment.text)
            out.append("".join(parts))
        while out and not out[-1]:
            out.pop()
        while out and not out[0]:
            out.pop(0)
        return out

    def markdown(self, tokens: Any, *, style: Any = None, width: int = 80, pad: int = 1) -> list[str]:
        """Markdown (text or tokens of :func:`.markdown.split_blocks`) as lines, padded left and right."""
        from rich.padding import Padding

        from piko.plugins.modes.interactive.markdown import PikoMarkdown

        md = PikoMarkdown(tokens, self.theme, style=style or "none")
        return self.lines(Padding(md, (0, pad)), width)
