"""Model turns the interactive tests script for the faux provider, shared by their modules."""

from __future__ import annotations

from typing import Any

# A bash command whose output (12 lines) is longer than a collapsed tool box shows.
TWELVE_ECHOES = " ".join(f"echo line{i};" for i in range(12))


def bash_then_answer(command: str, answer: str) -> list[dict[str, Any]]:
    """Two turns: the model runs ``command`` with the bash tool, then answers ``answer``."""
    return [
        {"blocks": [{"tool_call": {"name": "bash", "arguments": {"command": command}}}]},
        {"blocks": [{"text": answer}]},
    ]


def answers(*texts: str) -> list[dict[str, Any]]:
    """One turn for each text: the model answers the n-th prompt with the n-th text."""
    return [{"blocks": [{"text": text}]} for text in texts]
