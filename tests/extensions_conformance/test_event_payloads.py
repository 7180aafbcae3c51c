"""``event_payloads.json``: every payload fired at a real extension through piko's dispatcher.

The payloads are the Rust port's; where its field names differ from the reference's (pi's),
:data:`RENAMED` maps them and :data:`NOT_IN_PI` drops them (a test keeps both lists exact).
Each payload becomes piko's event, goes through the session's dispatcher to ``payload_probe``
(loaded by the real loader) with the session's ``ctx``, and the probe answers with the payload's
``default_response``. The test checks the event the handler saw (it carries every field of the
payload, by pi's camelCase name) and that piko draws the response's effect from
it (a block, a transform, a cancel, replaced messages...).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any

import pytest
from ext_conformance_kit import EXTENSIONS
from ext_conformance_kit import load

from piko.data.events import EVENT_CLASSES
from piko.data.wire import to_wire

PAYLOADS = load("event_payloads/event_payloads.json")

# the Rust port's field -> the reference's field of the same meaning
RENAMED = {
    ("input", "content"): "text",
    ("input", "attachments"): "images",
    ("session_before_fork", "forkEntryId"): "entryId",
    ("session_before_switch", "targetSession"): "targetSessionFile",
}
# the Rust port's fields that pi's events do not have (``ctx.session_manager`` tells the session)
NOT_IN_PI = {("session_before_fork", "currentSession"), ("session_before_switch", "currentSession")}
# what the payloads rely on and piko does not have
WITH_SESSION_ID = ("agent_start", "agent_end", "turn_start", "turn_end")
MISSING_EVENTS = {"startup"}


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def cases() -> list[Any]:
    return list(_cases())


def _cases() -> Iterator[Any]:
    for event, payloads in PAYLOADS["event_payloads"].items():
        for payload in payloads:
            marks = []
            if event in MISSING_EVENTS:
                marks.append(
                    pytest.mark.xfail(
                        strict=True,
                        reason=f"piko has no '{event}' event (nor has pi: its start-up is session_start "
                        "with reason 'startup'); the payload's version and sessionFile have no home",
                    )
                )
            yield pytest.param(event, payload, id=f"{event}-{payload['name']}", marks=marks)


def pi_fields(event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The payload in the reference's camelCase names (renamed, without what pi does not have)."""
    out = {}
    for key, value in payload.items():
        if key == "type" or (event, key) in NOT_IN_PI:
            continue
        out[RENAMED.get((event, key), key)] = value
    return out


@pytest.fixture(scope="module")
def probe(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[[str, Any, Any], tuple[Any, list[Any]]]]:
    """``probe(event name, event, response)``: fire the event at ``payload_probe`` in a session
    booted once for the module; (the combined result, the probe's log lines)."""
    from piko.testing.home import PikoHome
    from piko.testing.session import PikoSession
    from piko.testing.session import RecordingUI

    monkeypatch = pytest.MonkeyPatch()
    root = tmp_path_factory.mktemp("payloads")
    home = PikoHome(root).isolate(monkeypatch)
    log = root / "probe.jsonl"
    monkeypatch.setenv("PAYLOAD_PROBE_LOG", str(log))
    app = PikoSession(home).boot(extensions=[EXTENSIONS / "payload_probe.py"])
    app.options = {"session_dir": str(home.sessions)}
    loop = asyncio.new_event_loop()
    session = loop.run_until_complete(app.create_agent_session(ui=RecordingUI(), mode="print"))

    def fire(name: str, event: Any, response: Any) -> tuple[Any, list[Any]]:
        log.write_text("")
        monkeypatch.setenv("PAYLOAD_PROBE_RESPONSE", json.dumps(response))
        result = loop.run_until_complete(session.dispatcher.emit(name, event, session.ctx))
        return result, [json.loads(line) for line in log.read_text().splitlines()]

    try:
        yield fire
    finally:
        loop.run_until_complete(session.shutdown())
        loop.close()
        monkeypatch.undo()


