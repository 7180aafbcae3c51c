"""RPC fuzz: random and malformed lines to one ``pi --mode rpc``; each is answered once, the
process keeps serving, and ``get_state`` answers at the end."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from battery import Battery
from battery import Tally
from battery import both_sizes_within
from battery import tries
from data_harness import MOCK
from data_harness import RpcProcess
from data_harness import make_env
from data_harness import rpc_process
from support.llm_server import LLMServer

from piko.plugins.modes.rpc.commands import COMMANDS
from piko.plugins.modes.rpc.commands import KINDS

ANSWER_S = 30.0
JSON_VALUES: list[Any] = [None, True, 7, 2.5, "text", [1, "a"], {"k": "v"}]


def _wrong_values(kind: str) -> list[Any]:
    """Values of every JSON type that a field of ``kind`` refuses (``None`` is "absent")."""
    test, _wanted = KINDS[kind]
    return [v for v in JSON_VALUES if v is not None and not test(v)]


VALID = {"string": "x", "boolean": True, "images": [], "thinking_level": "off", "queue_mode": "all",
         "streaming_behavior": "steer"}  # fmt: skip

WRONG_TYPES: list[tuple[str, str, Any]] = [
    (name, field.name, value)
    for name, command in COMMANDS.items()
    for field in command.fields
    for value in _wrong_values(field.kind)
]


class Fuzzer:
    """Lines of each kind, made from one seeded random source; each knows what answers it."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)
        self.count = 0

    def _id(self) -> str:
        self.count += 1
        return f"f-{self.count}"

    def _command(self) -> dict[str, Any]:
        name = self.random.choice(["get_state", "get_messages", "get_session_stats", "get_commands"])
        return {"id": self._id(), "type": name}

    def random_bytes(self) -> tuple[bytes, str | None, Callable[[dict[str, Any]], bool]]:
        size = self.random.randint(1, 200)
        data = bytes(self.random.getrandbits(8) for _ in range(size)).replace(b"\n", b" ")
        return data, None, lambda r: r["success"] is False

    def truncated(self) -> tuple[bytes, str | None, Callable[[dict[str, Any]], bool]]:
        line = json.dumps(self._command()).encode()
        cut = self.random.randint(1, len(line) - 1)
        return line[:cut], None, lambda r: r["command"] == "parse" and r["success"] is False

    def huge_number(self) -> tuple[bytes, str | None, Callable[[dict[str, Any]], bool]]:
        digits = self.random.choice([400, 4300, 4301, 5000, 20000])
        sign = self.random.choice(["", "-"])
        number = sign + "9" * digits
        if digits <= 4300:  # read exactly, echoed as sent
            return (
                f'{{"type":"get_state","id":{number}}}'.encode(),
                None,
                lambda r: r["success"] is True and r.get("id") == int(number),
            )
        if self.random.random() < 0.3:  # an exponent: JavaScript's Infinity, echoed as null
            return b'{"type":"get_state","id":1e400}', None, lambda r: r["success"] and r.get("id") is None
        return (
            f'{{"type":"get_state","id":{number}}}'.encode(),
            None,
            lambda r: r["success"] is False and "Number too long in JSON at position 25" in r["error"],
        )

    def deep(self) -> tuple[bytes, str | None, Callable[[dict[str, Any]], bool]]:
        depth = self.random.choice([1100, 5000, 100_000])
        opener, closer = self.random.choice([("[", "]"), ('{"a":', "}")])
        line = (opener * depth + "1" + closer * depth).encode()
        return line, None, lambda r: r["success"] is False and "nested too deeply" in r["error"]

    def wrong_type(self) -> tuple[bytes, str | None, Callable[[dict[str, Any]], bool]]:
        name, field, value = self.random.choice(WRONG_TYPES)
        command_id = self._id()
        command: dict[str, Any] = {"id": command_id, "type": name}
        command.update({f.name: VALID[f.kind] for f in COMMANDS[name].fields if f.required})
        command[field] = value  # the others right: the answer must name this one
        line = json.dumps(command).encode()
        return line, command_id, lambda r: r["success"] is False and f'"{field}"' in r["error"]

    def unknown(self) -> tuple[bytes, str | None, Callable[[dict[str, Any]], bool]]:
        command_id = self._id()
        kind = self.random.choice([f"no_such_{self.random.randint(0, 999)}", "", "PROMPT", 7, None, ["x"]])
        line = json.dumps({"id": command_id, "type": kind}).encode()
        return line, command_id, lambda r: r["success"] is False and "command" in r["error"].lower()

    def long_line(self) -> tuple[bytes, str | None, Callable[[dict[str, Any]], bool]]:
        size = self.random.choice([1 << 20, 3 << 20])
        if self.random.random() < 0.5:
            command = self._command()
            command["padding"] = "x" * size
            return json.dumps(command).encode(), command["id"], lambda r: r["success"] is True
        return b"z" * size, None, lambda r: r["command"] == "parse" and r["success"] is False

    def bad_utf8(self) -> tuple[bytes, str | None, Callable[[dict[str, Any]], bool]]:
        command_id = self._id()
        junk = bytes(self.random.choice([0xFF, 0xFE, 0xC0, 0x80, 0xED]) for _ in range(5))
        line = b'{"id":"' + command_id.encode() + b'","type":"set_session_name","name":"n' + junk + b'"}'
        return line, command_id, lambda r: r["success"] is True


