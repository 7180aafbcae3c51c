"""A second transformer, for changelogs only: never runs on the transcript."""

from __future__ import annotations

from typing import Any


def activate(pi: Any) -> None:
    pi.register_markdown_transformer(
        lambda markdown, context: "CHANGELOG ONLY", {"messageTypes": ["changelog"]}
    )
