"""ACP session config options: the model and the thinking level of the piko session, as the
client's selectors (``configOptions`` of ``session/new`` and ``session/load``, changed with
``session/set_config_option``)."""

from __future__ import annotations

from typing import Any

import acp
from acp import schema

MODEL = "model"
THOUGHT_LEVEL = "thought_level"

_LEVEL_NAMES = {
    "off": "Off",
    "minimal": "Minimal",
    "low": "Low",
    "medium": "Medium",
    "high": "High",
    "xhigh": "Extra high",
}


def model_value(model: Any) -> str:
    return f"{model.provider}/{model.id}"


def config_options(session: Any) -> list[Any]:
    """The model selector (models with credentials, the current one always included) and the
    thinking-level selector (the levels the current model accepts)."""
    current = session.model
    models = list(session.model_registry.available_models())
    if current is not None and all(model_value(m) != model_value(current) for m in models):
        models.insert(0, current)
    model_choices = [
        schema.SessionConfigSelectOption(
            value=model_value(m), name=m.name or m.id, description=model_value(m)
        )
        for m in models
    ]
    levels = session.models.available_thinking_levels()
    level_choices = [
        schema.SessionConfigSelectOption(value=level, name=_LEVEL_NAMES.get(level, level)) for level in levels
    ]
    return [
        schema.SessionConfigOptionSelect(
            type="select",
            id=MODEL,
            name="Model",
            category="model",
            current_value=model_value(current) if current is not None else "",
            options=model_choices,
        ),
        schema.SessionConfigOptionSelect(
            type="select",
            id=THOUGHT_LEVEL,
            name="Thinking",
            category="thought_level",
            description="How much the model reasons before it answers",
            current_value=session.thinking_level,
            options=level_choices,
        ),
    ]


async def apply(session: Any, config_id: str, value: Any) -> None:
    """Set one option on the piko session; a bad id or value is ``invalid_params``."""
    if not isinstance(value, str):
        raise acp.RequestError.invalid_params(
            {"message": f"{config_id} takes one of its values, not {value!r}"}
        )
    if config_id == MODEL:
        provider, _, model_id = value.partition("/")
        model = next(
            (
                m
                for m in session.model_registry.available_models()
                if m.provider == provider and m.id == model_id
            ),
            None,
        )
        if model is None:
            raise acp.RequestError.invalid_params({"message": f"Model not found: {value}"})
        try:
            await session.set_model(model, source="set")
        except RuntimeError as exc:
            raise acp.RequestError.invalid_params({"message": str(exc)}) from exc
    elif config_id == THOUGHT_LEVEL:
        levels = session.models.available_thinking_levels()
        if value not in levels:
            raise acp.RequestError.invalid_params(
                {"message": f"thinking level {value!r} is not one of {', '.join(levels)}"}
            )
        session.set_thinking_level(value)
    else:
        raise acp.RequestError.invalid_params({"message": f"no config option '{config_id}'"})


def snapshot(options: list[Any]) -> str:
    """A comparable form of the options (to tell the client only about real changes)."""
    return "\n".join(o.model_dump_json(by_alias=True, exclude_none=True) for o in options)
