"""Third-party providers: a company gateway with its own auth header (an installed plugin and an
extension file, through the ``openai-completions`` API to a local server), and a command-backed
provider whose stream is produced by plugin code running a subprocess."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support.clean_env import boot_app
from support.clean_env import clean_environment
from support.llm_server import LLMServer

from piko.data.messages import TextContent
from piko.data.messages import UserMessage
from piko.data.streaming import Context
from piko.data.streaming import StreamOptions

GATEWAY_PLUGIN = '''
"""Corp gateway: every model behind https://llm.corp.example, authenticated by X-Gateway-Key."""
import os

from piko import hookimpl
from piko.data.messages import Model
from piko.platform.registries import ProviderConfig


@hookimpl
def piko_register_providers(register):
    register(ProviderConfig(
        name="corp-gateway",
        display_name="Corp LLM Gateway",
        base_url=os.environ["CORP_GATEWAY_URL"],
        api="openai-completions",
        api_key="CORP_GATEWAY_TOKEN",
        headers={"X-Gateway-Key": "CORP_GATEWAY_KEY", "X-Gateway-Team": "platform"},
        models=[Model(id="corp-gpt", name="Corp GPT", context_window=64000, max_tokens=4000)],
    ))
'''

GATEWAY_EXTENSION = """
import os


def activate(pi):
    pi.register_provider("corp-ext", {
        "name": "Corp (extension)",
        "baseUrl": os.environ["CORP_GATEWAY_URL"],
        "api": "openai-completions",
        "apiKey": "!printf sk-from-vault",
        "authHeader": True,
        "headers": {"X-Gateway-Key": "CORP_GATEWAY_KEY"},
        "models": [{"id": "ext-model", "headers": {"X-Model-Route": "blue"}}],
    })
"""

# The child program a command-backed provider runs: reads the request on stdin, answers JSON lines.
CHILD = r"""
import json, sys
request = json.load(sys.stdin)
for word in ("You", " said:", " " + request["prompt"]):
    print(json.dumps({"delta": word}), flush=True)
if request["prompt"] == "fail":
    sys.exit(3)
"""

COMMAND_EXTENSION = """
import asyncio, json, sys

from piko.plugins.providers.builder import MessageBuilder
from piko.data.messages import text_of

CHILD = {child!r}


async def stream_simple(model, context, options):
    builder = MessageBuilder(model)
    yield builder.start()
    prompt = text_of(context.messages[-1].content)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CHILD,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    proc.stdin.write(json.dumps({{"prompt": prompt}}).encode())
    proc.stdin.close()
    index, event = builder.text_start()
    yield event
    async for line in proc.stdout:
        yield builder.text_delta(index, json.loads(line)["delta"])
    yield builder.text_end(index)
    code = await proc.wait()
    if code != 0:
        yield builder.error(f"local-llm exited with code {{code}}")
        return
    yield builder.done()


def activate(pi):
    pi.register_provider("local-command", {{
        "baseUrl": "https://command-provider.invalid/",
        "apiKey": "unused-by-extension",
        "api": "local-command-api",
        "streamSimple": stream_simple,
        "models": [{{"id": "local-command-model", "name": "Local command", "maxTokens": 16000}}],
    }})
"""


def install_distribution(site: Path) -> None:
    """An installed distribution ``corp-gateway`` with a ``piko`` entry point (as pip leaves it)."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "corp_gateway_piko.py").write_text(GATEWAY_PLUGIN, encoding="utf-8")
    info = site / "corp_gateway-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: corp-gateway\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text("[piko]\ncorp-gateway = corp_gateway_piko\n", encoding="utf-8")


async def collect(stream: Any) -> list[Any]:
    return [event async for event in stream]


def run_stream(registry: Any, model: Any, prompt: str) -> list[Any]:
    auth = registry.request_auth(model)
    assert auth.ok, auth.error
    options = StreamOptions(api_key=auth.api_key, headers=dict(auth.headers or {}))
    context = Context(
        system_prompt="Be brief.", messages=[UserMessage(content=[TextContent(text=prompt)], timestamp=1)]
    )
    stream = registry.stream_function(model)
    assert stream is not None
    return asyncio.run(collect(stream(model, context, options)))


def final_text(events: list[Any]) -> str:
    final = events[-1].final
    return "".join(b.text for b in final.content if isinstance(b, TextContent))


def test_installed_gateway_plugin_sends_its_auth_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    install_distribution(site)
    monkeypatch.syspath_prepend(str(site))
    with LLMServer([{"blocks": [{"text": "Hello from the gateway."}]}]) as server:
        clean_environment(
            monkeypatch, tmp_path,
            CORP_GATEWAY_URL=server.base_url + "/v1", CORP_GATEWAY_TOKEN="sk-corp", CORP_GATEWAY_KEY="gk-secret",
        )  # fmt: skip
        app = boot_app(tmp_path)
        assert app.pm.infos["corp-gateway"].origin == "distribution"
        registry = app.model_registry
        model = registry.find("corp-gateway", "corp-gpt")
        assert model is not None and model.api == "openai-completions" and model.context_window == 64000
        assert registry.display_name("corp-gateway") == "Corp LLM Gateway"
        assert "corp-gateway/corp-gpt" in [m.key for m in registry.available_models()]
        events = run_stream(registry, model, "hi")
        assert events[-1].type == "done" and final_text(events) == "Hello from the gateway."
        [request] = server.requests
        assert request["path"] == "/v1/chat/completions"
        assert request["headers"]["x-gateway-key"] == "gk-secret"  # resolved from the variable it names
        assert request["headers"]["x-gateway-team"] == "platform"
        assert request["headers"]["authorization"] == "Bearer sk-corp"
        assert request["body"]["model"] == "corp-gpt"


def test_gateway_extension_with_auth_header_and_model_headers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extension = tmp_path / "corp_ext.py"
    extension.write_text(GATEWAY_EXTENSION, encoding="utf-8")
    with LLMServer([{"blocks": [{"text": "ok"}]}]) as server:
        clean_environment(
            monkeypatch, tmp_path, CORP_GATEWAY_URL=server.base_url + "/v1", CORP_GATEWAY_KEY="gk-2"
        )
        registry = boot_app(tmp_path, extensions=[str(extension)]).model_registry
        model = registry.find("corp-ext", "ext-model")
        assert model is not None and model.headers is None
        assert registry.display_name("corp-ext") == "Corp (extension)"
        events = run_stream(registry, model, "hi")
        assert final_text(events) == "ok"
        headers = server.requests[0]["headers"]
        assert headers["x-gateway-key"] == "gk-2"
        assert headers["x-model-route"] == "blue"
        assert headers["authorization"] == "Bearer sk-from-vault"


def test_models_json_is_laid_over_a_plugins_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """models.json registers last, over what plugins registered: the user's fields win (as they do
    over a built-in provider in pi), its models are added, and the plugin's models stay."""
    site = tmp_path / "site"
    install_distribution(site)
    monkeypatch.syspath_prepend(str(site))
    agent = clean_environment(
        monkeypatch, tmp_path, CORP_GATEWAY_URL="http://127.0.0.1:9/plugin", CORP_GATEWAY_TOKEN="t"
    )  # fmt: skip
    (agent / "models.json").write_text(json.dumps({"providers": {"corp-gateway": {
        "baseUrl": "http://127.0.0.1:9/models-json", "api": "openai-completions", "apiKey": "k",
        "models": [{"id": "corp-gpt"}, {"id": "json-only"}],
    }}}), encoding="utf-8")  # fmt: skip
    registry = boot_app(tmp_path).model_registry
    assert registry.find("corp-gateway", "corp-gpt").base_url == "http://127.0.0.1:9/models-json"
    assert registry.find("corp-gateway", "json-only").base_url == "http://127.0.0.1:9/models-json"
    assert registry.display_name("corp-gateway") == "Corp LLM Gateway"
    assert [o.label for o in registry.overrides] == ["overrides providers.corp-gateway"]


def test_command_backed_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extension = tmp_path / "local_command.py"
    extension.write_text(COMMAND_EXTENSION.format(child=textwrap.dedent(CHILD)), encoding="utf-8")
    clean_environment(monkeypatch, tmp_path)
    app = boot_app(tmp_path, extensions=[str(extension)])
    registry = app.model_registry
    model = registry.find("local-command", "local-command-model")
    assert model is not None and model.api == "local-command-api" and model.max_tokens == 16000
    assert app.registries.provider_apis.get("local-command-api") is None  # no HTTP API involved
    assert "local-command/local-command-model" in [m.key for m in registry.available_models()]
    events = run_stream(registry, model, "ping")
    assert [e.type for e in events[:2]] == ["start", "text_start"]
    assert events[-1].type == "done" and final_text(events) == "You said: ping"
    failed = run_stream(registry, model, "fail")
    assert failed[-1].type == "error" and failed[-1].final.error_message == "local-llm exited with code 3"
    assert sys.executable  # the child ran with this interpreter
