"""The session's compaction switch and state: enabled, running, its cancel, how the last one ended."""

from __future__ import annotations

from piko.data.events import CompactionResult
from piko.engine.session_services import SessionServices
from piko.lib.abort import AbortController


class CompactionState:
    """What :mod:`piko.engine.compaction` keeps between and during compactions of one session.

    ``enabled`` is the ``compaction.enabled`` setting (automatic compaction);
    ``running``/``controller`` describe the compaction under way; ``last_result`` and
    ``last_error`` how the latest one ended.
    """

    def __init__(self, services: SessionServices) -> None:
        self._services = services
        self.running = False
        self.controller: AbortController | None = None
        self.last_result: CompactionResult | None = None
        self.last_error: str | None = None

    @property
    def enabled(self) -> bool:
        return bool(self._services.settings.get("compaction.enabled", True))

    def set_enabled(self, enabled: bool) -> None:
        self._services.save_setting("compaction.enabled", enabled)

    def abort(self) -> None:
        """Cancel the compaction under way (it ends as aborted)."""
        if self.controller is not None:
            self.controller.abort()
