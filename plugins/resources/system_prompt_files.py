"""``SYSTEM.md`` (replaces the default system prompt) and ``APPEND_SYSTEM.md``: project first, then global."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from piko import hookimpl
from piko.resources import ResourceRequest, SystemPromptFiles


@hookimpl
def piko_register_resource_loaders(register: Any) -> None:
    register("system_prompts", load_system_prompt_files)


def _read(path: Path, request: ResourceRequest) -> str | None:
    if not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        request.diagnostics.append(f"Could not read {path}: {exc}")
        return None


def load_system_prompt_files(request: ResourceRequest) -> SystemPromptFiles:
    project = Path(request.cwd) / ".pi"
    agent = Path(request.agent_dir)
    system = _read(project / "SYSTEM.md", request) or _read(agent / "SYSTEM.md", request)
    append_text = _read(project / "APPEND_SYSTEM.md", request) or _read(agent / "APPEND_SYSTEM.md", request)
    return SystemPromptFiles(system=system, append=[append_text] if append_text else [])
