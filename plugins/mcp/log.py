"""``~/.pi/agent/mcp.log``: servers' logging notifications, one line each, moved aside past 5 MB."""

from __future__ import annotations

import json
import os
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

LOG_FILE = "mcp.log"
MAX_LOG_BYTES = 5 * 1024 * 1024


class McpLog:
    """Appends ``<time> [<server>] <level> <logger>: <message>`` lines to the log file."""

    def __init__(self, agent_dir: str | os.PathLike[str], max_bytes: int = MAX_LOG_BYTES) -> None:
        self.agent_dir = Path(agent_dir)
        self.path = self.agent_dir / LOG_FILE
        self.max_bytes = max_bytes

    def write(self, server: str, level: str, logger: str | None, data: Any) -> None:
        message = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        line = f"{stamp} [{server}] {level} {logger or '-'}: {message}\n"
        try:
            self._rotate()
            with self.path.open("a", encoding="utf-8") as out:
                out.write(line)
        except OSError:
            pass  # a log that cannot be written never stops a server

    def _rotate(self) -> None:
        try:
            size = self.path.stat().st_size
        except OSError:
            return
        if size > self.max_bytes:
            os.replace(self.path, self.path.with_name(LOG_FILE + ".1"))
