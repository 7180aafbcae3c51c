"""The example third-party plugin: built and installed with pip (offline), then seen by ``pi``."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from piko.data import events as ev
from piko.data.messages import AssistantMessage
from piko.data.messages import TextContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResult
from piko.data.messages import ToolResultMessage
from piko.data.messages import UserMessage
from piko.data.streaming import StreamEvent

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "piko-example-plugin"


@pytest.fixture
def installed(example_site: Path) -> Path:
    return example_site


def test_installed_example_shows_up_in_pi_plugins(run_pi, installed: Path) -> None:
    result = run_pi("plugins", "--json", pythonpath=[installed])
    assert result.code == 0, result
    (entry,) = [p for p in json.loads(result.stdout)["plugins"] if p["name"] == "example"]
    assert entry["origin"] == "distribution"
    assert (entry["distribution"], entry["version"]) == ("piko_example_plugin", "0.1.0")
    assert entry["hooks"] == [
        "piko_register_commands",
        "piko_register_flags",
        "piko_register_modes",
        "piko_register_tools",
    ]
    assert entry["blocked"] is False and entry["error"] is None

    table = run_pi("plugins", pythonpath=[installed]).stdout
    (line,) = [row for row in table.splitlines() if row.startswith("example ")]
    assert "piko_example_plugin 0.1.0" in line and "active" in line


def test_installed_example_can_be_blocked(run_pi, installed: Path) -> None:
    result = run_pi("--disable-plugin", "example", "plugins", "--json", pythonpath=[installed])
    (entry,) = [p for p in json.loads(result.stdout)["plugins"] if p["name"] == "example"]
    assert (entry["blocked"], entry["blockedBy"], entry["hooks"]) == (True, "--disable-plugin", [])

    result = run_pi(
        "--mode", "oneline", "hi", pythonpath=[installed], env={"PIKO_DISABLE_PLUGINS": "example"}
    )
    assert result.code == 1 and "mode 'oneline' is not available" in result.stderr


def test_installed_example_adds_its_flag_and_mode_to_help(run_pi, installed: Path) -> None:
    text = run_pi("--help", pythonpath=[installed]).stderr
    assert "--oneline-width <value>" in text and "Width of the oneline mode's lines (default 100)" in text
    modes = text.split("Modes (--mode):")[1]
    assert "oneline" in modes and "one-line summary" in modes


def test_oneline_mode_needs_a_prompt(run_pi, installed: Path) -> None:
    result = run_pi("--mode", "oneline", pythonpath=[installed])
    assert result.code == 1
    assert result.stderr.endswith('Error: the oneline mode needs a prompt: pi --mode oneline "your prompt"\n')


# ---------------------------------------------------------------------------
# The example's code, in process
# ---------------------------------------------------------------------------


@pytest.fixture
def example(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(EXAMPLE))
    import piko_example_plugin
    import piko_example_plugin.oneline
    import piko_example_plugin.tool

    yield SimpleNamespace(
        plugin=piko_example_plugin, tool=piko_example_plugin.tool, oneline=piko_example_plugin.oneline
    )
    for name in [m for m in sys.modules if m.startswith("piko_example_plugin")]:
        del sys.modules[name]


def test_plugin_module_imports_only_piko(example) -> None:
    source = (EXAMPLE / "piko_example_plugin" / "__init__.py").read_text(encoding="utf-8")
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert imports == [
        "from __future__ import annotations",
        "from typing import Any",
        "from piko import hookimpl",
        "from piko import registers",
    ]


def test_word_count_tool(example) -> None:
    result = example.tool.execute("call-1", {"text": "one two\nthree"}, None, None, None)
    assert isinstance(result, ToolResult)
    assert result.content == [TextContent(text="3 words, 2 lines, 13 characters")]
    assert result.details == {"words": 3, "lines": 2, "characters": 13}
    bad = example.tool.execute("call-2", {"text": 5}, None, None, None)
    assert bad.is_error and bad.content[0].text == "word_count needs a 'text' string"
    assert example.tool.count("").summary() == "0 words, 0 lines, 0 characters"
    assert example.tool.count("a\n").lines == 1


def test_wordcount_command_notifies(example) -> None:
    notes: list[tuple[str, str]] = []
    ui = SimpleNamespace(notify=lambda message, level="info": notes.append((message, level)))
    asyncio.run(example.plugin.wordcount_command("a b c", SimpleNamespace(ui=ui)))
    assert notes == [("3 words, 1 lines, 5 characters", "info")]


def test_width_flag_parsing(example) -> None:
    parse = example.oneline.parse_width
    assert parse("60") == 60
    assert parse(None) == parse("wide") == parse("5") == 100


def test_summaries_are_one_line_each(example) -> None:
    summarize = example.oneline.summarize
    answer = AssistantMessage(
        content=[
            TextContent(text="Hello\nthere"),
            ToolCall(id="c1", name="word_count", arguments={"text": "x"}),
        ]
    )
    failed = AssistantMessage(stop_reason="error", error_message="HTTP 500")
    result = ToolResultMessage(tool_name="word_count", content=[TextContent(text="1 words")])
    cases = [
        (ev.AgentStartEvent(), "agent_start"),
        (ev.TurnStartEvent(turn_index=2), "turn_start #2"),
        (ev.MessageStartEvent(message=UserMessage(content="hi")), "message_start user: 'hi'"),
        (
            ev.MessageUpdateEvent(assistant_message_event=StreamEvent(type="text_delta", delta="Hel")),
            "message_update text_delta 'Hel'",
        ),
        (
            ev.MessageEndEvent(message=answer),
            "message_end assistant: 'Hello\\nthere' word_count({\"text\":\"x\"})",
        ),
        (ev.MessageEndEvent(message=failed), "message_end assistant [error] HTTP 500"),
        (ev.MessageEndEvent(message=result), "message_end toolResult word_count ok: '1 words'"),
        (
            ev.ToolExecutionStartEvent(tool_name="word_count", args={"text": "x"}),
            'tool_execution_start word_count {"text":"x"}',
        ),
        (
            ev.ToolExecutionEndEvent(tool_name="word_count", result=ToolResult(content=[TextContent(text="ok")])),
            "tool_execution_end word_count ok: 'ok'",
        ),
        (
            ev.ToolExecutionEndEvent(tool_name="bash", is_error=True, result={"content": [TextContent(text="no")]}),
            "tool_execution_end bash error: 'no'",
        ),
        (ev.TurnEndEvent(turn_index=0, tool_results=[result]), "turn_end #0, 1 tool results"),
        (ev.AgentEndEvent(messages=[answer, result]), "agent_end 2 messages"),
        (ev.AutoRetryStartEvent(attempt=1, max_attempts=3, delay_ms=2000, error_message="overloaded"),
         'auto_retry_start attempt=1 max_attempts=3 delay_ms=2000 error_message="overloaded"'),
        (SimpleNamespace(type="queue_update"), "queue_update"),
    ]  # fmt: skip
    for event, expected in cases:
        assert summarize(event) == expected
    long = summarize(ev.MessageStartEvent(message=UserMessage(content="x" * 500)), width=40)
    assert len(long) == 40 and long.endswith("…")


def test_printer_marks_failed_runs(example) -> None:
    stream = io.StringIO()
    printer = example.oneline.OnelinePrinter(stream, 80)
    printer(ev.MessageEndEvent(message=AssistantMessage(content=[TextContent(text="fine")])))
    assert not printer.failed
    printer(ev.MessageEndEvent(message=AssistantMessage(stop_reason="aborted")))
    assert printer.failed
    assert stream.getvalue().splitlines() == [
        "message_end assistant: 'fine'",
        "message_end assistant [aborted]",
    ]


def test_mode_runs_against_the_session_api(example, env) -> None:
    """The mode's run() with a stand-in session; test_example_mode_run.py runs it for real."""

    class Session:
        def __init__(self) -> None:
            self.listeners: list[Any] = []
            self.log: list[str] = []

        def subscribe(self, listener: Any) -> Any:
            self.listeners.append(listener)
            return lambda: None

        async def prompt(self, text: str) -> None:
            self.log.append(f"prompt {text}")
            for listener in self.listeners:
                listener(ev.AgentStartEvent())
                listener(ev.AgentEndEvent(messages=[]))

        async def shutdown(self) -> None:
            self.log.append("shutdown")

    session = Session()

    async def create_agent_session() -> Session:
        return session

    app = SimpleNamespace(
        options={"args": ("count", "@notes.md", "words")},
        flag_values={"oneline-width": "50"},
        create_agent_session=create_agent_session,
    )
    out = io.StringIO()
    saved = sys.stdout
    sys.stdout = out
    try:
        code = asyncio.run(example.oneline.run(app))
    finally:
        sys.stdout = saved
    assert code == 0
    assert session.log == ["prompt count words", "shutdown"]
    assert out.getvalue() == "agent_start\nagent_end 0 messages\n"
