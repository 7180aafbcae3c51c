"""The extension reference's events that piko declared and now fires, each from a real extension
file run by a real ``pi`` against the scripted 127.0.0.1 server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_harness import run_extension

HEADERS = """
import json, os
LOG = os.environ["PIKO_TEST_LOG"]

def activate(pi):
    def on_headers(event, ctx):
        with open(LOG, "a") as fh:
            fh.write(json.dumps({"model": event.model.id, "has_auth": "authorization" in {k.lower() for k in event.headers}}) + "\\n")
        event.headers["x-session-id"] = ctx.session_manager.get_session_id()
        event.headers["x-dropped"] = None
    pi.on("before_provider_headers", on_headers)
    pi.on("before_provider_headers", lambda event, ctx: event.headers.__setitem__("x-second", event.headers.get("x-session-id", "missing")))
"""


def test_before_provider_headers_handlers_change_the_request_headers(pi_env: Any, tmp_path: Path) -> None:
    env, _done, rows = run_extension(pi_env, tmp_path, HEADERS, [{"blocks": [{"text": "ok"}]}], "-p", "hi")
    assert rows == [{"model": "mock-1", "has_auth": False}]
    headers = {k.lower(): v for k, v in env.server.requests[0]["headers"].items()}
    session_id = env.session_lines()[0]["id"]
    assert headers["x-session-id"] == session_id
    assert headers["x-second"] == session_id  # a later handler sees the earlier one's change
    assert "x-dropped" not in headers


STOPPER = """
import json, os
LOG = os.environ["PIKO_TEST_LOG"]
MODE = %r

def activate(pi):
    seen = []
    def on_stop(event, ctx):
        seen.append(event.continuations)
        with open(LOG, "a") as fh:
            fh.write(json.dumps({"continuations": event.continuations, "session": event.session_id == ctx.session_manager.get_session_id()}) + "\\n")
        if MODE == "advise" and len(seen) <= 2:
            return {"continue": True, "additionalContext": f"keep going {len(seen)}"}
        if MODE == "always":
            return {"continue": True, "additionalContext": "more"}
        if MODE == "refuse" and len(seen) == 1:
            return {"decision": "block"}
        if MODE == "refuse" and len(seen) == 2:
            return {"decision": "block", "reason": "tests are still red"}
    pi.on("session_stop", on_stop)
    if MODE == "refuse":  # an advisory request beside the refusals: outranked, and never spent
        pi.on("session_stop", lambda event, ctx: {"continue": True, "additionalContext": "advice"} if len(seen) <= 3 else None)
"""


def test_session_stop_continuations_run_more_turns_with_their_context(pi_env: Any, tmp_path: Path) -> None:
    turns = [{"blocks": [{"text": f"reply {n}"}]} for n in range(4)]
    env, done, rows = run_extension(pi_env, tmp_path, STOPPER % "advise", turns, "-p", "hi")
    assert [row["continuations"] for row in rows] == [0, 1, 2]
    assert all(row["session"] for row in rows)
    assert len(env.server.requests) == 3
    assert env.user_texts(1)[-1] == "keep going 1"
    assert env.user_texts(2)[-1] == "keep going 2"
    assert done.stdout.strip().endswith("reply 2")


def test_session_stop_advisory_continuations_are_capped_at_eight(pi_env: Any, tmp_path: Path) -> None:
    turns = [{"blocks": [{"text": f"reply {n}"}]} for n in range(12)]
    env, _done, rows = run_extension(pi_env, tmp_path, STOPPER % "always", turns, "-p", "hi")
    assert len(env.server.requests) == 9  # the prompt's turn and 8 continuations
    assert [row["continuations"] for row in rows] == list(range(9))


def test_session_stop_refusals_outrank_advice_and_need_a_reason(pi_env: Any, tmp_path: Path) -> None:
    turns = [{"blocks": [{"text": f"reply {n}"}]} for n in range(6)]
    env, _done, rows = run_extension(pi_env, tmp_path, STOPPER % "refuse", turns, "-p", "hi")
    # two refusals (not spending the allowance), then the advice, then the session may stop
    assert [row["continuations"] for row in rows] == [0, 0, 0, 1]
    assert "without saying why" in env.user_texts(1)[-1]
    assert env.user_texts(2)[-1] == "tests are still red"
    assert env.user_texts(3)[-1] == "advice"


WITH_SYSTEM = """
import json, os
LOG = os.environ["PIKO_TEST_LOG"]

def activate(pi):
    pi.on("context", lambda event, ctx: {"messages": event.messages + [{"role": "user", "content": "from context", "timestamp": 1}]})
    def whole(event, ctx):
        with open(LOG, "a") as fh:
            fh.write(json.dumps({"prompt_has_base": "pi" in event.system_prompt.lower() or len(event.system_prompt) > 0, "last": event.messages[-1].content}) + "\\n")
        return {"systemPrompt": "REPLACED PROMPT", "messages": [m for m in event.messages if m.role == "user"][-1:]}
    pi.on("context_with_system", whole)
