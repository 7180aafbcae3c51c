"""Test extension for RPC mode: reports the ``reason`` of the fork events (omp's branch names)."""

from __future__ import annotations

import json
from typing import Any


def activate(pi: Any) -> None:
    seen: list[list[str]] = []
    pi.on("session_before_branch", lambda e, ctx: seen.append(["before", e.reason, e.position]))
    pi.on("session_branch", lambda e, ctx: seen.append(["after", e.reason]))
    pi.register_command(
        "report",
        {"description": "what was seen", "handler": lambda args, ctx: ctx.ui.notify(json.dumps(seen))},
    )
