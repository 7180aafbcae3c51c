"""Provider requests (``piko.engine.provider_hooks``): each request's options, and the payload and response hooks."""

from __future__ import annotations

from typing import Any

import pytest

from piko.data.messages import Model
from piko.engine.provider_hooks import ProviderRequests
from piko.engine.session_services import SessionServices

SETTINGS = {
    "thinkingBudgets": {"low": 512},
    "cacheRetention": "long",
    "retry": {"provider": {"timeoutMs": 2500, "maxRetries": 0, "maxRetryDelayMs": 0}},
}

PAYLOAD_AND_RESPONSE = """
import json, os

def activate(pi):
    def payload(event, ctx):
        return {**event.payload, "seen_by": "extension"}

    def response(event, ctx):
        with open(os.path.join(ctx.cwd, "response.json"), "w") as fh:
            json.dump({"status": event.status, "headers": event.headers}, fh)

    pi.on("before_provider_request", payload)
    pi.on("after_provider_response", response)
"""


def test_each_request_carries_the_thinking_level_the_session_and_the_settings(rig, run) -> None:
    seen: list[Any] = []

    def reply(context: Any, options: Any, state: Any, model: Any) -> str:
        seen.append(options)
        return "ok"

    async def scenario() -> Any:
        session = await rig.session([reply, reply], settings=SETTINGS)
        await session.prompt("first")
        session.model = session.model_registry.find("local", "think-1")
        session.set_thinking_level("low")
        session.model = session.model_registry.find("faux", "faux-1")  # faux answers; the level stays
        await session.prompt("second")
        return session

    session = run(scenario())
    first, second = seen
    assert first.reasoning is None and second.reasoning == "low"
    assert first.session_id == second.session_id == session.session_id
    assert first.thinking_budgets["low"] == 512 and first.cache_retention == "long"
    assert first.timeout_s == 2.5
    assert first.extra == {"max_retries": 0, "max_retry_delay_ms": 2**53}  # 0: no limit on the wait


@pytest.mark.parametrize(
    "provider",
    [
        {"timeoutMs": 0, "maxRetries": -1, "maxRetryDelayMs": -5},
        {"timeoutMs": True, "maxRetries": "3", "maxRetryDelayMs": None},
        "not a table",
    ],
)
def test_unusable_provider_retry_settings_are_left_out(rig, run, provider: Any) -> None:
    seen: list[Any] = []

    async def scenario() -> None:
        session = await rig.session(
            [lambda c, o, s, m: seen.append(o) or "ok"], settings={"retry": {"provider": provider}}
        )
        await session.prompt("go")

    run(scenario())
    (options,) = seen
    assert options.timeout_s is None and options.extra == {}


def _requests(session: Any, model: Model | None) -> ProviderRequests:
    services = SessionServices(
        registry=session.model_registry,
        settings=session.settings,
        pm=session.app.pm,
        dispatcher=session.dispatcher,
        ctx=session.ctx,
        signal=lambda: None,
        model=lambda: model,
        thinking_level=lambda: "off",
        session_id=lambda: "s-1",
    )
    return ProviderRequests(services)


def test_extensions_replace_the_payload_and_see_the_response(rig, run) -> None:
    ext = rig.write_extension("hooks", PAYLOAD_AND_RESPONSE)

    async def scenario() -> Any:
        session = await rig.session([], extensions=[ext])
        requests = _requests(session, session.model)
        replaced = await requests.on_payload({"model": "faux-1"}, session.model)
        await requests.on_response(429, {"retry-after": "3"}, session.model)
        return replaced

    assert run(scenario()) == {"model": "faux-1", "seen_by": "extension"}
    assert (rig.project / "response.json").read_text() == '{"status": 429, "headers": {"retry-after": "3"}}'


def test_without_handlers_the_payload_is_sent_as_it_is(rig, run) -> None:
    async def scenario() -> Any:
        session = await rig.session([])
        return await _requests(session, session.model).on_payload({"model": "faux-1"}, session.model)

    assert run(scenario()) is None


def test_a_request_without_a_model_fails(rig, run) -> None:
    async def scenario() -> None:
        session = await rig.session([])
        with pytest.raises(RuntimeError, match="No model selected"):
            await _requests(session, None).options(None)

    run(scenario())
