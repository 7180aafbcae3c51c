"""Code blocks of the docs, for the tests that run what the docs show."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def code_blocks(doc: str, language: str = "python") -> list[str]:
    """Every fenced ``language`` block of ``docs/<doc>``, in order."""
    text = (DOCS / doc).read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.S | re.M)


def code_block(doc: str, needle: str, language: str = "python") -> str:
    """The one ``language`` block of ``docs/<doc>`` that contains ``needle``."""
    found = [block for block in code_blocks(doc, language) if needle in block]
    assert len(found) == 1, f"{len(found)} {language} blocks of docs/{doc} contain {needle!r}"
    return found[0]


def shown_file(doc: str, path: str) -> str:
    """The block that follows ``<!-- file: PATH -->`` in ``docs/<doc>`` (a file of the repository
    shown as it is)."""
    text = (DOCS / doc).read_text(encoding="utf-8")
    marker = f"<!-- file: {path} -->"
    assert marker in text, f"docs/{doc} does not show {path}"
    after = text.split(marker, 1)[1]
    match = re.match(r"\s*```\w*\n(.*?)^```$", after, re.S | re.M)
    assert match, f"no code block after {marker} in docs/{doc}"
    return match.group(1)