KINDS_OF_LINES = [
    "random_bytes",
    "truncated",
    "huge_number",
    "deep",
    "wrong_type",
    "unknown",
    "long_line",
    "bad_utf8",
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RpcProcess]:
    with LLMServer([{"blocks": [{"text": "fine"}], "repeat": True}]) as server:
        env = make_env(tmp_path_factory.mktemp("rpc-fuzz"), server)
        process = rpc_process(env, "--no-session", *MOCK)
        try:
            yield process
        finally:
            process.kill()


def _exchange(
    process: RpcProcess, line: bytes, line_id: str | None, sentinel: str
) -> tuple[list[dict[str, Any]], str | None]:
    """Send ``line`` then a ``get_state`` sentinel; the responses that belong to ``line``."""
    start = len(process.records)
    process.send_raw(line + b"\n" + json.dumps({"id": sentinel, "type": "get_state"}).encode() + b"\n")
    deadline = time.monotonic() + ANSWER_S
    while True:
        window = process.records[start:]
        got_sentinel = any(r.get("id") == sentinel for r in window)
        mine = [
            r
            for r in window
            if r.get("type") == "response"
            and r.get("id") != sentinel
            and not (isinstance(r.get("id"), str) and r["id"] != line_id)
        ]
        if got_sentinel and (line_id is None or any(r.get("id") == line_id for r in mine)):
            return mine, None
        if process.proc.poll() is not None:
            return mine, f"pi exited with {process.proc.returncode}"
        if time.monotonic() > deadline:
            return mine, "no answer within the time"
        time.sleep(0.002)


def _fuzz(battery: Battery, process: RpcProcess, kind: str, count: int, seed: int) -> None:
    tally: Tally = battery.case(f"rpc fuzz: {kind.replace('_', ' ')}")
    fuzzer = Fuzzer(seed)
    for n in range(count):
        line, line_id, meaning = getattr(fuzzer, kind)()
        tally.tries += 1
        responses, trouble = _exchange(process, line, line_id, f"sentinel-{kind}-{n}")
        if trouble is not None:
            tally.lose(1, f"{line[:60]!r}: {trouble}")
            if process.proc.poll() is not None:
                return
            continue
        if len(responses) != 1:
            tally.fail(f"{line[:60]!r}: {len(responses)} responses")
        elif not meaning(responses[0]):
            tally.fail(f"{line[:60]!r}: answered {str(responses[0])[:200]}")


@both_sizes_within(1800)
def test_every_malformed_line_is_answered_and_pi_keeps_serving(
    battery: Battery, served: RpcProcess, slow: bool
) -> None:
    for index, kind in enumerate(KINDS_OF_LINES):
        big = kind in ("long_line", "deep")
        count = tries(3 if big else 12, 40 if big else 1500, slow=slow)
        _fuzz(battery, served, kind, count, seed=1000 * index + int(slow))
    state = served.request({"id": "final-state", "type": "get_state"})
    end = battery.case("rpc fuzz: get_state at the end")
    end.tries = 1
    if not state.get("success"):
        end.fail(f"get_state: {state}")
    assert Path(served.work).is_dir()
