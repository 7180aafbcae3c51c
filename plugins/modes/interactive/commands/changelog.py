"""``/changelog``: the entries of piko's ``CHANGELOG.md`` (``## [version]`` sections), newest first."""

from __future__ import annotations

import re
from pathlib import Path

from piko.plugins.modes.interactive.command_api import InteractiveContext

_ENTRY = re.compile(r"^##\s+\[?(\d+\.\d+\.\d+[^\]\s]*)\]?", re.M)


def changelog_path() -> Path | None:
    """The changelog beside the installed code (the project's root in a source checkout)."""
    import piko

    here = Path(piko.__file__).resolve().parent
    for folder in (here, *here.parents[:2]):
        candidate = folder / "CHANGELOG.md"
        if candidate.is_file():
            return candidate
    return None


def changelog_entries(text: str) -> list[tuple[str, str]]:
    """``(version, markdown)`` of each ``## [x.y.z]`` section, in the file's order."""
    marks = list(_ENTRY.finditer(text))
    return [
        (
            mark.group(1),
            text[mark.start() : marks[i + 1].start() if i + 1 < len(marks) else len(text)].strip(),
        )
        for i, mark in enumerate(marks)
    ]


async def changelog_command(ctx: InteractiveContext, args: str) -> None:
    """Show "What's New": every changelog entry, or pi's line when there is none."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.text import Text

    from piko.plugins.modes.interactive.markdown import PikoMarkdown

    path = changelog_path()
    try:
        text = path.read_text(encoding="utf-8") if path is not None else ""
    except OSError:
        text = ""
    entries = changelog_entries(text)
    body = "\n\n".join(markdown for _v, markdown in entries) if entries else "No changelog entries found."
    theme = ctx.ui.theme
    title = Text("What's New", style=theme.fg_style("accent", bold=True))
    ctx.show(Padding(Group(title, Text(""), PikoMarkdown(body, theme)), (0, 1)))
