"""Context files: ``AGENTS.md`` (else ``CLAUDE.md``) from ``~/.pi/agent`` and every directory from / down to cwd."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from piko import hookimpl
from piko.resources.loader import ContextFile
from piko.resources.loader import ResourceRequest

CANDIDATES = ("AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")


@hookimpl
def piko_register_resource_loaders(register: Any) -> None:
    register("context_files", load_context_files)


def _from_dir(directory: Path, request: ResourceRequest) -> ContextFile | None:
    for name in CANDIDATES:
        path = directory / name
        if path.is_file():
            try:
                return ContextFile(path=str(path), content=path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError) as exc:
                request.diagnostics.append(f"Could not read {path}: {exc}")
    return None


def load_context_files(request: ResourceRequest) -> list[ContextFile]:
    """Global context first, then ancestors from the root down to cwd (each path once)."""
    if request.options.get("no_context_files"):
        return []
    found: list[ContextFile] = []
    seen: set[str] = set()
    global_file = _from_dir(Path(request.agent_dir), request)
    if global_file is not None:
        found.append(global_file)
        seen.add(global_file.path)
    ancestors: list[ContextFile] = []
    current = Path(request.cwd).resolve()
    for directory in (current, *current.parents):
        context = _from_dir(directory, request)
        if context is not None and context.path not in seen:
            ancestors.insert(0, context)
            seen.add(context.path)
    return found + ancestors
