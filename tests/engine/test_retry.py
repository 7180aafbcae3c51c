"""The retry policy (``piko.engine.retry``): which failures are retried, the backoff, giving up, cancelling."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from piko.data.messages import AssistantMessage
from piko.engine.retry import RetryPolicy
from piko.engine.session_services import SessionServices
from piko.platform.manager import PikoPluginManager
from piko.plugins.providers import error_kinds

FAST = {"retry": {"baseDelayMs": 1}}

RECORDER = """
import json, os

def activate(pi):
    def record(name):
        def handler(event, ctx):
            with open(os.path.join(ctx.cwd, "retry-events.jsonl"), "a") as fh:
                fh.write(json.dumps({"event": name, "attempt": event.attempt}) + "\\n")
        return handler

    pi.on("auto_retry_start", record("auto_retry_start"))
    pi.on("auto_retry_end", record("auto_retry_end"))
"""


def _failed(error: str) -> AssistantMessage:
    return AssistantMessage(stop_reason="error", error_message=error)


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        ("503 status code (no body)", True),
        ("Overloaded", True),
        ("429 Too Many Requests: rate limit reached", True),
        ("fetch failed: socket hang up", True),
        ("Request timed out", True),
        ("400 invalid request: unknown parameter", False),
        ("This model's maximum context length is 8192 tokens", False),  # an overflow: compacted instead
    ],
)
def test_which_failures_are_worth_retrying(error: str, retryable: bool) -> None:
    assert _policy().is_retryable(_failed(error), None) is retryable


def test_a_success_or_an_error_without_text_is_not_retried() -> None:
    policy = _policy()
    assert not policy.is_retryable(AssistantMessage(stop_reason="stop"), None)
    assert not policy.is_retryable(AssistantMessage(stop_reason="error"), None)


def _policy() -> RetryPolicy:
    """A policy asking the built-in ``providers.error-kinds`` plugin, as a session's does."""
    pm = PikoPluginManager()
    pm.register(error_kinds, "providers.error-kinds")
    return RetryPolicy(SessionServices(settings={}, pm=pm))


CLASSIFIER = """
from piko import hookimpl

@hookimpl(tryfirst=True)
def piko_classify_error(message, model):
    return "retryable" if "flux capacitor" in message.error_message else None
"""


def test_a_plugin_says_which_of_its_providers_errors_are_worth_retrying(rig, run) -> None:
    failure = {"error": "400 flux capacitor recharging"}

    async def scenario(extensions: list[Any]) -> Any:
        session = await rig.session([failure, "recovered"], settings=FAST, extensions=extensions)
        await session.prompt("go")
        return session

    assert run(scenario([])).messages[-1].stop_reason == "error"  # pi's phrasings do not know it
    session = run(scenario([rig.write_extension("flux", CLASSIFIER)]))
    assert session.messages[-1].stop_reason == "stop"
    assert [e.success for e in rig.of_type("auto_retry_end")] == [True]


def test_a_passing_failure_is_retried_and_left_out_of_the_context(rig, run) -> None:
    ext = rig.write_extension("recorder", RECORDER)

    async def scenario() -> Any:
        session = await rig.session([{"status": 503}, "recovered"], settings=FAST, extensions=[ext])
        await session.prompt("go")
        return session

    session = run(scenario())
    (start,) = rig.of_type("auto_retry_start")
    assert (start.attempt, start.max_attempts, start.delay_ms) == (1, 3, 1)
    assert start.error_message == "503 status code (no body)"
    (end,) = rig.of_type("auto_retry_end")
    assert (end.success, end.attempt) == (True, 1)
    conversation = [m for m in session.messages if m.role != "system"]  # the rig's tool record aside
    assert [type(m).__name__ for m in conversation] == ["UserMessage", "AssistantMessage"]
    assert session.messages[-1].stop_reason == "stop" and session.retry.attempt == 0
    # the failed answer stays on file, as in pi
    stops = [
        e["message"].get("stopReason")
        for e in rig.entries(session)
        if e["type"] == "message" and e["message"]["role"] != "system"
    ]
    assert stops == [None, "error", "stop"]
    log = (rig.project / "retry-events.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in log] == [
        {"event": "auto_retry_start", "attempt": 1},
        {"event": "auto_retry_end", "attempt": 1},
    ]


def test_retries_give_up_after_max_retries_with_the_last_error(rig, run) -> None:
    settings = {"retry": {"baseDelayMs": 1, "maxRetries": 2}}

    async def scenario() -> Any:
        session = await rig.session([{"status": 503}] * 3, settings=settings)
        await session.prompt("go")
        return session

    session = run(scenario())
    assert [(e.attempt, e.delay_ms) for e in rig.of_type("auto_retry_start")] == [(1, 1), (2, 2)]
    (end,) = rig.of_type("auto_retry_end")
    assert (end.success, end.attempt, end.final_error) == (False, 2, "503 status code (no body)")
    assert session.messages[-1].stop_reason == "error" and session.retry.attempt == 0


def test_abort_cancels_the_backoff_wait(rig, run) -> None:
    async def scenario() -> Any:
        session = await rig.session(
            [{"status": 503}, "never sent"], settings={"retry": {"baseDelayMs": 60000}}
        )
        task = asyncio.ensure_future(session.prompt("go"))
        while not session.retry.is_waiting:
            await asyncio.sleep(0.001)
        session.retry.abort()
        await asyncio.wait_for(task, 10)
        return session

    session = run(scenario())
    (end,) = rig.of_type("auto_retry_end")
    assert (end.success, end.attempt, end.final_error) == (False, 1, "Retry cancelled")
    assert not session.retry.is_waiting and session.retry.attempt == 0


def test_disabled_auto_retry_is_saved_and_leaves_the_failure(rig, run) -> None:
    async def scenario() -> Any:
        session = await rig.session([{"status": 503}, "never sent"], settings=FAST)
        session.retry.set_enabled(False)
        await session.prompt("go")
        return session

    session = run(scenario())
    assert rig.settings()["retry"] == {"baseDelayMs": 1, "enabled": False}
    assert session.retry.enabled is False
    assert rig.of_type("auto_retry_start") == [] and session.messages[-1].stop_reason == "error"


def test_the_policy_reads_its_settings_and_saves_through_its_writer() -> None:
    """The defaults hold until a setting says otherwise; saving goes through ``save_setting``."""
    saved: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    policy = RetryPolicy(SessionServices(settings=settings, save_setting=saved.__setitem__))
    assert policy.enabled is True and policy.attempt == 0 and not policy.is_waiting
    policy.set_enabled(False)
    assert saved == {"retry.enabled": False}
    settings["retry.enabled"] = False
    assert policy.enabled is False
