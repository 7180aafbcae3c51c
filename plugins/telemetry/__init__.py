"""Plugin ``telemetry.otel``: OpenTelemetry traces and metrics of agent runs, model calls and tool
calls, following the ``gen_ai`` semantic conventions.

Off unless asked for: the ``telemetry`` settings block (``{"enabled": true, "endpoint": URL,
"content": false}``) or the standard ``OTEL_EXPORTER_OTLP_ENDPOINT`` /
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` variables turn it on; only then is the OpenTelemetry SDK
imported (``pip install 'piko[telemetry]'``). Disabled, it makes no network call and imports
nothing. Spans and metrics go out over OTLP/HTTP (protobuf) from a bounded background queue,
so an unreachable collector never slows a run; what could not be sent is dropped.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from piko import hookimpl

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")

# the running exporter (piko.plugins.telemetry.otel.Telemetry), when enabled
state: dict[str, Any] = {"telemetry": None}


def telemetry_options(app: Any) -> dict[str, Any] | None:
    """The ``telemetry`` settings with the endpoint filled in, or ``None`` when disabled."""
    block = app.settings.get("telemetry") if getattr(app, "settings", None) is not None else None
    block = dict(block) if isinstance(block, dict) else {}
    from_env = any(os.environ.get(name) for name in ENDPOINT_VARIABLES)
    if block.get("enabled") is False or not (block.get("enabled") or from_env):
        return None
    return block


@hookimpl
def piko_configure(config: Any) -> None:
    options = telemetry_options(config)
    if options is None:
        state["telemetry"] = None
        return
    try:
        from piko.plugins.telemetry.otel import Telemetry
    except ImportError as exc:
        state["telemetry"] = None
        config.notices.append(
            f"telemetry is enabled but OpenTelemetry is not installed ({exc.name}): pip install 'piko[telemetry]'"
        )
        return
    state["telemetry"] = Telemetry(options)


@hookimpl
def piko_unconfigure(config: Any) -> None:
    telemetry = state.get("telemetry")
    if telemetry is not None:
        telemetry.shutdown()
        state["telemetry"] = None


def _on(method: str, *args: Any) -> Any:
    telemetry = state.get("telemetry")
    return getattr(telemetry, method)(*args) if telemetry is not None else None


def _relay(method: str) -> Callable[[Any, Any], None]:
    """An event hook that hands its event to the exporter's ``method``."""

    @hookimpl
    def relay(event: Any, ctx: Any) -> None:
        _on(method, event)

    return relay


piko_agent_end = _relay("agent_end")
piko_tool_execution_start = _relay("tool_start")
piko_tool_execution_end = _relay("tool_end")


@hookimpl
def piko_input(event: Any, ctx: Any) -> None:
    _on("prompt", event.text)


@hookimpl
def piko_agent_start(event: Any, ctx: Any) -> None:
    _on("agent_start", ctx)


@hookimpl
def piko_provider_request_headers(model: Any, session_id: str) -> dict[str, str] | None:
    result: dict[str, str] | None = _on("chat_start", model)
    return result


@hookimpl
def piko_message_end(event: Any, ctx: Any) -> None:
    if getattr(event.message, "ROLE", "") == "assistant":
        _on("chat_end", event.message)


@hookimpl
def piko_shell_env(cwd: str, tool_call_id: str | None) -> dict[str, str] | None:
    result: dict[str, str] | None = _on("shell_env", tool_call_id)
    return result
