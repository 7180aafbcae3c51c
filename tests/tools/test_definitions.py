"""Each built-in tool registers the definition pi sends: name, description and parameter schema as
the real pi put them in a request (``pi_mono_samples/c-tools-json/tools.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from piko.plugins.tools import bash
from piko.plugins.tools import edit
from piko.plugins.tools import find
from piko.plugins.tools import grep
from piko.plugins.tools import ls
from piko.plugins.tools import read
from piko.plugins.tools import write

PI_TOOLS_JSON = (
    Path(__file__).resolve().parent.parent / "fixtures" / "pi_mono_samples" / "c-tools-json" / "tools.json"
)
PI_TOOLS = {
    t["function"]["name"]: t["function"] for t in json.loads(PI_TOOLS_JSON.read_text(encoding="utf-8"))
}


def registered(module: ModuleType) -> Any:
    found: list[Any] = []
    module.piko_register_tools(found.append)
    (tool,) = found
    return tool


@pytest.mark.parametrize(
    ("module", "active"),
    [(read, True), (bash, True), (edit, True), (write, True), (grep, False), (find, False), (ls, False)],
    ids=lambda value: getattr(value, "NAME", str(value)),
)
def test_registered_definition_is_pis(module: ModuleType, active: bool) -> None:
    tool = registered(module)
    theirs = PI_TOOLS[tool.name]
    assert (tool.label, tool.default_active) == (tool.name, active)
    assert tool.description == theirs["description"]
    # the same keys in the same order: the schema goes to the model as it is written
    assert json.dumps(tool.parameters) == json.dumps(theirs["parameters"])


@pytest.mark.parametrize(
    ("module", "snippet"),
    [
        (bash, "Execute bash commands (ls, grep, find, etc.)"),
        (grep, "Search file contents for patterns (respects .gitignore)"),
        (find, "Find files by glob pattern (respects .gitignore)"),
    ],
    ids=lambda value: getattr(value, "NAME", "snippet"),
)
def test_prompt_snippets_and_no_guidelines(module: ModuleType, snippet: str) -> None:
    tool = registered(module)
    assert tool.prompt_snippet == snippet
    assert tool.prompt_guidelines == []
