"""ACP battery: one ``pi --mode acp`` driven by the SDK's client with random config option
changes (good and bad) and random commands in the client's terminal; each request is answered,
the agent keeps serving, the session file records the last model and level, every terminal
is released and the model reads each command's output and exit code."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import acp
from acp import schema
from battery import Battery
from battery import both_sizes
from battery import tries
from support.acp_client import RecordingClient
from support.acp_client import acp_agent
from support.llm_server import LLMServer
from support.pi_dirs import make_pi_dirs

MODELS = ["mock/mock-1", "mock-anthropic/mock-claude"]
LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"]
JUNK: list[Any] = ["", "nope/none", "mock", 7, True, "off\n", "x" * 300]


async def _config_fuzz(
    conn: Any, session_id: str, rng: random.Random, count: int, tally: Any
) -> dict[str, str]:
    """Random changes; returns the values the agent last answered with."""
    current: dict[str, str] = {}
    for _ in range(count):
        config_id = rng.choice(["model", "thought_level", "model", "thought_level", "colour"])
        good = MODELS if config_id == "model" else LEVELS
        value = rng.choice(good + JUNK)
        params: dict[str, Any] = {"sessionId": session_id, "configId": config_id, "value": value}
        if isinstance(value, bool):
            params["type"] = "boolean"
        try:  # raw JSON-RPC: the SDK's client would refuse to send the wrong types
            raw = await conn._conn.send_request("session/set_config_option", params)
            answer = schema.SetSessionConfigOptionResponse.model_validate(raw)
        except acp.RequestError as exc:
            offered = value in good and config_id != "colour"
            if exc.code != -32602 or (offered and config_id == "model"):
                tally.fail(f"{config_id}={value!r}: error {exc.code} {exc.data}")
            continue
        options = {o.id: o for o in answer.config_options}
        if options[config_id].current_value != value:
            tally.fail(f"{config_id}={value!r} answered {options[config_id].current_value!r}")
        if value not in [o.value for o in options[config_id].options]:
            tally.fail(f"{config_id}={value!r} set but not on offer")
        current = {k: o.current_value for k, o in options.items()}
    return current


def _recorded(home: Path) -> dict[str, str]:
    """The last model and thinking level the session file recorded."""
    found: dict[str, str] = {}
    for path in (home / "sessions").rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            if entry.get("type") == "model_change":
                found["model"] = f"{entry['provider']}/{entry['modelId']}"
            elif entry.get("type") == "thinking_level_change":
                found["thought_level"] = entry["thinkingLevel"]
    return found


def _command(rng: random.Random) -> tuple[str, int, str]:
    """A command, its exit code and the last line it prints."""
    code = rng.choice([0, 0, 1, 2, 7])
    lines = rng.choice([0, 1, 5, 2500])
    width = rng.choice([1, 40, 100])
    last = f"last-{rng.randrange(10**6)}"
    body = f"for i in $(seq {lines}); do printf '%0{width}d\\n' $i; done; " if lines else ""
    stream = rng.choice(["", " >&2"])
    return f"{body}echo {last}{stream}; exit {code}", code, last


@both_sizes
def test_acp_config_options_and_client_terminals(battery: Battery, tmp_path: Path, slow: bool) -> None:
    rng = random.Random(22)
    config_case = battery.case("acp set_config_option fuzz", tries=tries(20, 300, slow=slow))
    terminal_case = battery.case("acp bash in client terminals", tries=tries(4, 40, slow=slow))
    commands = [_command(rng) for _ in range(terminal_case.tries)]
    turns: list[Any] = []
    for command, _code, _last in commands:
        turns += [{"blocks": [{"tool_call": {"name": "bash", "arguments": {"command": command}}}]}]
        turns += [{"blocks": [{"text": "ok"}]}]
    turns.append({"blocks": [{"text": "recorded"}]})
    server = LLMServer(turns).start()
    try:
        home, work = make_pi_dirs(tmp_path, server)
        client = RecordingClient()

        async def scenario() -> Any:
            async with acp_agent(home, work, client, terminal=True) as (conn, process):
                session = await conn.new_session(cwd=str(work), mcp_servers=[])
                sid = session.session_id
                await conn.set_config_option(config_id="model", session_id=sid, value="mock/mock-1")
                for command, code, last in commands:
                    before = len(server.requests)
                    answer = await conn.prompt(session_id=sid, prompt=[acp.text_block("run it")])
                    if answer.stop_reason != "end_turn":
                        terminal_case.fail(f"{command[:40]}: {answer.stop_reason}")
                        continue
                    result = [
                        m for m in server.requests[before + 1]["body"]["messages"] if m["role"] == "tool"
                    ]
                    text = result[-1]["content"] if result else ""
                    if last not in text:
                        terminal_case.lose(1, f"{command[:40]}: output tail missing")
                    if (f"Command exited with code {code}" in text) != (code != 0):
                        terminal_case.fail(f"{command[:40]}: exit {code} reported as {text[-60:]!r}")
                released = {t for m, t in client.terminal_calls if m == "release"}
                terminal_case.lose(len(set(client.terminals) - released), "terminals never released")
                final = await _config_fuzz(conn, sid, rng, config_case.tries, config_case)
                await conn.prompt(session_id=sid, prompt=[acp.text_block("and record it")])
                return final, process.returncode

        final, code = asyncio.run(asyncio.wait_for(scenario(), 600 if slow else 120))
        if code is not None:
            config_case.fail(f"the agent exited with {code}")
        recorded = _recorded(home)
        for key, value in final.items():
            if recorded.get(key) != value:
                config_case.lose(1, f"{key}: answered {value!r}, session file has {recorded.get(key)!r}")
    finally:
        server.stop()
