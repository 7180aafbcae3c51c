"""The telemetry plugin: ``gen_ai`` spans of a run, trace context sent to the provider and into
shell commands, and OTLP/HTTP export to a collector on 127.0.0.1 (decoded with the official protos)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

from support.clean_env import boot_app
from support.clean_env import clean_environment
from support.http_servers import QuietHandler
from support.llm_server import LLMServer
from support.pi_dirs import write_mock_models
from support.pi_runs import run_in_pi_dirs

from piko.testing import hermetic_environment

TURNS = [
    {"blocks": [{"tool_call": {"name": "bash", "arguments": {"command": "echo $TRACEPARENT > tp.txt"}}}]},
    {"blocks": [{"text": "traced"}], "usage": {"input": 120, "output": 7}},
]
MODELS = [{"id": "mock-1", "contextWindow": 100000, "maxTokens": 1000}]


def test_a_run_makes_gen_ai_spans_and_propagates_trace_context(monkeypatch, tmp_path: Path) -> None:
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from piko.plugins import telemetry

    agent = clean_environment(monkeypatch, tmp_path)
    (agent / "settings.json").write_text(json.dumps({"telemetry": {"enabled": True, "content": True}}))
    with LLMServer(list(TURNS)) as server:
        write_mock_models(agent, server.base_url, MODELS)
        app = boot_app(tmp_path)
        memory = InMemorySpanExporter()
        telemetry.state["telemetry"].provider.add_span_processor(SimpleSpanProcessor(memory))

        async def scenario() -> None:
            app.options.update(provider="mock", model="mock-1", tools="bash")
            session = await app.create_agent_session(mode="print")
            await session.prompt("trace this")

        asyncio.run(scenario())
        headers = [{k.lower(): v for k, v in r["headers"].items()} for r in server.requests]
    spans = {s.name: s for s in memory.get_finished_spans()}
    agent_span = spans["invoke_agent piko"]
    chats = [s for s in memory.get_finished_spans() if s.name == "chat mock-1"]
    tool = spans["execute_tool bash"]
    assert len(chats) == 2
    assert all(s.parent.span_id == agent_span.context.span_id for s in [*chats, tool])
    assert agent_span.attributes["gen_ai.operation.name"] == "invoke_agent"
    last = chats[-1].attributes
    assert (last["gen_ai.operation.name"], last["gen_ai.provider.name"], last["gen_ai.request.model"]) == (
        "chat", "mock", "mock-1",
    )  # fmt: skip
    assert (last["gen_ai.usage.input_tokens"], last["gen_ai.usage.output_tokens"]) == (120, 7)
    assert tuple(last["gen_ai.response.finish_reasons"]) == ("stop",)
    assert "traced" in last["gen_ai.output.messages"]  # content only because the settings ask for it
    assert tool.attributes["gen_ai.tool.name"] == "bash"
    for chat, sent in zip(chats, headers, strict=True):
        trace_id, span_id = f"{chat.context.trace_id:032x}", f"{chat.context.span_id:016x}"
        assert sent["traceparent"].rsplit("-", 1)[0] == f"00-{trace_id}-{span_id}"  # then the trace flags
    written = (tmp_path / "tp.txt").read_text().strip()
    assert written.rsplit("-", 1)[0] == f"00-{tool.context.trace_id:032x}-{tool.context.span_id:016x}"
    app.shutdown() if hasattr(app, "shutdown") else None


class Collector(ThreadingHTTPServer):
    """An OTLP/HTTP receiver: keeps each request's path and body."""

    def __init__(self) -> None:
        self.received: list[tuple[str, bytes]] = []

        class Handler(QuietHandler):
            def do_POST(handler) -> None:
                body = handler.rfile.read(int(handler.headers.get("content-length", 0)))
                self.received.append((handler.path, body))
                handler.reply(200, content_type="application/x-protobuf")

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()


def test_spans_reach_an_otlp_collector_from_a_real_run(tmp_path: Path) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    collector = Collector()
    try:
        with LLMServer(list(TURNS)) as server:
            endpoint = f"http://127.0.0.1:{collector.server_address[1]}"
            done, _work = run_in_pi_dirs(
                tmp_path, server, "--tools", "bash", "-p", "go", env={"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
            )
    finally:
        collector.shutdown()
    assert done.returncode == 0, done.stderr
    names = []
    for path, body in collector.received:
        if path == "/v1/traces":
            request = ExportTraceServiceRequest.FromString(body)
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    names += [span.name for span in scope.spans]
    assert sorted(names) == ["chat mock-1", "chat mock-1", "execute_tool bash", "invoke_agent piko"]
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest

    metrics = {
        metric.name
        for path, body in collector.received
        if path == "/v1/metrics"
        for resource in ExportMetricsServiceRequest.FromString(body).resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }
    assert {"gen_ai.client.token.usage", "gen_ai.client.operation.duration", "piko.tool.duration"} <= metrics
    assert "traced" not in str(collector.received)  # content stays out unless enabled


def test_an_unreachable_collector_does_not_break_the_run(tmp_path: Path) -> None:
    with LLMServer(list(TURNS)) as server:
        unreachable = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}
        done, _work = run_in_pi_dirs(tmp_path, server, "--tools", "bash", "-p", "go", env=unreachable)
    assert done.returncode == 0 and done.stdout.strip() == "traced"


def test_disabled_telemetry_imports_nothing(tmp_path: Path) -> None:
    env = hermetic_environment()
    env.update(PI_CODING_AGENT_DIR=str(tmp_path), PIKO_CACHE_DIR=str(tmp_path / "cache"), HOME=str(tmp_path))
    code = "import runpy, sys; sys.argv=['pi','--provider','faux','--no-session','-p','hi']\n"
    code += "try:\n    runpy.run_module('piko', run_name='__main__')\nexcept SystemExit: pass\n"
    code += "print('OTEL', any(m.startswith('opentelemetry') for m in sys.modules), file=sys.stderr)"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert "OTEL False" in done.stderr, done.stderr
