"""~/.pi/agent/models.json: custom providers, defaults, value resolution, overrides, bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.clean_env import boot_app
from support.clean_env import clean_environment

from piko.plugins.providers.models_json import schema_errors
from piko.plugins.providers.models_json import strip_json_comments

SAMPLES = Path("/work/shared/conformance/pi-mono-samples/models.json")
SAMPLES_COPY = Path(__file__).resolve().parent / "fixtures" / "list_models" / "samples" / "models.json"


def write_models(agent: Path, data: object) -> Path:
    path = agent / "models.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def registry_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, models: object, **env: str):
    agent = clean_environment(monkeypatch, tmp_path, **env)
    write_models(agent, models)
    return boot_app(tmp_path).model_registry


def test_samples_models_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (SAMPLES if SAMPLES.is_file() else SAMPLES_COPY).read_text(encoding="utf-8")
    registry = registry_for(tmp_path, monkeypatch, text)
    assert registry.diagnostics == []
    mock = registry.find("mock", "mock-1")
    assert mock is not None
    assert (mock.name, mock.api, mock.base_url) == (
        "Mock One",
        "openai-completions",
        "http://127.0.0.1:47811/v1",
    )
    assert (mock.context_window, mock.max_tokens, mock.reasoning, mock.input) == (
        128000,
        16384,
        False,
        ["text"],
    )
    claude = registry.find("mock-anthropic", "mock-claude")
    assert claude is not None and claude.reasoning and claude.api == "anthropic-messages"
    assert [m.key for m in registry.available_models()] == ["mock/mock-1", "mock-anthropic/mock-claude"]
    assert registry.api_key("mock") == "mock-key"
    assert registry.request_auth(mock).api_key == "mock-key"


def test_model_defaults_and_compat_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = registry_for(tmp_path, monkeypatch, {
        "providers": {
            "ollama": {
                "baseUrl": "http://127.0.0.1:11434/v1", "api": "openai-completions", "apiKey": "ollama",
                "compat": {"supportsDeveloperRole": False, "openRouterRouting": {"only": ["a"]}},
                "models": [
                    {"id": "llama3.1:8b"},
                    {"id": "gpt-oss:20b", "name": "GPT OSS", "reasoning": True, "input": ["text", "image"],
                     "contextWindow": 32000, "maxTokens": 4096, "thinkingLevelMap": {"off": None},
                     "cost": {"input": 1, "output": 2, "cacheRead": 0.5, "cacheWrite": 0},
                     "compat": {"supportsReasoningEffort": False, "openRouterRouting": {"order": ["b"]}},
                     "api": "openai-responses", "baseUrl": "http://127.0.0.1:1/v1"},
                ],
            }
        }
    })  # fmt: skip
    plain = registry.find("ollama", "llama3.1:8b")
    assert plain.name == "llama3.1:8b" and plain.context_window == 128000 and plain.max_tokens == 16384
    assert plain.reasoning is False and plain.input == ["text"] and plain.cost.input == 0
    assert plain.compat == {"supportsDeveloperRole": False, "openRouterRouting": {"only": ["a"]}}
    full = registry.find("ollama", "gpt-oss:20b")
    assert (full.name, full.api, full.base_url, full.context_window, full.max_tokens) == (
        "GPT OSS",
        "openai-responses",
        "http://127.0.0.1:1/v1",
        32000,
        4096,
    )
    assert full.reasoning and full.input == ["text", "image"] and full.thinking_level_map == {"off": None}
    assert (full.cost.input, full.cost.output, full.cost.cache_read) == (1, 2, 0.5)
    assert full.compat == {
        "supportsDeveloperRole": False,
        "supportsReasoningEffort": False,
        "openRouterRouting": {"only": ["a"], "order": ["b"]},
    }


def test_api_key_and_header_values_are_resolved_per_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = tmp_path / "count"
    registry = registry_for(tmp_path, monkeypatch, {
        "providers": {
            "proxy": {
                "baseUrl": "http://127.0.0.1:9/v1", "api": "anthropic-messages", "apiKey": "PROXY_KEY",
                "headers": {"x-portkey-api-key": "PORTKEY_KEY", "x-literal": "plain-value",
                            "x-secret": f"!echo -n x >> {counter}; printf 'secret-%s' $(wc -c < {counter})"},
                "authHeader": True,
                "models": [{"id": "m1", "headers": {"x-model": "MODEL_HEADER"}}, {"id": "m2"}],
            },
            "literal": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "UNSET_VARIABLE_NAME",
                        "models": [{"id": "x"}]},
            "command": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "!printf sk-from-command",
                        "models": [{"id": "x"}]},
            "failing": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "!exit 3",
                        "models": [{"id": "x"}]},
        }
    }, PROXY_KEY="sk-proxy", PORTKEY_KEY="pk-123", MODEL_HEADER="mh")  # fmt: skip
    m1 = registry.find("proxy", "m1")
    assert m1.headers is None  # configured headers are not baked into the model
    first = registry.request_auth(m1)
    assert first.ok and first.api_key == "sk-proxy"
    assert first.headers == {
        "x-portkey-api-key": "pk-123", "x-literal": "plain-value", "x-secret": "secret-1",
        "x-model": "mh", "Authorization": "Bearer sk-proxy",
    }  # fmt: skip
    second = registry.request_auth(registry.find("proxy", "m2"))
    assert second.headers["x-secret"] == "secret-2"  # the command runs again for each request
    assert "x-model" not in second.headers
    # shaped like a variable that is not set: no key (pi would send the name itself), and the
    # error names the variable
    assert registry.api_key("literal") is None
    missing = registry.request_auth(registry.find("literal", "x"))
    assert not missing.ok and missing.error == (
        'Failed to resolve API key for provider "literal": the environment variable UNSET_VARIABLE_NAME is not set'
    )
    assert registry.api_key("command") == "sk-from-command"
    failed = registry.request_auth(registry.find("failing", "x"))
    assert (
        not failed.ok
        and failed.error == 'Failed to resolve API key for provider "failing" from shell command: exit 3'
    )
    # presence of a configured key is enough to be listed; commands do not run for that
    assert {m.provider for m in registry.available_models()} == {"proxy", "literal", "command", "failing"}


def test_auth_header_without_key_fails_clearly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = registry_for(tmp_path, monkeypatch, {
        "providers": {"openai": {"headers": {"x-team": "t"}, "authHeader": True}}
    })  # fmt: skip
    auth = registry.request_auth(registry.find("openai", "gpt-4o"))
    assert not auth.ok and auth.error == 'No API key found for "openai"'


def test_overriding_a_builtin_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = registry_for(tmp_path, monkeypatch, {
        "providers": {
            "anthropic": {
                "baseUrl": "http://127.0.0.1:8/proxy",
                "headers": {"x-proxy": "yes"},
                "models": [
                    {"id": "claude-sonnet-4-5", "maxTokens": 999},
                    {"id": "claude-new", "reasoning": True},
                ],
            }
        }
    }, ANTHROPIC_API_KEY="sk-ant")  # fmt: skip
    models = [m for m in registry.all_models() if m.provider == "anthropic"]
    assert len(models) == 24  # 23 built-in, one replaced, one added
    assert {m.base_url for m in models} == {"http://127.0.0.1:8/proxy"}
    replaced = registry.find("anthropic", "claude-sonnet-4-5")
    assert replaced.max_tokens == 999 and replaced.context_window == 128000 and not replaced.reasoning
    new = registry.find("anthropic", "claude-new")
    assert new.api == "anthropic-messages" and new.base_url == "http://127.0.0.1:8/proxy"
    auth = registry.request_auth(new)
    assert auth.api_key == "sk-ant" and auth.headers == {"x-proxy": "yes"}
    assert len([m for m in registry.available_models() if m.provider == "anthropic"]) == 24


def test_builtin_defaults_for_custom_models_without_base_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = registry_for(tmp_path, monkeypatch, {"providers": {"groq": {"models": [{"id": "my-groq"}]}}})
    model = registry.find("groq", "my-groq")
    assert model.api == "openai-completions" and model.base_url == "https://api.groq.com/openai/v1"


def test_model_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = registry_for(tmp_path, monkeypatch, {
        "providers": {
            "openrouter": {
                "compat": {"supportsStore": False},
                "modelOverrides": {
                    "anthropic/claude-sonnet-4": {
                        "name": "Claude Sonnet 4 (Bedrock Route)",
                        "cost": {"input": 99},
                        "contextWindow": 500000,
                        "headers": {"x-route": "ROUTE_VALUE"},
                        "compat": {"openRouterRouting": {"only": ["amazon-bedrock"]}},
                        "thinkingLevelMap": {"xhigh": "max"},
                    },
                    "no/such-model": {"name": "ignored"},
                },
                "models": [{"id": "anthropic/claude-sonnet-4", "name": "Custom wins"}, {"id": "my/model"}],
            }
        }
    }, ROUTE_VALUE="r1")  # fmt: skip
    # a custom model of the same id replaces the overridden built-in entry
    assert registry.find("openrouter", "anthropic/claude-sonnet-4").name == "Custom wins"
    assert registry.find("openrouter", "no/such-model") is None
    assert registry.find("openrouter", "my/model").compat == {"supportsStore": False}

    registry = registry_for(tmp_path / "2", monkeypatch, {
        "providers": {
            "openrouter": {
                "modelOverrides": {
                    "anthropic/claude-sonnet-4": {
                        "name": "Claude Sonnet 4 (Bedrock Route)", "cost": {"input": 99}, "contextWindow": 500000,
                        "headers": {"x-route": "ROUTE_VALUE"}, "reasoning": False,
                        "compat": {"openRouterRouting": {"only": ["amazon-bedrock"]}},
                    }
                }
            }
        }
    }, ROUTE_VALUE="r1")  # fmt: skip
    model = registry.find("openrouter", "anthropic/claude-sonnet-4")
    assert (
        model.name == "Claude Sonnet 4 (Bedrock Route)"
        and model.context_window == 500000
        and not model.reasoning
    )
    assert model.cost.input == 99 and model.cost.output == 15  # partial cost override
    assert model.compat["openRouterRouting"] == {"only": ["amazon-bedrock"]}
    assert registry.request_auth(model).headers == {"x-route": "r1"}
    other = registry.find("openrouter", "openai/gpt-4o")
    assert registry.request_auth(other).headers is None


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"providers": {"x": {"baseUrl": "http://a",, }}}', "Failed to parse models.json: Expecting property name"),
        ('{"providers": []}', "Invalid models.json schema:\n  - providers: must be object"),
        (
            '{"providers": {"x": {"baseUrl": 5, "models": [{"name": "n", "input": ["video"]}]}}}',
            "Invalid models.json schema:\n  - providers.x.baseUrl: must be string\n"
            "  - providers.x.models.0.id: must have required properties id\n"
            '  - providers.x.models.0.input.0: must be equal to one of "text", "image"',
        ),
        ('{"providers": {"x": {"api": "openai-completions"}}}',
         'Failed to load models.json: Provider x: must specify "baseUrl", "headers", "compat", "modelOverrides", or "models".'),
        ('{"providers": {"x": {"apiKey": "k", "api": "a", "models": [{"id": "m"}]}}}',
         'Failed to load models.json: Provider x: "baseUrl" is required when defining custom models.'),
        ('{"providers": {"x": {"baseUrl": "http://a", "apiKey": "k", "models": [{"id": "m"}]}}}',
         'Failed to load models.json: Provider x, model m: no "api" specified. Set at provider or model level.'),
        ('{"providers": {"x": {"baseUrl": "http://a", "apiKey": "k", "api": "a", "models": [{"id": "m", "maxTokens": 0}]}}}',
         "Failed to load models.json: Provider x, model m: invalid maxTokens"),
    ],
)  # fmt: skip
def test_bad_files_are_reported_and_the_rest_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str, expected: str
) -> None:
    agent = clean_environment(monkeypatch, tmp_path, ANTHROPIC_API_KEY="sk-ant")
    path = write_models(agent, content)
    app = boot_app(tmp_path)
    registry = app.model_registry
    registry.load()
    assert len(registry.diagnostics) == 1
    message = registry.diagnostics[0]
    assert message.startswith("errors loading models.json:\n" + expected)
    assert message.endswith(f"\n\nFile: {path}")
    assert registry.find("x", "m") is None
    assert len([m for m in registry.available_models() if m.provider == "anthropic"]) == 23
    assert message in app.diagnostics()


def test_comments_and_trailing_commas() -> None:
    text = '{\n  // a comment\n  "a": "http://x//y", // another\n  "b": [1, 2,],\n  "c": "trailing,]",\n}'
    assert json.loads(strip_json_comments(text)) == {"a": "http://x//y", "b": [1, 2], "c": "trailing,]"}


def test_schema_accepts_every_documented_field() -> None:
    config = {
        "providers": {
            "p": {
                "name": "P", "baseUrl": "u", "apiKey": "k", "api": "a", "headers": {"h": "v"}, "authHeader": True,
                "compat": {"supportsStore": True},
                "models": [{"id": "m", "name": "M", "api": "a", "baseUrl": "u", "reasoning": True,
                            "thinkingLevelMap": {"off": None, "high": "high"}, "input": ["text", "image"],
                            "cost": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0},
                            "contextWindow": 1, "maxTokens": 1, "headers": {}, "compat": {}}],
                "modelOverrides": {"m": {"name": "N", "cost": {"input": 2}, "maxTokens": 3}},
            }
        }
    }  # fmt: skip
    assert schema_errors(config) == []
    assert schema_errors({"providers": {"p": {"models": [{"id": "m", "cost": {"input": 1}}]}}}) == [
        "providers.p.models.0.cost.output: must have required properties output",
        "providers.p.models.0.cost.cacheRead: must have required properties cacheRead",
        "providers.p.models.0.cost.cacheWrite: must have required properties cacheWrite",
    ]


def test_no_models_json_is_fine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clean_environment(monkeypatch, tmp_path)
    registry = boot_app(tmp_path).model_registry
    registry.load()
    assert registry.diagnostics == [] and registry.available_models() == []
