"""Corrupt session files of many kinds, each opened with ``pi -p --session``: it loads or is
refused with a clear message, every line left out is reported, nothing is rewritten without a
``.bak``, and no tool result without its call reaches the provider."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from battery import Battery
from battery import Tally
from battery import both_sizes_within
from battery import tries
from data_harness import MOCK
from data_harness import make_env
from data_harness import unpaired_tool_results
from support.llm_server import LLMServer

from piko.data.messages import AssistantMessage
from piko.data.messages import TextContent
from piko.data.messages import ToolCall
from piko.data.messages import ToolResultMessage
from piko.data.messages import Usage
from piko.data.messages import UserMessage
from piko.sessions.manager import SessionManager

ANSWER = "ok answer"


@attrs.define
class Damage:
    """A damaged file and what opening it must show."""

    data: bytes
    reported: set[int] = attrs.field(factory=set)  # lines whose number a warning must give
    says: list[str] = attrs.field(factory=list)  # texts stderr must hold
    refused: bool = False  # opening fails with "Error: ..."
    untouched: bool = False  # the file must stay byte for byte as it is


def _assistant(*content: Any) -> AssistantMessage:
    stop = "toolUse" if any(isinstance(c, ToolCall) for c in content) else "stop"
    return AssistantMessage(content=list(content), api="openai-completions", provider="mock", model="mock-1",
                            usage=Usage(input=10, output=5, total_tokens=15), stop_reason=stop)  # fmt: skip


def _base_session(path: Path, cwd: Path) -> list[bytes]:
    """A conversation with a tool call, written by piko; its lines (newline included)."""
    manager = SessionManager.create(str(cwd), str(path.parent))
    manager.append_model_change("mock", "mock-1")
    manager.append_message(UserMessage(content=[TextContent(text="read the notes")], timestamp=1))
    call = ToolCall(id="call_a", name="read", arguments={"path": "notes.txt"})
    manager.append_message(_assistant(TextContent(text="reading"), call))
    manager.append_message(ToolResultMessage(tool_call_id="call_a", tool_name="read",
                                             content=[TextContent(text="hello world")], timestamp=3))  # fmt: skip
    manager.append_message(_assistant(TextContent(text="it says hello")))
    manager.append_message(UserMessage(content=[TextContent(text="thanks")], timestamp=5))
    manager.append_message(_assistant(TextContent(text="you are welcome")))
    written = Path(manager.session_file or "")
    written.rename(path)
    return path.read_bytes().splitlines(keepends=True)


def _message_lines(lines: list[bytes]) -> list[int]:
    return [n for n, line in enumerate(lines, 1) if b'"type":"message"' in line]


def _join(lines: list[bytes]) -> bytes:
    return b"".join(lines)


# -- the kinds of damage ---------------------------------------------------------------------------


def truncated_last_line(lines: list[bytes], rng: random.Random) -> Damage:
    last = lines[-1]
    cut = rng.randint(1, len(last) - 2)
    return Damage(_join(lines[:-1]) + last[:cut], reported={len(lines)}, says=["line skipped"])


def garbage_mid_file(lines: list[bytes], rng: random.Random) -> Damage:
    at = rng.randint(1, len(lines) - 1)
    junk = rng.choice(
        [b"this is not json\n", b"{broken\n", b'{"type":"message","id":"x"\n', b"\x00\x01\x02\n"]
    )
    return Damage(_join([*lines[:at], junk, *lines[at:]]), reported={at + 1}, says=["line skipped"])


def garbled_message(lines: list[bytes], rng: random.Random) -> Damage:
    number = rng.choice(_message_lines(lines))
    line = lines[number - 1]
    cut = line.index(b'"content"') + 4  # past the tree fields: the fast reader takes the line
    damaged = line[:cut] + b"\x00GARBAGE" + line[cut + 8 :]
    if number == len(lines):  # the last line is read whole at load (a crash may have cut it)
        return Damage(_join([*lines[:-1], damaged]), reported={number}, says=["line skipped"])
    says = ["unreadable message skipped"]
    if b'"toolCall"' in line:
        says.append("follows no tool call")  # its result is left out
    if b'"toolResult"' in line:
        says.append("has no result")
    return Damage(_join([*lines[: number - 1], damaged, *lines[number:]]), reported={number}, says=says)


def wrong_type_line(lines: list[bytes], rng: random.Random) -> Damage:
    at = rng.randint(1, len(lines) - 1)
    junk = rng.choice([b"[1,2,3]\n", b'"a string"\n', b"42\n", b"null\n", b'{"type":7,"id":"q"}\n', b"{}\n"])
    return Damage(_join([*lines[:at], junk, *lines[at:]]), reported={at + 1}, says=["line skipped"])


def missing_parent(lines: list[bytes], rng: random.Random) -> Damage:
    number = rng.randint(3, len(lines))
    entry = json.loads(lines[number - 1])
    entry["parentId"] = "gone0000"
    changed = json.dumps(entry, separators=(",", ":")).encode() + b"\n"
    return Damage(_join([*lines[: number - 1], changed, *lines[number:]]), reported={number},
                  says=["parent gone0000 is not in the file"])  # fmt: skip


def parent_cycle(lines: list[bytes], rng: random.Random) -> Damage:
    first = rng.randint(2, len(lines) - 1)
    later = rng.randint(first + 1, len(lines))
    entry = json.loads(lines[first - 1])
    entry["parentId"] = json.loads(lines[later - 1])["id"]
    changed = json.dumps(entry, separators=(",", ":")).encode() + b"\n"
    return Damage(_join([*lines[: first - 1], changed, *lines[first:]]), says=["cycle"])


def duplicate_ids(lines: list[bytes], rng: random.Random) -> Damage:
    number = rng.randint(2, len(lines) - 1)
    at = rng.randint(number, len(lines) - 1)
    copy = lines[number - 1]
    return Damage(_join([*lines[:at], copy, *lines[at:]]), says=["is used by more than one line"])


def invalid_version(lines: list[bytes], rng: random.Random) -> Damage:
    header = json.loads(lines[0])
    header["version"] = rng.choice(["3", "abc", 2.5, 99, True, [3], -1])
    changed = json.dumps(header, separators=(",", ":")).encode() + b"\n"
    return Damage(_join([changed, *lines[1:]]), reported={1}, says=["is not one piko knows"], untouched=True)


def empty_file(lines: list[bytes], rng: random.Random) -> Damage:
    return Damage(rng.choice([b"", b"\n", b"\n\n  \n"]))


def binary_junk(lines: list[bytes], rng: random.Random) -> Damage:
    junk = bytes(rng.getrandbits(8) for _ in range(rng.randint(50, 4000)))
    if not junk.strip():
        junk = b"\xff" + junk
    return Damage(junk, refused=True, says=["not a session file"], untouched=True)


def junk_after_header(lines: list[bytes], rng: random.Random) -> Damage:
    junk = bytes(rng.getrandbits(8) for _ in range(200)).replace(b"\n", b"") + b"\n"
    return Damage(_join([lines[0], junk, *lines[1:]]), reported={2}, says=["line skipped"])


def huge_line(lines: list[bytes], rng: random.Random) -> Damage:
    size = rng.choice([2, 6]) << 20
    if rng.random() < 0.5:  # junk: skipped
        return Damage(_join([*lines[:-1], b"x" * size + b"\n", lines[-1]]), reported={len(lines)},
                      says=["line skipped"])  # fmt: skip
    # a real entry of that size, on the branch (a custom entry piko keeps and does not send)
    last = json.loads(lines[-1])
    entry = {"type": "custom", "customType": "big", "data": "y" * size, "id": "bigbig01",
             "parentId": last["id"], "timestamp": last["timestamp"]}  # fmt: skip
    return Damage(_join(lines) + json.dumps(entry, separators=(",", ":")).encode() + b"\n")


def crlf_and_nul(lines: list[bytes], rng: random.Random) -> Damage:
    data = _join(lines).replace(b"\n", b"\r\n")
    return Damage(data + b"\x00\x00\x00\r\n", reported={len(lines) + 1}, says=["line skipped"])


def not_a_session(lines: list[bytes], rng: random.Random) -> Damage:
    first = rng.choice([b'{"some":"other jsonl"}\n', b'{"type":"message","id":"a"}\n', b"[]\n"])
    return Damage(first + _join(lines[1:]), refused=True, says=["not a session file"], untouched=True)


KINDS: list[Callable[[list[bytes], random.Random], Damage]] = [
    truncated_last_line, garbage_mid_file, garbled_message, wrong_type_line, missing_parent, parent_cycle,
    duplicate_ids, invalid_version, empty_file, binary_junk, junk_after_header, huge_line, crlf_and_nul,
    not_a_session,
]  # fmt: skip


def _backups(path: Path) -> list[bytes]:
    return [p.read_bytes() for p in path.parent.glob(path.name + ".bak*")]


def _one_try(tmp: Path, tally: Tally, kind: Callable[..., Damage], rng: random.Random) -> None:
    with LLMServer([{"blocks": [{"text": ANSWER}], "repeat": True}]) as server:
        env = make_env(tmp, server)
        folder = env.home / "damaged"
        folder.mkdir()
        path = folder / "session.jsonl"
        damage = kind(_base_session(path, env.work), rng)
        path.write_bytes(damage.data)
        result = env.run("-p", *MOCK, "--session", str(path), "go on", timeout=120)
        where = f"{kind.__name__}"
        if damage.refused:
            if result.returncode != 1 or not result.stderr.startswith("Error: "):
                tally.fail(
                    f"{where}: expected a clear refusal, got {result.returncode} {result.stderr[:200]!r}"
                )
        elif result.returncode != 0 or result.stdout.strip() != ANSWER:
            tally.fail(f"{where}: exit {result.returncode}, stderr {result.stderr[-300:]!r}")
        for number in sorted(damage.reported):
            if f"{path}:{number}: " not in result.stderr:
                tally.lose(1, f"{where}: line {number} left out without a word ({result.stderr[-300:]!r})")
        for text in damage.says:
            if text not in result.stderr:
                tally.fail(f"{where}: stderr does not say {text!r} ({result.stderr[-300:]!r})")
        after = path.read_bytes()
        if damage.untouched and after != damage.data:
            tally.fail(f"{where}: the file was changed")
        elif not after.startswith(damage.data) and damage.data.strip() and damage.data not in _backups(path):
            tally.fail(f"{where}: rewritten without a .bak")
        for request in server.requests:
            unpaired = unpaired_tool_results(request["body"])
            if unpaired:
                tally.fail(f"{where}: the provider got tool results without their call: {unpaired}")


@both_sizes_within(3600)
def test_each_corrupt_file_loads_or_is_refused_and_says_what_it_left_out(
    battery: Battery, tmp_path: Path, slow: bool
) -> None:
    rng = random.Random(7 + int(slow))
    for kind in KINDS:
        tally = battery.case(f"corrupt session: {kind.__name__.replace('_', ' ')}")
        for n in tally.attempts(tries(1, 8, slow=slow)):
            _one_try(tmp_path / f"{kind.__name__}-{n}", tally, kind, rng)
