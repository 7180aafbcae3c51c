"""Command-line behaviour outside the interactive mode: @files, stdin, messages, models, thinking,
tools, sessions, API keys, errors and exit codes, as pi behaves (checked against the real pi)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from agent_harness import MOCK
from agent_harness import OK

# a 1x1 PNG
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def _with_images(data: dict[str, Any]) -> None:
    data["providers"]["mock"]["models"][0]["input"] = ["text", "image"]


def _header(request: dict[str, Any], name: str) -> str | None:
    return next((v for k, v in request["headers"].items() if k.lower() == name), None)


# ---------------------------------------------------------------------------
# The first message: @files, piped stdin, several messages
# ---------------------------------------------------------------------------


def test_file_arguments_text_and_image(pi_env: Any) -> None:
    env = pi_env(OK)
    env.models(_with_images)
    (env.work / "shot.png").write_bytes(PNG)
    (env.work / "empty.txt").write_text("")
    done = env.run("-p", *MOCK, "@notes.txt", "@empty.txt", "@shot.png", "What is this?")
    assert done.returncode == 0, done.stderr
    (user,) = [m for m in env.server.requests[0]["body"]["messages"] if m["role"] == "user"]
    text, image = user["content"]
    assert text == {
        "type": "text",
        "text": f'<file name="{env.work / "notes.txt"}">\nhello world\nsecond line\n\n</file>\n'
        f'<file name="{env.work / "shot.png"}"></file>\nWhat is this?',
    }
    assert image == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
    }


def _wide_png(width: int, height: int) -> bytes:
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, "PNG")
    return out.getvalue()


@pytest.mark.parametrize("auto_resize", [True, False])
def test_large_image_arguments_are_resized_with_pi_s_note(pi_env: Any, auto_resize: bool) -> None:
    import io

    from PIL import Image

    env = pi_env(OK)
    env.models(_with_images)
    original = _wide_png(3000, 10)
    (env.work / "wide.png").write_bytes(original)
    env.settings({"images": {"autoResize": auto_resize}})
    done = env.run("-p", *MOCK, "@wide.png", "look")
    assert done.returncode == 0, done.stderr
    (user,) = [m for m in env.server.requests[0]["body"]["messages"] if m["role"] == "user"]
    text, image = user["content"]
    url = image["image_url"]["url"]
    sent = base64.b64decode(url.split(",", 1)[1])
    if auto_resize:
        note = (
            "[Image: original 3000x10, displayed at 2000x7. "
            "Multiply coordinates by 1.50 to map to original image.]"
        )
        assert text["text"] == f'<file name="{env.work / "wide.png"}">{note}</file>\nlook'
        assert Image.open(io.BytesIO(sent)).size == (2000, 7)
    else:
        assert text["text"] == f'<file name="{env.work / "wide.png"}"></file>\nlook'
        assert sent == original


def test_missing_file_argument_fails_before_any_request(pi_env: Any) -> None:
    env = pi_env(OK)
    done = env.run("-p", *MOCK, "@nope.txt", "hi")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"Error: File not found: {env.work / 'nope.txt'}\n"
    assert env.server.requests == [] and env.sessions() == []


def test_file_argument_finds_macos_screenshot_names(pi_env: Any) -> None:
    env = pi_env(OK)
    (env.work / "Shot 1.02.03\u202fPM.txt").write_text("narrow space")
    assert env.run("-p", *MOCK, "@Shot 1.02.03 PM.txt").returncode == 0
    assert "narrow space" in env.user_texts()[0]


def test_piped_stdin_means_print_mode_and_leads_the_first_message(pi_env: Any) -> None:
    env = pi_env(OK * 2)
    done = env.run(*MOCK, "@notes.txt", "first", "second", stdin="\n  piped text \n\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"  # printed, as -p does: no interactive mode with piped stdin
    assert env.user_texts(-1) == [
        f'piped text<file name="{env.work / "notes.txt"}">\nhello world\nsecond line\n\n</file>\nfirst',
        "second",
    ]


def test_blank_stdin_is_ignored(pi_env: Any) -> None:
    env = pi_env(OK)
    assert env.run("-p", *MOCK, "only this", stdin=" \n\t\n").returncode == 0
    assert env.user_texts() == ["only this"]


def test_each_message_is_a_prompt_in_turn(pi_env: Any) -> None:
    env = pi_env([{"blocks": [{"text": f"answer {i}"}]} for i in range(3)])
    done = env.run("-p", *MOCK, "one", "two", "three")
    assert done.stdout == "answer 2\n"
    assert [len(r["body"]["messages"]) for r in env.server.requests] == [2, 4, 6]
    assert env.user_texts(-1) == ["one", "two", "three"]


# ---------------------------------------------------------------------------
# Model, thinking, tools
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "model", "budget"),
    [
        (("--model", "mock-anthropic/mock-claude"), "mock-claude", 8192),  # default thinking: medium
        (("--model", "mock-claude:high"), "mock-claude", 16384),
        (("--provider", "mock-anthropic", "--model", "mock-claude:low"), "mock-claude", 2048),
        (("--model", "mock-claude:high", "--thinking", "minimal"), "mock-claude", 1024),  # --thinking wins
        (("--models", "mock-claude:low"), "mock-claude", 2048),
        (("--model", "mock-claude", "--thinking", "off"), "mock-claude", None),
    ],
)
def test_model_patterns_and_thinking(
    pi_env: Any, args: tuple[str, ...], model: str, budget: int | None
) -> None:
    env = pi_env(OK)
    done = env.run("-p", *args, "hi")
    assert done.returncode == 0, done.stderr
    body = env.server.requests[0]["body"]
    assert body["model"] == model
    assert (body.get("thinking") or {}).get("budget_tokens") == budget


def test_unknown_model_and_custom_model_id(pi_env: Any) -> None:
    env = pi_env(OK)
    done = env.run("-p", "--model", "nope", "hi")
    assert (done.returncode, done.stderr) == (
        1,
        'Error: Model "nope" not found. Use --list-models to see available models.\n',
    )
    done = env.run("-p", "--model", "mock/custom-id", "hi")
    assert done.returncode == 0
    assert done.stderr == 'Warning: Model "custom-id" not found for provider "mock". Using custom model id.\n'
    assert env.server.requests[0]["body"]["model"] == "custom-id"


def test_invalid_thinking_level_warns_and_runs(pi_env: Any) -> None:
    env = pi_env(OK)
    done = env.run("-p", "--thinking", "bogus", "--model", "mock-claude", "hi")
    assert done.returncode == 0
    assert (
        done.stderr
        == 'Warning: Invalid thinking level "bogus". Valid values: off, minimal, low, medium, high, xhigh, max\n'
    )
    assert env.server.requests[0]["body"]["thinking"]["budget_tokens"] == 8192


@pytest.mark.parametrize(
    ("flags", "tools"),
    [
        ((), ["read", "bash", "edit", "write"]),
        (("--tools", "ls,read,grep"), ["ls", "read", "grep"]),
        (("-t", "bash"), ["bash"]),
        (("--no-tools",), []),
        (("-nt",), []),
        (("--no-builtin-tools",), []),
        (("--tools", "read,*rep"), ["read", "grep"]),
    ],
)
def test_tool_flags(pi_env: Any, flags: tuple[str, ...], tools: list[str]) -> None:
    env = pi_env(OK)
    assert env.run("-p", *flags, *MOCK, "hi").returncode == 0
    assert env.tool_names() == tools


def test_tools_pattern_matching_nothing_yet_is_not_unknown(pi_env: Any) -> None:
    """A ``*`` pattern may name tools a plugin registers later (MCP servers connecting)."""
    env = pi_env(OK)
    done = env.run("-p", "--tools", "read,mcp__later__*", *MOCK, "hi")
    assert done.returncode == 0
    assert "Unknown tool" not in done.stderr
    assert env.tool_names() == ["read"]


def test_no_builtin_tools_keeps_extension_tools(pi_env: Any) -> None:
    env = pi_env(OK * 2)
    ext = env.write(
        "hello_ext.py",
        "def activate(pi):\n"
        "    pi.register_tool(name='hello', label='Hello', description='Say hello',\n"
        "                     parameters={'type': 'object', 'properties': {}},\n"
        "                     execute=lambda *a: {'content': [{'type': 'text', 'text': 'hi'}]})\n",
    )
    done = env.run("-p", "-e", str(ext), "--no-builtin-tools", *MOCK, "hi")
    assert done.returncode == 0, done.stderr
    assert env.tool_names() == ["hello"]
    assert env.run("-p", "-e", str(ext), *MOCK, "hi").returncode == 0
    assert env.tool_names(1) == ["read", "bash", "edit", "write", "hello"]


# ---------------------------------------------------------------------------
# Sessions
# ---------------------------------------------------------------------------


def _header_of(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text().splitlines()[0])


def test_no_session_writes_nothing(pi_env: Any) -> None:
    env = pi_env(OK)
    assert env.run("-p", "--no-session", *MOCK, "hi").returncode == 0
    assert env.sessions() == []


def test_continue_session_by_id_and_fork(pi_env: Any) -> None:
    env = pi_env([{"blocks": [{"text": f"a{i}"}]} for i in range(5)])
    assert env.run("-p", *MOCK, "first").returncode == 0
    (first,) = env.sessions()
    session_id = _header_of(first)["id"]
    assert env.run("-p", "-c", "again").returncode == 0  # model restored from the session
    assert env.user_texts(-1) == ["first", "again"]
    assert env.run("-p", "--session", session_id[:8], "by id").returncode == 0
    assert env.user_texts(-1) == ["first", "again", "by id"]
    assert env.run("-p", "--session", str(first), "by path").returncode == 0
    assert len(env.sessions()) == 1
    assert env.run("-p", "--fork", session_id[:8], "forked").returncode == 0
    forks = [p for p in env.sessions() if p != first]
    assert len(forks) == 1 and _header_of(forks[0])["parentSession"] == str(first)
    assert env.user_texts(-1) == ["first", "again", "by id", "by path", "forked"]


def test_session_errors(pi_env: Any) -> None:
    env = pi_env(OK)
    done = env.run("-p", "--session", "zzzz", *MOCK, "hi")
    assert (done.returncode, done.stderr) == (1, "No session found matching 'zzzz'\n")
    # as pi: the session is looked up before @file arguments are read
    done = env.run("-p", "--session", "zzzz", *MOCK, "@missing.txt", "hi")
    assert (done.returncode, done.stderr) == (1, "No session found matching 'zzzz'\n")
    done = env.run("-p", "--fork", "abc", "--session", "abc", "-c", *MOCK, "hi")
    assert (done.returncode, done.stderr) == (
        1,
        "Error: --fork cannot be combined with --session, --continue\n",
    )
    done = env.run("-p", "--fork", "abc", "--no-session", *MOCK, "hi")
    assert (done.returncode, done.stderr) == (1, "Error: --fork cannot be combined with --no-session\n")
    assert env.server.requests == []


def test_session_dir_flag_env_and_setting(pi_env: Any) -> None:
    env = pi_env(OK * 3)
    env.settings({"sessionDir": str(env.work / "from-settings")})
    assert env.run("-p", *MOCK, "hi").returncode == 0
    assert len(list((env.work / "from-settings").glob("*.jsonl"))) == 1
    assert (
        env.run("-p", *MOCK, "hi", env={"PI_CODING_AGENT_SESSION_DIR": str(env.work / "from-env")}).returncode
        == 0
    )
    assert len(list((env.work / "from-env").glob("*.jsonl"))) == 1
    flag_dir = env.work / "from-flag"
    done = env.run(
        "-p",
        "--session-dir",
        str(flag_dir),
        *MOCK,
        "hi",
        env={"PI_CODING_AGENT_SESSION_DIR": str(env.work / "from-env")},
    )
    assert done.returncode == 0
    assert len(list(flag_dir.glob("*.jsonl"))) == 1
    assert len(list((env.work / "from-env").glob("*.jsonl"))) == 1


# ---------------------------------------------------------------------------
# API keys, model listing, errors and exit codes
# ---------------------------------------------------------------------------


def test_api_key_needs_a_model_from_the_command_line(pi_env: Any) -> None:
    env = pi_env(OK * 2)
    done = env.run("-p", "--api-key", "sk-test", "hi")
    assert (done.returncode, done.stderr) == (
        1,
        "Error: --api-key requires a model to be specified via --model, --provider/--model, or --models\n",
    )
    assert env.server.requests == []
    assert env.run("-p", "--api-key", "sk-test", *MOCK, "hi").returncode == 0
    assert _header(env.server.requests[0], "authorization") == "Bearer sk-test"
    assert env.run("-p", "--api-key", "sk-scope", "--models", "mock-1", "hi").returncode == 0
    assert _header(env.server.requests[1], "authorization") == "Bearer sk-scope"


def test_list_models(pi_env: Any) -> None:
    env = pi_env(OK)
    done = env.run("--list-models")
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "provider        model        context  max-out  thinking  images",
        "mock            mock-1       128K     16.4K    no        no    ",
        "mock-anthropic  mock-claude  200K     32K      yes       no    ",
    ]
    filtered = env.run("--list-models", "claude")
    assert [line.split()[0] for line in filtered.stderr.splitlines()] == ["provider", "mock-anthropic"]


@pytest.mark.parametrize(("arg", "shown"), [("--nope", "--nope"), ("--nope=1", "--nope"), ("-x", "-x")])
def test_unknown_options(pi_env: Any, arg: str, shown: str) -> None:
    env = pi_env(OK)
    done = env.run("-p", arg, *MOCK, "hi")
    assert (done.returncode, done.stdout, done.stderr) == (1, "", f"Error: Unknown option: {shown}\n")


def test_no_models_and_no_key(pi_env: Any) -> None:
    env = pi_env(OK)
    (env.home / "models.json").unlink()
    done = env.run("-p", "hi")
    assert done.returncode == 1 and done.stderr.startswith("No models available.\n")
    assert '"apiKey": "ollama"' in done.stderr  # the example as written, not masked as a secret
    done = env.run("-p", "--model", "anthropic/claude-sonnet-4-5", "hi")
    assert done.returncode == 1 and done.stderr.startswith("No API key found for anthropic.")


def test_provider_error_exits_1_with_the_message(pi_env: Any) -> None:
    env = pi_env([{"status": 400, "error_body": {"error": {"message": "bad request here"}}}])
    done = env.run("-p", *MOCK, "hi")
    assert done.returncode == 1 and done.stdout == ""
    assert "bad request here" in done.stderr


def test_a_broken_models_json_is_reported_with_the_error_it_causes(pi_env: Any) -> None:
    """pi prints only 'Unknown provider'; piko says why the provider is unknown first."""
    env = pi_env(OK)
    (env.home / "models.json").write_text('{"providers": {', encoding="utf-8")
    done = env.run("-p", *MOCK, "hi")
    assert done.returncode == 1 and done.stdout == ""
    warning, _, error = done.stderr.partition("Error: ")
    assert warning.startswith("Warning: errors loading models.json:\nFailed to parse models.json")
    assert error == 'Unknown provider "mock". Use --list-models to see available providers/models.\n'
    assert env.server.requests == []
