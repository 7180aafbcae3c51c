"""The OpenTelemetry side of the telemetry plugin: spans ``invoke_agent``, ``chat`` and
``execute_tool`` with ``gen_ai.*`` attributes, W3C trace context for provider requests and shell
commands, and token, cost, duration and error metrics. Imported only when telemetry is enabled.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind
from opentelemetry.trace import Status
from opentelemetry.trace import StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from piko import __version__
from piko.lib.redaction import redact

EXPORT_TIMEOUT_S = 2.0  # an unreachable collector costs at most this, in the background
SHUTDOWN_FLUSH_MS = 1000
QUEUE_SIZE = 2048


def _endpoint(options: dict[str, Any], signal: str) -> str | None:
    """The OTLP/HTTP URL of ``signal`` (``traces``, ``metrics``): settings, then the OTEL variables."""
    base = options.get("endpoint") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    specific = os.environ.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT")
    if specific:
        return specific
    return f"{str(base).rstrip('/')}/v1/{signal}" if base else None


class Telemetry:
    """One process's tracer and meter; spans keyed by session run, model call and tool call."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.content = bool(options.get("content"))
        resource = Resource.create(
            {"service.name": str(options.get("serviceName") or "piko"), "service.version": __version__}
        )
        self.provider = TracerProvider(resource=resource)
        traces = _endpoint(options, "traces")
        if traces:
            self.provider.add_span_processor(
                BatchSpanProcessor(
                    OTLPSpanExporter(endpoint=traces, timeout=EXPORT_TIMEOUT_S),
                    max_queue_size=QUEUE_SIZE, export_timeout_millis=int(EXPORT_TIMEOUT_S * 1000),
                )
            )  # fmt: skip
        readers = []
        metrics = _endpoint(options, "metrics")
        if metrics and options.get("metrics", True):
            readers.append(
                PeriodicExportingMetricReader(
                    OTLPMetricExporter(endpoint=metrics, timeout=EXPORT_TIMEOUT_S),
                    export_interval_millis=int(options.get("metricsIntervalMs", 60000)),
                    export_timeout_millis=int(EXPORT_TIMEOUT_S * 1000),
                )
            )
        self.meters = MeterProvider(resource=resource, metric_readers=readers)
        self.tracer = self.provider.get_tracer("piko", __version__)
        meter = self.meters.get_meter("piko", __version__)
        self.token_usage = meter.create_histogram("gen_ai.client.token.usage", unit="{token}")
        self.operation_duration = meter.create_histogram("gen_ai.client.operation.duration", unit="s")
        self.cost = meter.create_counter("piko.cost", unit="USD", description="Model cost")
        self.tool_duration = meter.create_histogram("piko.tool.duration", unit="s")
        self.errors = meter.create_counter("piko.errors", description="Failed model and tool calls")
        self._lock = threading.Lock()
        self._agent: Any = None
        self._prompt: str | None = None
        self._chat: tuple[Any, float, Any] | None = None
        self._tools: dict[str, tuple[Any, float, str]] = {}
        self._propagator = TraceContextTextMapPropagator()

    # -- spans ------------------------------------------------------------------------------

    def prompt(self, text: str) -> None:
        self._prompt = text

    def agent_start(self, ctx: Any) -> None:
        manager = getattr(ctx, "session_manager", None)
        attributes: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "piko"}
        if manager is not None:
            attributes["gen_ai.conversation.id"] = manager.get_session_id()
        if self.content and self._prompt:
            attributes["gen_ai.input.messages"] = json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": redact(self._prompt)}]}]
            )
        with self._lock:
            self._agent = self.tracer.start_span(
                "invoke_agent piko", kind=SpanKind.INTERNAL, attributes=attributes
            )

    def agent_end(self, event: Any) -> None:
        with self._lock:
            span, self._agent = self._agent, None
        if span is not None:
            if getattr(event, "error", None):
                span.set_status(Status(StatusCode.ERROR, str(event.error)))
            span.end()

    def _parent(self) -> Any:
        return trace.set_span_in_context(self._agent) if self._agent is not None else None

    def chat_start(self, model: Any) -> dict[str, str]:
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": model.provider,
            "gen_ai.request.model": model.id,
        }
        span = self.tracer.start_span(
            f"chat {model.id}", context=self._parent(), kind=SpanKind.CLIENT, attributes=attributes
        )
        with self._lock:
            self._chat = (span, time.monotonic(), model)
        carrier: dict[str, str] = {}
        self._propagator.inject(carrier, context=trace.set_span_in_context(span))
        return carrier

    def chat_end(self, message: Any) -> None:
        with self._lock:
            chat, self._chat = self._chat, None
        if chat is None:
            return
        span, started, model = chat
        usage = message.usage
        span.set_attribute("gen_ai.response.model", message.model or model.id)
        span.set_attribute("gen_ai.usage.input_tokens", usage.input + usage.cache_read)
        span.set_attribute("gen_ai.usage.output_tokens", usage.output)
        span.set_attribute("gen_ai.response.finish_reasons", [str(message.stop_reason)])
        if message.response_id if hasattr(message, "response_id") else None:
            span.set_attribute("gen_ai.response.id", message.response_id)
        base = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": model.provider,
            "gen_ai.request.model": model.id,
        }
        if self.content:
            texts = [getattr(b, "text", "") for b in message.content if getattr(b, "TYPE", "") == "text"]
            span.set_attribute(
                "gen_ai.output.messages",
                json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": redact("".join(texts))}]}]
                ),
            )
        if message.stop_reason == "error":
            span.set_status(Status(StatusCode.ERROR, redact(message.error_message or "error")))
            span.set_attribute("error.type", "provider_error")
            self.errors.add(1, {**base, "error.type": "provider_error"})
        span.end()
        self.operation_duration.record(time.monotonic() - started, base)
        self.token_usage.record(usage.input + usage.cache_read, {**base, "gen_ai.token.type": "input"})
        self.token_usage.record(usage.output, {**base, "gen_ai.token.type": "output"})
        if usage.cost.total:
            self.cost.add(usage.cost.total, base)

    def tool_start(self, event: Any) -> None:
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": event.tool_name,
            "gen_ai.tool.call.id": event.tool_call_id,
        }
        if self.content:
            attributes["gen_ai.tool.call.arguments"] = redact(json.dumps(event.args, default=str))
        span = self.tracer.start_span(
            f"execute_tool {event.tool_name}", context=self._parent(), attributes=attributes
        )
        with self._lock:
            self._tools[event.tool_call_id] = (span, time.monotonic(), event.tool_name)

    def tool_end(self, event: Any) -> None:
        with self._lock:
            entry = self._tools.pop(event.tool_call_id, None)
        if entry is None:
            return
        span, started, name = entry
        attributes = {"gen_ai.tool.name": name}
        if event.is_error:
            span.set_status(Status(StatusCode.ERROR, "tool failed"))
            span.set_attribute("error.type", "tool_error")
            self.errors.add(1, {**attributes, "error.type": "tool_error"})
        span.end()
        self.tool_duration.record(time.monotonic() - started, attributes)

    def shell_env(self, tool_call_id: str | None) -> dict[str, str]:
        """``TRACEPARENT`` (and ``TRACESTATE``) for a shell command: its tool span, else the run's."""
        with self._lock:
            entry = self._tools.get(tool_call_id or "")
            span = entry[0] if entry is not None else self._agent
        if span is None:
            return {}
        carrier: dict[str, str] = {}
        self._propagator.inject(carrier, context=trace.set_span_in_context(span))
        return {key.upper(): value for key, value in carrier.items()}

    def shutdown(self) -> None:
        """Send what is queued (waiting at most a second), then stop."""
        for span in [s for s, _, _ in self._tools.values()] + (
            [self._agent] if self._agent is not None else []
        ):
            span.end()
        self.provider.force_flush(SHUTDOWN_FLUSH_MS)
        self.provider.shutdown()
        self.meters.shutdown(timeout_millis=SHUTDOWN_FLUSH_MS)