"""


def test_context_with_system_sees_the_context_result_and_owns_the_request(
    pi_env: Any, tmp_path: Path
) -> None:
    env, _done, rows = run_extension(
        pi_env, tmp_path, WITH_SYSTEM, [{"blocks": [{"text": "ok"}]}], "-p", "hi"
    )
    assert rows == [{"prompt_has_base": True, "last": "from context"}]
    assert env.system_prompt(0) == "REPLACED PROMPT"
    assert env.user_texts(0) == ["from context"]
    lines = [line for line in env.session_lines() if line.get("type") == "message"]
    assert lines[0]["message"]["role"] == "user"  # the session keeps what was said, not the request's copy


KEYED_PROVIDER = """
def activate(pi):
    pi.register_provider("mock", {"apiKey": "key-from-the-extension"})
"""


def test_an_extension_api_key_wins_over_models_json_and_a_stored_login(pi_env: Any, tmp_path: Path) -> None:
    env = pi_env([{"blocks": [{"text": "ok"}]}, {"blocks": [{"text": "ok"}]}])
    _env, _done, _rows = run_extension(lambda _turns: env, tmp_path, KEYED_PROVIDER, [], "-p", "hi")
    assert env.server.requests[0]["headers"]["authorization"] == "Bearer key-from-the-extension"
    (env.home / "auth.json").write_text(json.dumps({"mock": {"type": "api_key", "key": "stored-login-key"}}))
    _env, _done, _rows = run_extension(lambda _turns: env, tmp_path, KEYED_PROVIDER, [], "-p", "again")
    assert env.server.requests[1]["headers"]["authorization"] == "Bearer key-from-the-extension"


def test_with_oauth_the_extension_api_key_is_only_the_fallback(pi_env: Any, tmp_path: Path) -> None:
    code = KEYED_PROVIDER.replace(
        '{"apiKey": "key-from-the-extension"}',
        '{"apiKey": "key-from-the-extension", "oauth": {"name": "Mock login"}}',
    )
    env = pi_env([{"blocks": [{"text": "ok"}]}])
    (env.home / "auth.json").write_text(json.dumps({"mock": {"type": "api_key", "key": "stored-login-key"}}))
    _env, _done, _rows = run_extension(lambda _turns: env, tmp_path, code, [], "-p", "hi")
    assert env.server.requests[0]["headers"]["authorization"] == "Bearer stored-login-key"


DYNAMIC_PROVIDER = """
import asyncio, os

def activate(pi):
    async def fetch():
        await asyncio.sleep(0)
        return [{"id": "dyn-1", "name": "Dynamic One", "contextWindow": 32000}, {"id": 7, "name": None, "contextWindow": "x"}]

    pi.register_provider("dyn", {
        "baseUrl": os.environ["DYN_BASE_URL"], "api": "openai-completions", "apiKey": "dyn-key",
        "models": [{"id": "static-1"}],
        "fetchDynamicModels": fetch,
        "usage": {"fetchUsage": lambda: None},
    })
"""


def test_fetch_dynamic_models_adds_the_rows_it_returns(pi_env: Any, tmp_path: Path) -> None:
    env = pi_env([{"blocks": [{"text": "dynamic answer"}]}])
    ext = tmp_path / "ext.py"
    ext.write_text(DYNAMIC_PROVIDER)
    extra = {"DYN_BASE_URL": env.server.base_url + "/v1"}
    listed = env.run("-e", str(ext), "--list-models", "dyn", env=extra)
    assert listed.returncode == 0, listed.stderr
    listing = listed.stdout + listed.stderr  # pi lists models on stderr
    assert "dyn-1" in listing and "static-1" in listing
    assert "dropped" in listed.stderr and "usage" in listed.stderr  # one warning each, not a failed load
    done = env.run("-e", str(ext), "--provider", "dyn", "--model", "dyn-1", "-p", "hi", env=extra)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "dynamic answer"
    assert env.server.requests[0]["body"]["model"] == "dyn-1"


ATTRIBUTING = """
def activate(pi):
    async def relay(args, ctx):
        await pi.send_user_message("relayed by the extension", {"attribution": "agent"})
        await pi.send_user_message("said for the user")
    pi.register_command("relay", {"description": "send user messages", "handler": relay})
"""


def test_send_user_message_records_its_attribution(pi_env: Any, tmp_path: Path) -> None:
    turns = [{"blocks": [{"text": "one"}]}, {"blocks": [{"text": "two"}]}]
    env, _done, _rows = run_extension(pi_env, tmp_path, ATTRIBUTING, turns, "-p", "/relay")
    users = [line["message"] for line in env.session_lines() if line.get("message", {}).get("role") == "user"]
    assert [(m["content"][0]["text"], m.get("attribution")) for m in users] == [
        ("relayed by the extension", "agent"),
        ("said for the user", "user"),
    ]
    assert "attribution" not in json.dumps(env.server.requests[-1]["body"])  # recorded, not sent
