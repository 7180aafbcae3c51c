"""Where ``mcp.json`` lives and whether one exists: all an ordinary start asks of MCP.

Kept apart from :mod:`piko.plugins.mcp.config` (the parsing, its records and patterns) because
every start asks whether servers are configured: importing the whole config module for that was
1.0 ms of an RPC start (``-X importtime``).
"""

from __future__ import annotations

import os
from pathlib import Path

CONFIG_FILE = "mcp.json"


def user_config_path(agent_dir: str | os.PathLike[str]) -> Path:
    return Path(agent_dir) / CONFIG_FILE


def project_config_path(cwd: str | os.PathLike[str]) -> Path:
    from piko.config.paths import project_dir

    return project_dir(cwd) / CONFIG_FILE


def has_servers_configured(agent_dir: str | os.PathLike[str], cwd: str, project_trusted: bool) -> bool:
    """Whether any ``mcp.json`` that counts exists (cheap: no parsing, no SDK import)."""
    if user_config_path(agent_dir).is_file():
        return True
    return project_trusted and project_config_path(cwd).is_file()
