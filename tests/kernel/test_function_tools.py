"""``@piko.tool``: schemas from type hints and docstrings, calling sync and async functions, bad hints."""

from __future__ import annotations

import asyncio
import enum
from pathlib import Path
from typing import Any
from typing import Literal
from typing import TypedDict

import pytest

import piko
from piko.engine.tool_validation import ToolValidationError
from piko.engine.tool_validation import validate_tool_arguments


class Unit(enum.Enum):
    CELSIUS = "c"
    FAHRENHEIT = "f"


class Window(TypedDict, total=False):
    start: int
    end: int


def _run(definition: piko.ToolDefinition, params: dict[str, Any], ctx: Any = None) -> piko.ToolResult:
    return asyncio.run(definition.run("call-1", params, None, None, ctx))


def test_schema_from_hints_and_google_docstring() -> None:
    @piko.tool
    def forecast(
        city: str,
        days: int = 1,
        unit: Unit = Unit.CELSIUS,
        detail: Literal["short", "long"] = "short",
        tags: list[str] | None = None,
        window: Window | None = None,
        scale: float = 1.0,
        verbose: bool = False,
    ) -> str:
        """Weather for a city.

        Longer words about it.

        Args:
            city: The city's name.
            days: How many days
                ahead to look.
        """
        return f"{city}:{days}:{unit.name}:{detail}:{tags}:{window}"

    assert forecast.name == "forecast" and forecast.default_active
    assert forecast.description == "Weather for a city.\n\nLonger words about it."
    schema = forecast.parameters
    assert schema["required"] == ["city"] and schema["additionalProperties"] is False
    props = schema["properties"]
    assert props["city"] == {"type": "string", "description": "The city's name."}
    assert props["days"] == {"type": "integer", "description": "How many days ahead to look.", "default": 1}
    assert props["unit"] == {"enum": ["c", "f"]}  # an Enum default is not a JSON value: not shown
    assert props["detail"] == {"enum": ["short", "long"], "default": "short"}
    assert props["tags"]["anyOf"] == [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]
    assert props["window"]["anyOf"][0]["properties"] == {
        "start": {"type": "integer"},
        "end": {"type": "integer"},
    }
    assert props["scale"]["type"] == "number" and props["verbose"]["type"] == "boolean"
    result = _run(forecast, {"city": "Oslo", "unit": "f", "window": {"start": 1}})
    assert result.content[0].text == "Oslo:1:FAHRENHEIT:short:None:{'start': 1}"


def test_sphinx_docstring_options_and_injected_parameters() -> None:
    @piko.tool(name="look-up", label="Look up", description="Find a word.", default_active=False)
    async def lookup(word: str, ctx: Any, tool_call_id: str, signal: Any = None) -> list[piko.TextContent]:
        """Ignored, the description option wins.

        :param word: the word to find
        """
        return [piko.TextContent(text=f"{word}@{tool_call_id}:{ctx}")]

    assert lookup.name == "look-up" and lookup.label == "Look up" and not lookup.default_active
    assert lookup.description == "Find a word."
    assert list(lookup.parameters["properties"]) == ["word"]
    assert lookup.parameters["properties"]["word"]["description"] == "the word to find"
    assert _run(lookup, {"word": "kite"}, ctx="CTX").content[0].text == "kite@call-1:CTX"


@pytest.mark.parametrize(
    ("value", "text"),
    [("plain", "plain"), ({"n": 1}, '{"n":1}'), (3, "3"), (None, None)],
)
def test_return_values(value: Any, text: str | None) -> None:
    @piko.tool
    def give() -> Any:
        """Give a value back."""
        return value

    result = _run(give, {})
    assert [b.text for b in result.content] == ([text] if text is not None else [])


def test_a_result_object_is_kept() -> None:
    @piko.tool
    def failing() -> piko.ToolResult:
        """Report an error."""
        return piko.ToolResult(content=[piko.TextContent(text="nope")], is_error=True, details={"k": 1})

    result = _run(failing, {})
    assert result.is_error and result.details == {"k": 1}


def test_sync_tools_run_off_the_loop() -> None:
    import threading

    @piko.tool
    def where() -> str:
        """Which thread runs the tool."""
        return threading.current_thread().name

    assert _run(where, {}).content[0].text != threading.main_thread().name


def test_arguments_are_validated_against_the_schema_before_the_call() -> None:
    @piko.tool
    def count(n: int, mode: Literal["up", "down"]) -> str:
        """Count."""
        raise AssertionError("never called with bad arguments")

    def check(arguments: dict[str, Any]) -> dict[str, Any]:
        return validate_tool_arguments(count.name, count.parameters, arguments)

    with pytest.raises(ToolValidationError):
        check({"n": "many", "mode": "up"})
    with pytest.raises(ToolValidationError):
        check({"n": 1, "mode": "sideways"})
    with pytest.raises(ToolValidationError):
        check({"n": 1, "mode": "up", "extra": True})
    assert check({"n": "5", "mode": "up"}) == {"n": 5, "mode": "up"}


def _no_hint(x):  # type: ignore[no-untyped-def]
    """No hint."""


def _path(p: Path) -> str:
    """A Path."""
    return ""


def _var(*names: str) -> str:
    """Var args."""
    return ""


def _tuple_keys(m: dict[int, str]) -> str:
    """Int keys."""
    return ""


def _undocumented(x: int) -> str:
    return ""


@pytest.mark.parametrize(
    ("function", "message"),
    [
        (_no_hint, "parameter 'x' has no type hint"),
        (_path, "parameter 'p': type Path cannot become a JSON schema"),
        (_var, r"\*names cannot be a tool argument"),
        (_tuple_keys, "dict keys must be str"),
        (_undocumented, "needs a description"),
    ],
)
def test_hints_that_cannot_become_a_schema_fail_when_decorated(function: Any, message: str) -> None:
    with pytest.raises(piko.ToolSchemaError, match=message):
        piko.tool(function)


def test_a_bad_name_is_refused() -> None:
    with pytest.raises(piko.ToolSchemaError, match="not valid"):
        piko.tool(name="has space")(_path)


def test_an_unknown_option_is_refused_when_decorated() -> None:
    """A misspelt option is an error, not silently dropped."""

    def lookup(word: str) -> str:
        """Find a word."""
        return word

    with pytest.raises(TypeError, match="'desciption'"):
        piko.tool(desciption="Find a word.")(lookup)  # type: ignore[call-overload]
