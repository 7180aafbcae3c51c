"""``SYSTEM.md`` (replaces the default system prompt) and ``APPEND_SYSTEM.md``: project first (once
it is trusted), then global.

The session uses them only when the command line gives no ``--system-prompt`` /
``--append-system-prompt`` (as pi does).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from piko import hookimpl
from piko.resources.loader import ResourceRequest
from piko.resources.loader import SystemPromptFiles


@hookimpl
def piko_register_resource_loaders(register: Any) -> None:
    register("system_prompts", load_system_prompt_files)


def _first_existing(paths: list[Path]) -> Path | None:
    return next((p for p in paths if p.exists()), None)


def _read(path: Path | None, request: ResourceRequest) -> str | None:
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        request.diagnostics.append(f"Could not read {path}: {exc.strerror or exc}")
        return None


def load_system_prompt_files(request: ResourceRequest) -> SystemPromptFiles:
    """A trusted project's file if it exists, else the global one (an empty project file still wins)."""
    folders = [Path(request.cwd) / ".pi"] if request.project_trusted else []
    folders.append(Path(request.agent_dir))
    system = _read(_first_existing([folder / "SYSTEM.md" for folder in folders]), request)
    append_text = _read(_first_existing([folder / "APPEND_SYSTEM.md" for folder in folders]), request)
    return SystemPromptFiles(system=system or None, append=[append_text] if append_text is not None else [])
