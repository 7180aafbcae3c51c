"""Settings layers, piko's paths, the event bus and the wire form of events."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from piko.config.paths import agent_dir
from piko.config.paths import cache_dir
from piko.config.paths import expand_user
from piko.config.paths import interpreter_key
from piko.config.paths import project_dir
from piko.config.settings import DEFAULTS
from piko.config.settings import Settings
from piko.config.settings import deep_merge
from piko.data import events as ev
from piko.data.messages import TextContent
from piko.data.messages import UserMessage
from piko.extensions.event_bus import EventBus


def test_layers_merge_key_by_key(env) -> None:
    env.write("agent/settings.json", '{"retry": {"maxRetries": 5}, "quietStartup": true, "theme": "dark"}')
    env.write("project/.pi/settings.json", '{"retry": {"baseDelayMs": 10}, "theme": "light"}')
    settings = Settings(env.project, env.agent_dir)
    assert settings.get("retry.maxRetries") == 5
    assert settings.get("retry.baseDelayMs") == 10
    assert settings.get("retry.provider.maxRetryDelayMs") == DEFAULTS["retry"]["provider"]["maxRetryDelayMs"]
    assert settings.get("theme") == "light" and settings["quietStartup"] is True
    assert settings.get("no.such.key", "fallback") == "fallback"
    settings.override("theme", "solarized")
    assert settings.get("theme") == "solarized"
    assert (
        json.loads((env.project / ".pi" / "settings.json").read_text())["theme"] == "light"
    )  # never persisted


def test_untrusted_project_settings_count_only_for_the_session_dir(env) -> None:
    env.write(
        "project/.pi/settings.json",
        '{"shellPath": "/evil/sh", "extensions": ["x.py"], "theme": "light", "sessionDir": "here"}',
    )
    untrusted = Settings(env.project, env.agent_dir, project_trusted=False)
    assert untrusted.get("shellPath") is None and untrusted.get("extensions") is None
    assert untrusted.get("theme") is None  # as pi 1.6: nothing of an untrusted project's settings...
    assert untrusted.get("sessionDir") == "here"  # ...but where its sessions are, read before trust
    assert untrusted.project_data["theme"] == "light"  # kept as written, for `pi config`
    untrusted.set_project_trusted(True)
    assert untrusted.get("shellPath") == "/evil/sh" and untrusted.get("theme") == "light"


def test_broken_settings_file_is_reported_and_never_overwritten(env) -> None:
    broken = env.write("agent/settings.json", '{"theme": ')
    settings = Settings(env.project, env.agent_dir)
    (diagnostic,) = settings.diagnostics
    assert diagnostic.startswith(f"Could not read settings from {broken}")
    assert settings.get("theme") is None
    with pytest.raises(OSError, match="could not be read"):
        settings.set_global("theme", "dark")
    assert broken.read_text() == '{"theme": '
    env.write("agent/settings.json", "[1, 2]")
    assert Settings(env.project, env.agent_dir).diagnostics == [
        f"Ignoring {broken}: settings must be a JSON object"
    ]


def test_writes_keep_other_keys(env) -> None:
    env.write("agent/settings.json", '{"theme": "dark", "retry": {"maxRetries": 1}}')
    settings = Settings(env.project, env.agent_dir)
    settings.set_global("retry.baseDelayMs", 7)
    settings.set_project("theme", "light")
    assert json.loads((env.agent_dir / "settings.json").read_text()) == {
        "theme": "dark",
        "retry": {"maxRetries": 1, "baseDelayMs": 7},
    }
    assert settings.get("theme") == "light"
    settings.set_global("theme", None)  # None removes the key
    assert "theme" not in json.loads((env.agent_dir / "settings.json").read_text())


def test_deep_merge_does_not_touch_its_inputs() -> None:
    base = {"a": {"b": 1, "c": 2}, "x": 1}
    top = {"a": {"b": 3}, "y": 2}
    assert deep_merge(base, top) == {"a": {"b": 3, "c": 2}, "x": 1, "y": 2}
    assert base == {"a": {"b": 1, "c": 2}, "x": 1}


def test_paths(env, monkeypatch) -> None:
    assert agent_dir() == env.agent_dir
    monkeypatch.delenv("PI_CODING_AGENT_DIR")
    assert agent_dir() == env.home / ".pi" / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "~/custom")
    assert agent_dir() == env.home / "custom"
    assert cache_dir() == env.cache_dir
    monkeypatch.delenv("PIKO_CACHE_DIR")
    assert cache_dir() == env.root / "xdg-cache" / "piko"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir() == env.home / ".cache" / "piko"
    assert project_dir("/work") == Path("/work/.pi")
    assert expand_user("~") == str(env.home) and expand_user("~/a") == f"{env.home}/a"
    assert expand_user("~other/a") == "~other/a"
    assert len(interpreter_key()) == 16


def test_event_bus_schedules_coroutine_handlers() -> None:
    bus = EventBus()
    seen: list[str] = []

    async def async_handler(data: str) -> None:
        seen.append(f"async {data}")

    async def main() -> None:
        bus.on("ping", lambda data: seen.append(f"sync {data}"))
        bus.on("ping", async_handler)
        bus.emit("ping", "x")
        bus.emit("nobody-listens")
        await asyncio.sleep(0)

    asyncio.run(main())
    assert seen == ["sync x", "async x"]


def test_events_on_the_wire() -> None:
    event = ev.ToolExecutionEndEvent(
        tool_call_id="c1", tool_name="read", result={"content": []}, is_error=False
    )
    assert ev.event_to_wire(event) == {
        "type": "tool_execution_end",
        "toolCallId": "c1",
        "toolName": "read",
        "result": {"content": []},
        "isError": False,
    }
    start = ev.MessageStartEvent(message=UserMessage(content=[TextContent(text="hi")], timestamp=5))
    assert ev.event_to_wire(start) == {
        "type": "message_start",
        "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 5},
    }
    # fields kept from the wire: signals, stacks, turn indexes
    assert "stack" not in ev.event_to_wire(ev.ExtensionErrorEvent(error="e", stack="trace"))
    assert ev.event_to_wire(ev.TurnStartEvent(turn_index=3, timestamp=9)) == {"type": "turn_start"}
    assert ev.event_to_wire(ev.AgentStartEvent()) == {"type": "agent_start"}


def test_no_real_home_is_touched(env) -> None:
    assert os.environ["HOME"] == str(env.home)
    assert Path.home() == env.home
