"""``ctx.models``: the read-only model query extensions pick and compare models with."""

from __future__ import annotations

import re
from typing import Any

from piko.data.messages import Model

_FAMILY = re.compile(r"[a-z]+")


class ModelQuery:
    """``list()``, ``current()``, ``resolve(spec)`` and ``family(model)`` over the session's models."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def list(self) -> list[Model]:
        """The models whose provider has credentials this session."""
        return list(self._session.model_registry.available_models())

    def current(self) -> Model | None:
        """The session's model now (it follows ``/model`` and ``set_model``)."""
        model: Model | None = self._session.model
        return model

    def resolve(self, spec: str) -> Model | None:
        """A model from ``"provider/id"``, a bare id or a pattern, as ``--model`` reads it; ``None``
        when nothing matches (no made-up model id)."""
        from piko.models.resolver import ModelResolutionError
        from piko.models.resolver import resolve_cli_model

        if not isinstance(spec, str) or not spec.strip():
            return None
        try:
            model, _level, warning = resolve_cli_model(self._session.model_registry, None, spec.strip())
        except ModelResolutionError:
            return None
        if warning and "custom model id" in warning:
            return None
        return model

    def family(self, model: Model | None) -> str:
        """A token equal for models of one lineage (``claude-*``, ``gpt-*``, ``gemini-*``); compare it,
        do not store it."""
        if model is None:
            return ""
        match = _FAMILY.search(model.id.lower().rsplit("/", 1)[-1])
        return match.group(0) if match else model.id.lower()