def texts(messages: list[Any]) -> list[str]:
    """The text of each message (wire form), for comparing replaced messages."""
    out = []
    for message in messages:
        wire = to_wire(message)
        out.append("".join(block.get("text", "") for block in wire["content"]))
    return out


def check_effect(event: str, payload: dict[str, Any], response: Any, result: Any) -> None:
    """What piko made of the handler's response."""
    if event == "tool_call":
        assert result["block"] is response["block"]
        assert result.get("reason") == response.get("reason")
    elif event == "tool_result":
        if response.get("content"):
            assert [to_wire(block) for block in result["content"]] == response["content"]
        else:
            assert not result
    elif event == "input":
        assert result["action"] == response["action"]
        if response["action"] == "transform":
            assert result["text"] == response["text"]
    elif event == "before_agent_start":
        if "systemPrompt" in response:
            assert result["system_prompt"] == response["systemPrompt"]
        else:
            assert not result
    elif event == "context":
        wanted = response.get("messages", payload["messages"])
        assert texts(result) == texts(wanted)
    elif event == "resources_discover":
        for key in ("skillPaths", "promptPaths", "themePaths"):
            assert [path for path, _source in result[snake(key)]] == response.get(key, [])
    elif event in (
        "session_before_compact",
        "session_before_switch",
        "session_before_fork",
        "session_before_tree",
    ):
        if response:
            assert {snake(k): v for k, v in response.items()} == {k: result[k] for k in map(snake, response)}
        else:
            assert not result
    else:  # notifications, and user_bash answered with nothing
        assert response in (None, {}) and not result


@pytest.mark.parametrize(("event", "case"), cases())
def test_payload_reaches_a_handler_and_its_response_counts(
    event: str, case: dict[str, Any], probe: Any
) -> None:
    cls = EVENT_CLASSES[event]
    fields = pi_fields(event, case["payload"])
    built = cls(**{snake(key): value for key, value in fields.items()})
    result, seen = probe(event, built, case["default_response"])
    assert len(seen) == 1, seen
    got = seen[0]["event"]
    assert got["type"] == event
    for key, value in fields.items():
        assert got[key] == to_wire(value), key
    template = PAYLOADS["context"]["template"]
    assert seen[0]["has_ui"] is template["hasUI"]
    check_effect(event, case["payload"], case["default_response"], result)


@pytest.mark.parametrize("event", WITH_SESSION_ID)
def test_agent_and_turn_events_carry_the_session_id(event: str) -> None:
    assert "session_id" in {f.name for f in EVENT_CLASSES[event].FIELDS}


def test_the_divergence_lists_are_exact() -> None:
    """Every payload field piko's events lack is renamed, not pi's, or missing: no other."""
    unknown = set()
    for event, payloads in PAYLOADS["event_payloads"].items():
        if event in MISSING_EVENTS:
            assert event not in EVENT_CLASSES
            continue
        names = {f.name for f in EVENT_CLASSES[event].FIELDS}
        for case in payloads:
            unknown |= {(event, key) for key in case["payload"] if key != "type" and snake(key) not in names}
    assert unknown == set(RENAMED) | NOT_IN_PI


SESSION_ID_RECORDER = """
import json, os

def activate(pi):
    def record(event, ctx):
        with open(os.environ["SESSION_ID_LOG"], "a") as fh:
            fh.write(json.dumps([event.TYPE, event.session_id, ctx.session_manager.get_session_id()]) + "\\n")
    for name in ("agent_start", "turn_start", "turn_end", "agent_end"):
        pi.on(name, record)
"""


def test_a_handler_of_agent_and_turn_events_gets_the_session_id(
    piko_session: Any, piko_home: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = piko_home.root / "ids.jsonl"
    monkeypatch.setenv("SESSION_ID_LOG", str(log))
    extension = piko_home.write("session_ids.py", SESSION_ID_RECORDER)
    piko_session.run("hello", turns=[{"blocks": [{"text": "hi"}]}], extensions=[extension])
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert [kind for kind, _, _ in seen] == ["agent_start", "turn_start", "turn_end", "agent_end"]
    assert all(given == own and given for _, given, own in seen)
