"""Write docs/extensions-coverage.md from the status column of docs/extensions.md's tables.

``python scripts/extension_coverage.py`` rewrites it; ``--check`` exits 1 when it is out of date.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"
SOURCE = DOCS / "extensions.md"
TARGET = DOCS / "extensions-coverage.md"
STATUSES = ("works", "partial", "no")


def rows(text: str) -> list[tuple[str, str, str, str]]:
    """``(section, item, status, note)`` of every table row."""
    section = ""
    out = []
    for line in text.splitlines():
        if line.startswith("### "):
            section = line[4:].strip()
        cells = [cell.strip() for cell in line.strip()[1:-1].split("|")] if line.startswith("| ") else []
        if len(cells) == 4 and cells[2] in STATUSES:
            out.append((section, cells[0], cells[2], cells[3]))
    return out


def render(text: str) -> str:
    found = rows(text)
    total = Counter(status for _s, _i, status, _n in found)
    by_section: dict[str, Counter[str]] = {}
    for section, _item, status, _note in found:
        by_section.setdefault(section, Counter())[status] += 1
    lines = [
        "# Extension reference coverage",
        "",
        "The running checklist of issue 16: how much of the extension reference piko supports. Generated",
        "from the tables of [extensions.md](extensions.md) by `scripts/extension_coverage.py` (a test",
        "fails while it is out of date). A row is one item of the reference: one name of the API or",
        "one rule it states ([how items are counted](extensions.md#the-reference-item-by-item)).",
        "",
        "| section | works | partial | not supported |",
        "|---|---|---|---|",
    ]
    for section, counts in by_section.items():
        lines.append(f"| {section} | {counts['works']} | {counts['partial']} | {counts['no']} |")
    lines.append(
        f"| **all {len(found)} items** | **{total['works']}** | **{total['partial']}** | **{total['no']}** |"
    )
    for status, title in (("partial", "Partial"), ("no", "Not supported")):
        lines += ["", f"## {title}", "", "| section | item | why |", "|---|---|---|"]
        lines += [f"| {s} | {i} | {n} |" for s, i, st, n in found if st == status]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render(SOURCE.read_text(encoding="utf-8"))
    if "--check" in argv:
        return 0 if TARGET.exists() and TARGET.read_text(encoding="utf-8") == text else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
