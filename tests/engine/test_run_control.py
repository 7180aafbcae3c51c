"""Run control (``piko.engine.run_control``): what follows a run, as its last answer and the compaction check decide."""

from __future__ import annotations

from typing import Any

from support.faux_answers import user_texts

from piko.data.messages import AssistantMessage
from piko.data.messages import UserMessage
from piko.data.messages import text_of
from piko.engine.loop import now_ms
from piko.engine.run_control import RunControl
from piko.engine.session_services import SessionServices


async def _run(session: Any, decide: Any, text: str = "go") -> RunControl:
    """A run of the session's agent under a RunControl of its own, told of each answer."""
    runs = RunControl(
        session.agent, session.retry, SessionServices(model=lambda: session.model), check_compaction=decide
    )

    def answered(event: Any) -> None:
        if event.TYPE == "message_end" and isinstance(event.message, AssistantMessage):
            runs.answered(event.message)

    session.subscribe(answered)
    message = UserMessage(content=text, timestamp=now_ms())
    await runs.run(lambda: session.agent.prompt([message]))
    return runs


def test_a_compaction_that_asks_for_a_retry_sends_the_request_again(rig, run) -> None:
    seen: list[list[str]] = []
    checks: list[tuple[str | None, bool]] = []

    def reply(context: Any, options: Any, state: Any, model: Any) -> str:
        seen.append(user_texts(context))
        return "fits"

    async def scenario() -> Any:
        session = await rig.session([{"error": "prompt is too long: 999999 tokens > 1000 maximum"}, reply])

        async def decide(message: AssistantMessage, skip_aborted: bool) -> str | None:
            checks.append((message.stop_reason, skip_aborted))
            if message.stop_reason == "error":
                session.agent.state.messages.pop()  # as the overflow recovery drops the failed answer
                return "retry"
            return None

        await _run(session, decide)
        return session

    session = run(scenario())
    assert checks == [("error", True), ("stop", True)]
    assert seen == [["go"]]  # the request sent again
    assert [type(m).__name__ for m in session.messages] == ["UserMessage", "AssistantMessage"]
    assert text_of(session.messages[-1].content) == "fits"


def test_messages_queued_while_compacting_are_delivered_at_once(rig, run) -> None:
    seen: list[list[str]] = []

    def reply(context: Any, options: Any, state: Any, model: Any) -> str:
        seen.append(user_texts(context))
        return "ok"

    async def scenario() -> None:
        session = await rig.session([reply, reply])

        async def decide(message: AssistantMessage, skip_aborted: bool) -> str | None:
            if len(seen) == 1:
                await session.queues.add("queued meanwhile", None, follow_up=True)
                return "compacted"
            return None

        await _run(session, decide)

    run(scenario())
    assert seen == [["go"], ["go", "queued meanwhile"]]


def test_a_retryable_failure_is_retried_before_any_compaction_check(rig, run) -> None:
    checks: list[str | None] = []

    async def decide(message: AssistantMessage, skip_aborted: bool) -> str | None:
        checks.append(message.stop_reason)
        return None

    async def scenario() -> None:
        session = await rig.session([{"status": 503}, "recovered"], settings={"retry": {"baseDelayMs": 1}})
        await _run(session, decide)

    run(scenario())
    assert checks == ["stop"]  # the failure went to the retry, the success to the compaction check


def test_overflow_recovery_is_allowed_again_after_a_user_message_or_a_good_answer() -> None:
    runs = RunControl(None, None, SessionServices(), check_compaction=None)  # type: ignore[arg-type]
    runs.overflow_recovery_attempted = True
    runs.answered(AssistantMessage(stop_reason="error", error_message="too long"))
    assert runs.overflow_recovery_attempted is True
    runs.answered(AssistantMessage(stop_reason="stop"))
    assert runs.overflow_recovery_attempted is False
    runs.overflow_recovery_attempted = True
    runs.user_message_started()
    assert runs.overflow_recovery_attempted is False
