"""The definition a built-in tool module registers (from its ``NAME``, ``DESCRIPTION``, ``PARAMETERS``, ``execute`` and prompt texts), and the builders its ``PARAMETERS`` schema is written with."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from piko.platform.registries import ToolDefinition

# pi activates and lists its built-in tools in this order
PI_TOOL_ORDER = ("read", "bash", "edit", "write", "grep", "find", "ls")


def tool_definition(module_name: str, *, default_active: bool) -> ToolDefinition:
    """The :class:`ToolDefinition` of the tool module ``module_name`` (labelled with its name).

    The module declares ``NAME``, ``DESCRIPTION``, ``PARAMETERS``, ``PROMPT_SNIPPET`` and
    ``execute``, and may declare ``PROMPT_GUIDELINES`` and ``prepare_arguments``.
    """
    module = sys.modules[module_name]
    return ToolDefinition(
        name=module.NAME,
        label=module.NAME,
        description=module.DESCRIPTION,
        parameters=module.PARAMETERS,
        execute=module.execute,
        prepare_arguments=getattr(module, "prepare_arguments", None),
        default_active=default_active,
        order=PI_TOOL_ORDER.index(module.NAME),
        prompt_snippet=module.PROMPT_SNIPPET,
        prompt_guidelines=list(getattr(module, "PROMPT_GUIDELINES", ())),
    )


def object_schema(
    properties: dict[str, dict[str, Any]], *, required: Sequence[str] = (), closed: bool = False
) -> dict[str, Any]:
    """A JSON-schema object with its keys in the order pi sends a tool's parameters: ``type``,
    ``required`` (when some are), ``properties``, then ``additionalProperties: false`` when ``closed``."""
    schema: dict[str, Any] = {"type": "object"}
    if required:
        schema["required"] = list(required)
    schema["properties"] = properties
    if closed:
        schema["additionalProperties"] = False
    return schema


def param(kind: str, description: str) -> dict[str, Any]:
    """One parameter's schema: its JSON type (``"string"``, ``"number"``, ``"boolean"``) and description."""
    return {"type": kind, "description": description}
