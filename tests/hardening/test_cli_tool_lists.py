"""CLI battery: random ``--tools``/``--exclude-tools`` lists and ``defaultTools`` settings (names,
patterns, ``+``/``-`` entries, unknown names, regex and shell metacharacters) through real ``pi``
runs, resumed sessions keeping their tools, and RPC ``bash`` output streamed without a byte lost."""

from __future__ import annotations

import random
import shlex
from pathlib import Path
from typing import Any

from battery import Battery
from battery import both_sizes_within
from battery import tries
from data_harness import MOCK
from data_harness import PiEnv
from data_harness import make_env
from data_harness import rpc_process
from support.llm_server import LLMServer

from piko.engine.tool_selection import ToolInfo
from piko.engine.tool_selection import ToolRequest
from piko.engine.tool_selection import choose_tools
from piko.lib.tool_names import split_tool_list
from piko.lib.tool_names import tool_list_error

BUILTIN = ["read", "bash", "edit", "write", "grep", "find", "ls"]
REGISTERED = [ToolInfo(name, True, name in ("read", "bash", "edit", "write")) for name in BUILTIN]
WORDS = [*BUILTIN, "nope", "READ", "r*", "*s*", "g?ep", "[a-z]*", "(x", "\\d", "e*t", "*", "", " ls "]


def _entry(rng: random.Random) -> str:
    word = rng.choice(WORDS)
    return rng.choice(["", "", "+", "-"]) + word if rng.random() < 0.4 else word


def _tool_list(rng: random.Random) -> str:
    return ",".join(_entry(rng) for _ in range(rng.randint(1, 5)))


def _flags(rng: random.Random) -> list[str]:
    flags: list[str] = []
    if rng.random() < 0.7:
        flags += [rng.choice(["--tools", "-t"]), _tool_list(rng)]
    if rng.random() < 0.4:
        flags += [rng.choice(["--exclude-tools", "-xt"]), _tool_list(rng)]
    if rng.random() < 0.15:
        flags.append(rng.choice(["--no-tools", "-nbt"]))
    return flags


def _expected(flags: list[str], default_tools: list[str] | None) -> tuple[list[str] | None, str | None]:
    """What the run should declare (None: refused) and the error line when refused."""
    values: dict[str, str] = {}
    no_tools = None
    i = 0
    while i < len(flags):
        flag = flags[i]
        if flag in ("--tools", "-t", "--exclude-tools", "-xt"):
            values["tools" if flag in ("--tools", "-t") else "exclude"] = flags[i + 1]
            i += 2
            continue
        no_tools = "all" if flag == "--no-tools" else "builtin"
        i += 1
    tools = tuple(split_tool_list(values["tools"])) if "tools" in values else None
    if tools is not None and (error := tool_list_error(tools)):
        return None, f"Error: --tools: {error}"
    request = ToolRequest(
        tools=tools,
        exclude=tuple(split_tool_list(values.get("exclude", ""))),
        no_tools=no_tools,
        default_tools=tuple(default_tools) if default_tools is not None else None,
    )
    return choose_tools(REGISTERED, request).active, None


def _check_run(env: PiEnv, flags: list[str], default_tools: list[str] | None, index: int) -> str | None:
    """Run ``pi -p`` with ``flags``; what went wrong, or None."""
    want, error = _expected(flags, default_tools)
    done = env.run("-p", "--no-session", *flags, *MOCK, "hi", timeout=60)
    if "Traceback" in done.stderr:
        return f"{flags}: traceback: {done.stderr[-300:]}"
    if want is None:
        if (done.returncode, done.stderr.strip()) != (1, error):
            return f"{flags}: expected {error!r}, got {done.returncode} {done.stderr!r}"
        return None
    if done.returncode != 0 or done.stdout != "ok\n":
        return f"{flags}: exit {done.returncode}, stderr {done.stderr!r}"
    lines = [line for line in done.stderr.splitlines() if line]
    options = [
        line.split(" in ")[1].split(":")[0] for line in lines if line.startswith("Warning: Unknown tool(s)")
    ]
    if len(options) != len(set(options)) or len(options) != len(lines):
        return f"{flags}: warnings not once per option: {done.stderr!r}"
    sent = env.tool_names(index)
    if sent != want:
        return f"{flags}: declared {sent}, expected {want}"
    return None


