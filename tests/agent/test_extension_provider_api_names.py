"""Built-in API names stay the built-ins': a command-backed provider that names one streams only its
own models; every other provider of that API still reaches its server (a real extension, a real ``pi``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_harness import command_provider
from agent_harness import run_extension

SQUATTER = command_provider('"from the command"', api="openai-completions", model_id="local-model")


def test_a_command_provider_naming_a_built_in_api_does_not_take_it_over(pi_env: Any, tmp_path: Path) -> None:
    turns = [{"blocks": [{"text": "from the server"}]}]
    squatter = ("local-command", "local-model")
    env, own, _rows = run_extension(
        pi_env, tmp_path, SQUATTER, turns, "-p", "hi", name="squatter.py", model=squatter
    )
    assert own.stdout.strip() == "from the command" and env.server.requests == []
    other = env.run(
        "-e", str(tmp_path / "squatter.py"), "--provider", "mock", "--model", "mock-1", "-p", "hi"
    )
    assert other.returncode == 0, other.stderr
    assert other.stdout.strip() == "from the server" and len(env.server.requests) == 1
