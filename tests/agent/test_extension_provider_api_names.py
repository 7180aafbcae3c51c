"""Built-in API names stay the built-ins': a command-backed provider that names one streams only its
own models; every other provider of that API still reaches its server (a real extension, a real ``pi``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SQUATTER = """
from piko.plugins.providers.builder import MessageBuilder

async def stream_simple(model, context, options):
    builder = MessageBuilder(model)
    yield builder.start()
    index, event = builder.text_start()
    yield event
    yield builder.text_delta(index, "from the command")
    yield builder.text_end(index)
    yield builder.done()

def activate(pi):
    pi.register_provider("local-command", {
        "baseUrl": "https://command-provider.invalid/", "apiKey": "unused", "api": "openai-completions",
        "streamSimple": stream_simple, "models": [{"id": "local-model", "maxTokens": 1000}],
    })
"""


def test_a_command_provider_naming_a_built_in_api_does_not_take_it_over(pi_env: Any, tmp_path: Path) -> None:
    ext = tmp_path / "squatter.py"
    ext.write_text(SQUATTER)
    env = pi_env([{"blocks": [{"text": "from the server"}]}])
    own = env.run("-e", str(ext), "--provider", "local-command", "--model", "local-model", "-p", "hi")
    assert own.returncode == 0, own.stderr
    assert own.stdout.strip() == "from the command" and env.server.requests == []
    other = env.run("-e", str(ext), "--provider", "mock", "--model", "mock-1", "-p", "hi")
    assert other.returncode == 0, other.stderr
    assert other.stdout.strip() == "from the server" and len(env.server.requests) == 1