@both_sizes_within(900)
def test_random_tool_lists(battery: Battery, tmp_path: Path, slow: bool) -> None:
    rng = random.Random(18)
    case = battery.case("cli-tool-lists", tries=tries(12, 150, slow=slow))
    with LLMServer([{"blocks": [{"text": "ok"}]}] * case.tries) as server:
        env = make_env(tmp_path, server)
        for _try in range(case.tries):
            default_tools = None
            if rng.random() < 0.3:
                default_tools = [_entry(rng) for _ in range(rng.randint(0, 3))]
                env.settings({"defaultTools": default_tools})
            elif (env.home / "settings.json").exists():
                (env.home / "settings.json").unlink()
            problem = _check_run(env, _flags(rng), default_tools, len(server.requests))
            if problem:
                case.fail(problem)


@both_sizes_within(900)
def test_resumed_sessions_keep_tools_and_messages(battery: Battery, tmp_path: Path, slow: bool) -> None:
    """A chain of ``-c`` runs, some changing the tools: each run declares what the last change
    chose, in the order the session file gives (pi 1.6's: a record lists only what changed, so
    tools the file had keep their place and new ones follow), and no message is lost from the
    session file."""
    rng = random.Random(1818)
    case = battery.case("cli-resume-tools", tries=tries(6, 40, slow=slow))
    with LLMServer([{"blocks": [{"text": "ok"}]}] * case.tries) as server:
        env = make_env(tmp_path, server)
        default = ["read", "bash", "edit", "write"]
        on_file: list[str] | None = None  # the loadout the session file records
        for index in range(case.tries):
            flags: list[str] = []
            if index == 0 or rng.random() < 0.5:
                chosen = rng.sample(BUILTIN, rng.randint(1, 4))
                flags = ["--tools", ",".join(chosen)]
                if on_file is None:
                    on_file = chosen if chosen != default else None
                elif set(chosen) != set(on_file):
                    on_file = [n for n in on_file if n in chosen] + [n for n in chosen if n not in on_file]
            current = on_file or default
            resume = ["-c"] if index else []
            done = env.run("-p", *resume, *flags, *MOCK, f"prompt {index}", timeout=60)
            if done.returncode != 0:
                case.fail(f"run {index}: exit {done.returncode}: {done.stderr[-200:]}")
                continue
            if env.tool_names(len(server.requests) - 1) != current:
                case.fail(
                    f"run {index}: declared {env.tool_names(len(server.requests) - 1)}, expected {current}"
                )
        prompts = [
            e for e in env.session_lines() if e.get("message", {}).get("role") == "user"
        ]  # fmt: skip
        case.lose(case.tries - len(prompts), "user messages missing from the session file")


@both_sizes_within(900)
def test_rpc_bash_streams_every_byte(battery: Battery, tmp_path: Path, slow: bool) -> None:
    """Random output (sizes, newlines, UTF-8, pauses) from RPC ``bash``: the streamed deltas join
    to the response's output, byte for byte, and carry the command's id."""
    rng = random.Random(7)
    case = battery.case("cli-rpc-bash-stream", tries=tries(8, 80, slow=slow))
    with LLMServer([]) as server:
        env = make_env(tmp_path, server)
        process = rpc_process(env, "--no-session", *MOCK)
        try:
            for index in range(case.tries):
                pieces = [
                    rng.choice(["x" * rng.randint(1, 3000), "é€ line\n", "\n", "tab\t", "ünï"])
                    for _ in range(rng.randint(1, 6))
                ]
                script = "; ".join(
                    f"printf '%s' {shlex.quote(p)}" + ("; sleep 0.02" if rng.random() < 0.3 else "")
                    for p in pieces
                )
                before = len(process.records)
                response = process.request({"id": f"b{index}", "type": "bash", "command": script}, timeout=30)
                data: dict[str, Any] = response.get("data") or {}
                streamed = "".join(
                    r["delta"]
                    for r in process.records[before:]
                    if r.get("type") == "bash_execution_update" and r.get("id") == f"b{index}"
                )
                expected = "".join(pieces)
                if not response.get("success"):
                    case.fail(f"bash {index}: {response.get('error')}")
                    continue
                if not data.get("truncated") and data.get("output") != expected:
                    case.fail(f"bash {index}: output differs from what was printed")
                case.lose(
                    max(0, len(expected) - len(streamed)), f"bash {index}: bytes missing from the stream"
                )
                if streamed != expected and len(streamed) >= len(expected):
                    case.fail(f"bash {index}: the stream differs from what was printed")
        finally:
            process.close()
