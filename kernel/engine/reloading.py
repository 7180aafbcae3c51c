"""``/reload``: settings, extension files, newly installed plugins, resources and the system prompt, read again."""

from __future__ import annotations

from typing import Any

from piko.data.events import SessionShutdownEvent
from piko.data.events import SessionStartEvent
from piko.lib.records import Record


class ReloadSummary(Record):
    """What a reload loaded: the plugins, and how many resources of each kind."""

    plugins: Any
    skills: int
    prompt_templates: int
    context_files: int


async def reload_session(session: Any) -> ReloadSummary:
    """Reload what ``session`` runs with; extensions see ``session_shutdown`` and then
    ``session_start`` with reason ``reload``, as in pi."""
    from piko.engine.setup import load_session_resources

    app = session.app
    await session.dispatcher.emit("session_shutdown", SessionShutdownEvent(reason="reload"), session.ctx)
    session.settings.reload()
    plugins = app.reload_plugins()
    if session.model is not None:
        session.model = session.model_registry.find(session.model.provider, session.model.id) or session.model
    session.resources = resources = await load_session_resources(app, reason="reload")
    registry = app.registries.tools
    session.set_active_tools([name for name in session.get_active_tools() if name in registry])
    await session.dispatcher.emit("session_start", SessionStartEvent(reason="reload"), session.ctx)
    return ReloadSummary(
        plugins=plugins,
        skills=len(resources.skills),
        prompt_templates=len(resources.prompt_templates),
        context_files=len(resources.context_files),
    )
