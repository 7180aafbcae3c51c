"""pi's RPC transcripts replayed against ``pi --mode rpc``: same commands, same responses, same events."""

from __future__ import annotations

import re
from typing import Any

import pytest
from rpc_client import SAMPLE_ARGS
from rpc_client import RpcProcess
from rpc_client import sample
from support.pi16_additions import lines_without_additions
from support.pi16_additions import without_additions
from support.streams import update_delta

_VOLATILE = {"timestamp"}
_PORT = re.compile(r"127\.0\.0\.1:\d+")


def normalize(value: Any) -> Any:
    """A record without what differs run to run: timestamps, session ids, the server's port.

    ``message_update`` keeps only its delta: pi serializes its ``partial``/``message`` snapshots
    after the stream moved on, so they show later text than the delta they belong to.
    """
    if isinstance(value, dict):
        if value.get("type") == "message_update" and "assistantMessageEvent" in value:
            return {"type": "message_update", "assistantMessageEvent": normalize(update_delta(value))}
        out = {}
        for key, item in value.items():
            if key in _VOLATILE:
                continue
            out[key] = "<session-id>" if key == "sessionId" else normalize(item)
        return out
    if isinstance(value, list):
        return [normalize(v) for v in value]
    if isinstance(value, str):
        return _PORT.sub("127.0.0.1:<port>", value)
    return value


def replay(rpc: Any, name: str) -> tuple[RpcProcess, list[dict[str, Any]]]:
    """Drive ``pi --mode rpc`` through the sample's steps as pi's driver did; our records and pi's."""
    cmd = sample(name, "cmd.txt")
    assert " ".join(SAMPLE_ARGS) in cmd  # the same command line pi ran
    process = rpc(sample(name, "scenario.json"))
    for step in sample(name, "steps.json"):
        if "send" in step:
            process.send(step["send"])
        else:
            process.send_raw(step["send_raw"] + "\n")
        waits = step.get("wait")
        if waits is None and "id" in step.get("send", {}):  # pi's driver awaited each response
            waits = [{"type": "response", "id": step["send"]["id"]}]
        for want in waits or []:
            process.wait_for(
                lambda r, w=want: all(r.get(k) == v for k, v in w.items()), step.get("timeout", 30)
            )
    assert process.close() == 0
    theirs = [t["json"] for t in sample(name, "transcript.jsonl") if t["dir"] == "out"]
    return process, [with_our_deviations(r, sample(name, "steps.json")) for r in theirs]


def with_our_deviations(record: dict[str, Any], steps: list[dict[str, Any]]) -> dict[str, Any]:
    """pi's record as piko writes it where piko deliberately differs (docs/rpc.md, "Differences").

    An unknown command's error response keeps the request's ``id`` (pi drops it).
    """
    if record.get("type") == "response" and str(record.get("error", "")).startswith("Unknown command: "):
        sent = [s["send"] for s in steps if s.get("send", {}).get("type") == record["command"]]
        if sent and "id" in sent[0]:
            return {"id": sent[0]["id"], **record}
    return record


@pytest.mark.parametrize("name", ["c-tools-rpc", "d-rpc-nosession"])
def test_transcript_matches_pi(rpc: Any, name: str) -> None:
    process, theirs = replay(rpc, name)
    ours = without_additions(process.records)
    assert [normalize(r) for r in ours] == [normalize(r) for r in theirs]
    assert process.stderr == sample(name, "stderr.txt")
    work = process.work
    for path, text in sample(name, "meta.json")["workdir_after"].items():
        assert (work / path).read_text() == text


_RAW_VOLATILE = [
    (re.compile(r'"timestamp":\d+'), '"timestamp":0'),
    (re.compile(r'"sessionId":"[0-9a-f-]+"'), '"sessionId":"<id>"'),
    (_PORT, "127.0.0.1:<port>"),
]


def _raw(line: str) -> str:
    for pattern, replacement in _RAW_VOLATILE:
        line = pattern.sub(replacement, line)
    return line


@pytest.mark.parametrize("name", ["c-tools-rpc", "d-rpc-nosession"])
def test_transcript_lines_are_pis_bytes(rpc: Any, name: str) -> None:
    """Every record but ``message_update`` is byte for byte pi's, once timestamps and ids are masked:
    the same keys in the same order, numbers and strings written the same way."""
    process, _ = replay(rpc, name)
    theirs = [
        t["line"] for t in sample(name, "transcript.jsonl")
        if t["dir"] == "out" and "Unknown command" not in t["line"]
    ]  # fmt: skip
    ours = lines_without_additions(
        [line.decode("utf-8") for line in process.raw_lines if b"Unknown command" not in line]
    )
    assert len(ours) == len(theirs)
    compared = 0
    for mine, pis in zip(ours, theirs, strict=True):
        if pis.startswith('{"type":"message_update"'):
            continue
        assert _raw(mine) == _raw(pis)
        compared += 1
    assert compared > 40
