"""Random and malformed input: every record gets exactly one response and the process keeps answering."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from rpc_client import SAMPLE_ARGS
from rpc_client import RpcProcess
from support.llm_server import LLMServer
from support.pi_dirs import make_pi_dirs

from piko.plugins.modes.rpc.commands import COMMANDS

FIELDS = ["message", "images", "streamingBehavior", "provider", "modelId", "level", "mode", "enabled",
          "customInstructions", "command", "outputPath", "sessionPath", "entryId", "name", "parentSession",
          "value", "confirmed", "cancelled"]  # fmt: skip
TYPES = [*COMMANDS, "extension_ui_response", "no_such_command", "", "PROMPT"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def command_objects(draw: Any) -> dict[str, Any]:
    command: dict[str, Any] = {"type": draw(st.sampled_from(TYPES) | st.text(max_size=10) | json_values)}
    for name in draw(st.lists(st.sampled_from(FIELDS), max_size=4, unique=True)):
        command[name] = draw(json_values)
    if command["type"] == "bash" and isinstance(command.get("command"), str):
        command["command"] = "echo fuzz"  # random shell commands are not run
    if command["type"] == "compact":
        command.pop("customInstructions", None)
        command["type"] = "get_state"  # a summary call per example would make the run slow
    command.pop("outputPath", None)
    if isinstance(command.get("sessionPath"), str):
        command["sessionPath"] = "fuzz-session.jsonl"  # inside the work directory
    if draw(st.booleans()):
        command["id"] = draw(json_values)
    return command


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


lines = st.one_of(
    command_objects().map(lambda c: _utf8(json.dumps(c, ensure_ascii=False))),
    command_objects().map(lambda c: _utf8(json.dumps(c))),  # ASCII with \u escapes, lone surrogates too
    json_values.map(lambda v: _utf8(json.dumps(v))),
    st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), max_size=40).map(_utf8),
    st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")),  # not even UTF-8
    command_objects().map(lambda c: _utf8(json.dumps(c))[:-3]),  # cut short
    command_objects().map(lambda c: _utf8(json.dumps(c)) + b"\r"),
    command_objects().map(lambda c: _utf8(json.dumps(c, ensure_ascii=False).replace(" ", "\u2028"))),
)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # Python's parser would take NaN and Infinity


def expects_response(line: bytes) -> bool:
    """Whether pi answers the record: everything but answers to dialogs."""
    text = line.decode("utf-8", "replace")
    text = text[:-1] if text.endswith("\r") else text
    try:
        value = json.loads(text, parse_constant=_not_json)
    except (ValueError, RecursionError):
        return True
    return not (isinstance(value, dict) and value.get("type") == "extension_ui_response")


class Session:
    """One long-lived ``pi --mode rpc`` shared by the examples, with bookkeeping."""

    def __init__(self, process: RpcProcess) -> None:
        self.process = process
        self.expected = 0
        self.sentinels = 0

    def feed(self, batch: list[bytes]) -> None:
        self.process.send_raw(b"".join(line + b"\n" for line in batch))
        self.expected += sum(1 for line in batch if expects_response(line))
        self.sentinels += 1
        sentinel = {"id": f"sentinel-{self.sentinels}", "type": "get_state"}
        self.expected += 1
        response = self.process.request(sentinel, timeout=30)
        assert response["success"] is True
        assert response["data"]["sessionId"]

    def responses(self) -> int:
        return sum(1 for r in self.process.records if r.get("type") == "response")


@pytest.fixture(scope="module")
def fuzz_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Session]:
    with LLMServer([{"blocks": [{"text": "fine"}], "repeat": True}]) as server:
        home, work = make_pi_dirs(tmp_path_factory.mktemp("fuzz"), server)
        process = RpcProcess(home, work, SAMPLE_ARGS)
        session = Session(process)
        try:
            yield session
            settle(session)
            assert process.close() == 0
        finally:
            process.kill()


def settle(session: Session) -> None:
    """Wait until the agent is idle and late answers (prompts, shell runs) are in; then count."""
    process = session.process
    deadline = time.monotonic() + 60
    while True:
        state = process.request({"id": f"settle-{time.monotonic()}", "type": "get_state"})["data"]
        session.expected += 1
        if not state["isStreaming"] and session.responses() >= session.expected:
            break
        assert time.monotonic() < deadline, "the agent did not settle"
        time.sleep(0.1)
    assert session.responses() == session.expected


def check(session: Session, batch: list[bytes]) -> None:
    session.feed(batch)
    assert session.process.proc.poll() is None


def fuzzing(examples: int) -> Any:
    """Hypothesis settings for ``examples`` batches against the one shared process."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


@fuzzing(300)
@given(batch=st.lists(lines, min_size=1, max_size=4))
def test_random_records_each_get_one_response(fuzz_session: Session, batch: list[bytes]) -> None:
    check(fuzz_session, batch)


@pytest.mark.slow
@fuzzing(3000)
@given(batch=st.lists(lines, min_size=1, max_size=8))
def test_thousands_of_random_records(fuzz_session: Session, batch: list[bytes]) -> None:
    check(fuzz_session, batch)


def test_ids_are_echoed_once(fuzz_session: Session) -> None:
    """Distinct ids on commands of every kind: one response each, carrying the id."""
    process = fuzz_session.process
    sent = []
    for n, kind in enumerate([*COMMANDS, "nope"]):
        if kind in ("compact", "bash", "export_html", "switch_session", "prompt", "steer", "follow_up"):
            continue
        sent.append({"id": f"id-{n}", "type": kind})
    process.send_raw("".join(json.dumps(c) + "\n" for c in sent))
    fuzz_session.expected += len(sent)
    for command in sent:
        answers = []
        deadline = time.monotonic() + 30
        while not answers and time.monotonic() < deadline:
            answers = [
                r for r in process.records if r.get("type") == "response" and r.get("id") == command["id"]
            ]
            time.sleep(0.01)
        assert len(answers) == 1, command
        assert answers[0]["command"] == command["type"]
    assert Path(process.work).is_dir()
