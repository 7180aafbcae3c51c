"""The session's model and thinking level: switching, cycling, clamping to what a model supports, recording each change."""

from __future__ import annotations

from piko.data.events import ModelSelectEvent
from piko.data.events import ThinkingLevelChangedEvent
from piko.data.events import ThinkingLevelSelectEvent
from piko.data.messages import Model
from piko.engine.session_services import SessionServices
from piko.lib.records import Record
from piko.models.resolver import DEFAULT_THINKING_LEVEL
from piko.models.resolver import ScopedModel
from piko.models.resolver import clamp_thinking_level
from piko.models.resolver import same_model
from piko.models.resolver import supported_thinking_levels


class ModelCycle(Record):
    """Where :meth:`ModelControl.cycle` went: the model, its thinking level, whether from the ``--models`` scope."""

    model: Model
    thinking_level: str
    is_scoped: bool


class ModelControl:
    """Holds the model, the thinking level and the model scope (``--models``) of a session.

    Each change is written to the session file of the ``services``' ``manager()`` and to the
    settings (``save_setting``: the defaults of the next start); ``model_select`` and
    ``thinking_level_select`` go to the extensions through ``emit(name, event)``, and
    ``thinking_level_changed`` to the ``listeners``.
    """

    def __init__(
        self,
        services: SessionServices,
        *,
        model: Model | None,
        thinking_level: str = DEFAULT_THINKING_LEVEL,
        scoped_models: list[ScopedModel] | None = None,
    ) -> None:
        self._services = services
        self.model = model
        self.scoped_models = list(scoped_models or [])
        self._thinking_level = clamp_thinking_level(model, thinking_level) if model else "off"

    @property
    def thinking_level(self) -> str:
        return self._thinking_level

    async def set_model(self, model: Model, *, source: str = "set") -> None:
        """Switch to ``model`` (which needs credentials), keeping the thinking level where both reason."""
        if not self._services.registry.has_auth(model.provider):
            raise RuntimeError(f"No API key for {model.provider}/{model.id}")
        previous = self.model
        level = (
            self._thinking_level
            if (model.reasoning and self.model and self.model.reasoning)
            else self._level_for_switch()
        )
        self._switch_to(model)
        self.set_thinking_level(level)
        if not same_model(previous, model):
            await self._services.emit(
                "model_select", ModelSelectEvent(model=model, previous_model=previous, source=source)
            )

    async def cycle(self, direction: str = "forward") -> ModelCycle | None:
        """The next (or previous) model of the scope, else of all available models; None if only one."""
        if self.scoped_models:
            candidates = [s for s in self.scoped_models if self._services.registry.has_auth(s.model.provider)]
            pool = [(s.model, s.thinking_level) for s in candidates]
            scoped = True
        else:
            pool = [(m, None) for m in self._services.registry.available_models()]
            scoped = False
        if len(pool) <= 1:
            return None
        index = next((i for i, (m, _l) in enumerate(pool) if same_model(m, self.model)), 0)
        step = 1 if direction == "forward" else -1
        model, level = pool[(index + step) % len(pool)]
        previous = self.model
        self._switch_to(model)
        self.set_thinking_level(self._level_for_cycle(level))
        await self._services.emit(
            "model_select", ModelSelectEvent(model=model, previous_model=previous, source="cycle")
        )
        return ModelCycle(model=model, thinking_level=self._thinking_level, is_scoped=scoped)

    def require_ready(self) -> None:
        """Raise, with pi's guidance, when there is no model or no credentials for it."""
        if self.model is None:
            from piko.models.guidance import no_model_selected_message

            raise RuntimeError(no_model_selected_message())
        if not self._services.registry.has_auth(self.model.provider):
            raise RuntimeError(self._services.registry.missing_key_message(self.model.provider))

    def _switch_to(self, model: Model) -> None:
        self.model = model
        self._services.manager().append_model_change(model.provider, model.id)
        self._services.save_setting("defaultProvider", model.provider)
        self._services.save_setting("defaultModel", model.id)

    def _level_for_switch(self, explicit: str | None = None) -> str:
        if explicit is not None:
            return explicit
        if self.model is None or not self.model.reasoning:
            return str(self._services.settings.get("defaultThinkingLevel") or DEFAULT_THINKING_LEVEL)
        return self._thinking_level

    def _level_for_cycle(self, explicit: str | None) -> str:
        """pi's rule when cycling: the scope's level, else the settings' default, else the level in effect."""
        if explicit is not None:
            return explicit
        return str(self._services.settings.get("defaultThinkingLevel") or self._thinking_level)

    def available_thinking_levels(self) -> list[str]:
        return supported_thinking_levels(self.model)

    def supports_thinking(self) -> bool:
        return bool(self.model and self.model.reasoning)

    def set_thinking_level(self, level: str) -> None:
        """Set the level (clamped to the model) and record it when it changes."""
        effective = clamp_thinking_level(self.model, level) if self.model else level
        previous = self._thinking_level
        self._thinking_level = effective
        if effective == previous:
            return
        self._services.manager().append_thinking_level_change(effective)
        if self.supports_thinking() or effective != "off":
            self._services.save_setting("defaultThinkingLevel", effective)
        self._services.listeners.emit_now(ThinkingLevelChangedEvent(level=effective))
        event = ThinkingLevelSelectEvent(level=effective, previous_level=previous)
        self._services.listeners.spawn(self._services.emit("thinking_level_select", event))

    def cycle_thinking_level(self) -> str | None:
        """The next level the model supports (None when it does not think)."""
        if not self.supports_thinking():
            return None
        levels = self.available_thinking_levels()
        index = levels.index(self._thinking_level) if self._thinking_level in levels else -1
        level = levels[(index + 1) % len(levels)]
        self.set_thinking_level(level)
        return level

    def restore_thinking_level(self, level: str) -> None:
        """Take the level a session file recorded, as it is (nothing written, nobody told)."""
        self._thinking_level = level
