"""Per-delta cost of the event pipeline: a streamed answer through ``AgentSession`` with extension handlers.

A provider stream of ``--deltas`` text deltas (produced in-process, so no network and no
decoding is measured) runs through the agent loop, the session's event handling, the kernel
dispatcher and ``--handlers`` extension handlers on ``message_update`` (one extension each,
doing a trivial amount of work). We report the time per delta with and without the handlers,
and the extra cost the handlers add. Target (issue "Agent core"): under 25 µs per delta with 10
handlers.

    .venv/bin/python benchmarks/bench_event_pipeline.py [--deltas 20000] [--handlers 10] [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from typing import Any

TARGET_US = 25.0


def _app(tmp: str, handlers: int, deltas: int) -> Any:
    from piko.app.application import App
    from piko.data.messages import Model
    from piko.extensions.extension_api import ExtensionAPI
    from piko.platform.registries import ProviderApi
    from piko.platform.registries import ProviderConfig
    from piko.plugins.providers.builder import MessageBuilder

    app = App(cwd=tmp, agent_dir=tmp + "/agent")
    app.boot()
    model = Model(id="bench-1", api="bench", provider="bench")

    async def stream(model: Model, context: Any, options: Any) -> AsyncIterator[Any]:
        builder = MessageBuilder(model)
        yield builder.start()
        index, event = builder.text_start()
        yield event
        for _ in range(deltas):
            yield builder.text_delta(index, "word ")
        yield builder.text_end(index)
        yield builder.done()

    app.model_registry.load()
    app.model_registry.add_provider(ProviderConfig(name="bench", api="bench", api_key="k", models=[model]))
    app.registries.add_runtime("provider_apis", ProviderApi(name="bench", stream=stream))
    counters = [0] * handlers
    for i in range(handlers):
        api = ExtensionAPI(f"ext{i}", f"ext{i}", app)

        def on_update(event: Any, ctx: Any, i: int = i) -> None:
            counters[i] += len(event.assistant_message_event.delta or "")

        api.on("message_update", on_update)
        app.pm.register(api.compile(), f"ext{i}")
    return app, counters


async def _run_once(handlers: int, deltas: int) -> float:
    from piko.engine.session import AgentSession
    from piko.sessions.manager import SessionManager

    with tempfile.TemporaryDirectory() as tmp:
        app, counters = _app(tmp, handlers, deltas)
        session = AgentSession(
            app, SessionManager.in_memory(tmp), model=app.model_registry.find("bench", "bench-1")
        )
        start = time.perf_counter()
        await session.prompt("go")
        elapsed = time.perf_counter() - start
        last = session.messages[-1]
        assert last.stop_reason == "stop", last.error_message
        assert all(c == 5 * deltas for c in counters), counters
        return elapsed / deltas * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deltas", type=int, default=20000)
    parser.add_argument("--handlers", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with_handlers, without = [], []
    for _ in range(args.runs):  # alternate, so load on the machine hits both alike
        without.append(asyncio.run(_run_once(0, args.deltas)))
        with_handlers.append(asyncio.run(_run_once(args.handlers, args.deltas)))
    result = {
        "deltas": args.deltas,
        "handlers": args.handlers,
        "per_delta_us_without_handlers": statistics.median(without),
        "per_delta_us_with_handlers": statistics.median(with_handlers),
    }
    result["handlers_overhead_us"] = (
        result["per_delta_us_with_handlers"] - result["per_delta_us_without_handlers"]
    )
    ok = result["per_delta_us_with_handlers"] < TARGET_US
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"per delta, no handlers:        {result['per_delta_us_without_handlers']:6.1f} µs")
        print(
            f"per delta, {args.handlers} handlers:         {result['per_delta_us_with_handlers']:6.1f} µs  (target < {TARGET_US:g} µs)"
        )
        print(f"the handlers' share:           {result['handlers_overhead_us']:6.1f} µs")
        print("target met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
