"""The built-in catalog: its data file, lazy loading, and what a key in the environment offers."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.clean_env import PI_CATALOG
from support.clean_env import boot_app
from support.clean_env import clean_environment
from support.modules import load_module

from piko.plugins.providers import catalog

REPO = Path(__file__).resolve().parents[2]
PI_PREFIX = Path("/work/scratch/pi073")


def raw() -> dict:
    """The shipped catalog file."""
    return json.loads(catalog.CATALOG_PATH.read_text(encoding="utf-8"))


def pi_raw() -> dict:
    """pi 0.73.1's catalog: what the registry tests run with (``clean_environment`` selects it)."""
    return json.loads(PI_CATALOG.read_text(encoding="utf-8"))


def test_catalog_file_has_the_documented_schema() -> None:
    data = raw()
    # the shared catalog (pi-ai 0.80.10: 36 providers, 1072 models), byte for byte
    assert data["source"]["package"].endswith("pi-ai@0.80.10")
    assert len(data["providers"]) == 36
    assert sum(len(p["models"]) for p in data["providers"].values()) == 1072
    for name, entry in data["providers"].items():
        assert {"name", "defaultBaseUrl", "apis", "envKeys", "oauth", "models"} <= set(entry), name
        if entry["models"]:
            assert set(entry["apis"]) >= {m["api"] for m in entry["models"]}
        for model in entry["models"]:
            assert {
                "id",
                "name",
                "api",
                "baseUrl",
                "reasoning",
                "input",
                "cost",
                "contextWindow",
                "maxTokens",
            } <= set(model)
            assert "provider" not in model
            assert set(model["cost"]) >= {"input", "output", "cacheRead", "cacheWrite"}
    readme = (catalog.CATALOG_PATH.parent / "README.md").read_text(encoding="utf-8")
    assert "Provenance" in readme and "scripts/regenerate_models.py" in readme


def test_importing_the_plugin_reads_nothing() -> None:
    code = (
        "import sys, piko.plugins.providers.catalog as c;"
        "print(c._read_catalog.cache_info().currsize, 'piko.data.messages' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["0", "False"]


def test_provider_configs_carry_defaults_keys_and_raw_data() -> None:
    configs = {c.name: c for c in catalog.provider_configs(pi_raw())}
    anthropic = configs["anthropic"]
    assert anthropic.env_keys == ["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"]
    assert anthropic.base_url == "https://api.anthropic.com" and anthropic.api == "anthropic-messages"
    assert anthropic.display_name == "Anthropic" and anthropic.extra["oauth"] is True
    assert configs["github-copilot"].env_keys == ["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"]
    # raw settings the API plugins read from the environment
    assert "AZURE_OPENAI_RESOURCE_NAME" in configs["azure-openai-responses"].extra["extraEnv"]
    assert configs["cloudflare-ai-gateway"].extra["extraEnv"] == [
        "CLOUDFLARE_ACCOUNT_ID",
        "CLOUDFLARE_GATEWAY_ID",
    ]
    assert "{CLOUDFLARE_ACCOUNT_ID}" in configs["cloudflare-workers-ai"].base_url
    assert {"AWS_REGION", "AWS_PROFILE"} <= set(pi_raw()["providers"]["amazon-bedrock"]["extraEnv"])
    assert catalog.provider_entry("nope") is None
    assert anthropic.models == []  # built when the registry first needs them
    model = next(m for m in anthropic.models_factory() if m.id == "claude-sonnet-4-5")
    assert model.provider == "anthropic" and model.reasoning and "image" in model.input
    assert model.cost.input == 3 and model.cost.cache_write == 3.75 and model.context_window == 200000
    copilot = configs["github-copilot"].models_factory()[0]
    assert copilot.headers and "Copilot-Integration-Id" in copilot.headers


def test_only_anthropic_key_offers_anthropic_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clean_environment(monkeypatch, tmp_path, ANTHROPIC_API_KEY="sk-ant-test")
    registry = boot_app(tmp_path).model_registry
    available = registry.available_models()
    assert {m.provider for m in available} == {"anthropic"}
    assert {m.id for m in available} == {m["id"] for m in pi_raw()["providers"]["anthropic"]["models"]}
    assert registry.api_key("anthropic") == "sk-ant-test"
    assert registry.api_key("openai") is None
    auth = registry.request_auth(registry.find("anthropic", "claude-sonnet-4-5"))
    assert auth.ok and auth.api_key == "sk-ant-test" and auth.headers is None


def test_only_openai_key_offers_openai_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clean_environment(monkeypatch, tmp_path, OPENAI_API_KEY="sk-openai-test")
    registry = boot_app(tmp_path).model_registry
    available = registry.available_models()
    assert {m.provider for m in available} == {"openai"}
    assert len(available) == len(pi_raw()["providers"]["openai"]["models"])
    assert registry.api_key("openai") == "sk-openai-test"
    gpt = registry.find("openai", "gpt-4o")
    assert gpt is not None and gpt.api == "openai-responses" and gpt.base_url == "https://api.openai.com/v1"


def test_oauth_token_variable_wins_over_api_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clean_environment(
        monkeypatch, tmp_path, ANTHROPIC_API_KEY="sk-ant-key", ANTHROPIC_OAUTH_TOKEN="sk-ant-oat-token"
    )
    assert boot_app(tmp_path).model_registry.api_key("anthropic") == "sk-ant-oat-token"


def test_credential_chains_of_bedrock_and_vertex(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    adc = tmp_path / "adc.json"
    adc.write_text("{}", encoding="utf-8")
    clean_environment(
        monkeypatch,
        tmp_path,
        AWS_ACCESS_KEY_ID="AKIA",
        GOOGLE_APPLICATION_CREDENTIALS=str(adc),
        GOOGLE_CLOUD_PROJECT="p",
    )
    registry = boot_app(tmp_path).model_registry
    assert not registry.has_auth("amazon-bedrock")  # the secret key is missing
    assert not registry.has_auth("google-vertex")  # no location yet
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("GOOGLE_CLOUD_LOCATION", "us-central1")
    assert registry.api_key("amazon-bedrock") == "<authenticated>"
    assert registry.api_key("google-vertex") == "<authenticated>"
    assert {m.provider for m in registry.available_models()} == {"amazon-bedrock", "google-vertex"}


def test_providers_without_an_api_plugin_are_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clean_environment(monkeypatch, tmp_path)
    app = boot_app(tmp_path)
    registry = app.model_registry
    codex = registry.find("openai-codex", "gpt-5.1")
    assert codex is not None and codex.api == "openai-codex-responses"
    assert app.registries.provider_apis.get("openai-codex-responses") is None
    assert registry.stream_function(codex) is None
    assert len(registry.all_models()) >= 969


def test_blocking_the_catalog_leaves_no_builtin_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clean_environment(monkeypatch, tmp_path, ANTHROPIC_API_KEY="k", PIKO_DISABLE_PLUGINS="providers.catalog")
    registry = boot_app(tmp_path).model_registry
    assert registry.all_models() == []


# -- the regeneration script -------------------------------------------------------------------


def _script():
    return load_module(REPO / "scripts" / "regenerate_models.py")


def test_script_reads_environment_variables_from_javascript(tmp_path: Path) -> None:
    script = _script()
    source = """
function helper() { return process.env.HELPER_FILE || getProcEnv("HELPER_FILE"); }
export function getEnvApiKey(provider) {
    if (provider === "cloud-x") {
        if (process.env.CLOUD_X_PROFILE || (process.env.CLOUD_X_ID && process.env.CLOUD_X_SECRET)) { return "y"; }
    }
    if (provider === "vertex-y") {
        const ok = helper();
        if (ok && process.env.Y_PROJECT) { return "<authenticated>"; }
    }
    return undefined;
}
"""
    assert script.special_case_env(source) == {
        "cloud-x": ["CLOUD_X_PROFILE", "CLOUD_X_ID", "CLOUD_X_SECRET"],
        "vertex-y": ["Y_PROJECT", "HELPER_FILE"],
    }
    (tmp_path / "providers").mkdir()
    (tmp_path / "providers" / "cloud-x.js").write_text(
        "const r = process.env.CLOUD_X_REGION; const p = process.env.HTTPS_PROXY; process.env.PI_CACHE_RETENTION;",
        encoding="utf-8",
    )
    models = [{"baseUrl": "https://{ACCOUNT_ID}.example/v1"}]
    extra = script.extra_env("cloud-x", models, tmp_path, {"cloud-x": ["CLOUD_X_PROFILE"]}, {"CLOUD_X_KEY"})
    assert extra == ["CLOUD_X_PROFILE", "ACCOUNT_ID", "CLOUD_X_REGION"]


@pytest.mark.skipif(
    shutil.which("node") is None or not (PI_PREFIX / "node_modules" / "@mariozechner" / "pi-ai").is_dir(),
    reason="needs node and pi 0.73.1 installed in /work/scratch/pi (npm install @mariozechner/pi-coding-agent@0.73.1)",
)
def test_regeneration_reproduces_pi_0_73_1s_catalog(tmp_path: Path) -> None:
    out = tmp_path / "models.json"
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "regenerate_models.py"), str(PI_PREFIX), "-o", str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "31 providers, 969 models" in done.stdout
    pi_catalog = Path(__file__).resolve().parent / "fixtures" / "catalog-pi-0.73.1" / "models.json"
    fresh, shipped = (
        json.loads(out.read_text(encoding="utf-8")),
        json.loads(pi_catalog.read_text(encoding="utf-8")),
    )
    fresh["source"].pop("generatedAt")
    shipped["source"].pop("generatedAt")
    assert fresh == shipped


# What one start-up of the catalog plugin reads: the providers, and whether the catalog was parsed.
STARTUP_READ = (
    "import json, piko.plugins.providers.catalog as c;"
    "configs = c.provider_configs();"
    "print(json.dumps({'parsed': c._read_catalog.cache_info().currsize,"
    " 'providers': {p.name: [p.base_url, p.api, p.env_keys, p.display_name, p.extra] for p in configs},"
    " 'models': {p.name: [m.id for m in p.models_factory()] for p in configs if p.models_factory},"
    " 'names': c.provider_names(), 'entry': c.provider_entry('second')}))"
)


def _start_up(catalog_file: Path, cache: Path, **env: str) -> dict:
    child = {
        **clean_env_vars(),
        "PIKO_CACHE_DIR": str(cache),
        "PIKO_MODELS_CATALOG": str(catalog_file),
        **env,
    }
    out = subprocess.run(
        [sys.executable, "-c", STARTUP_READ],
        capture_output=True,
        text=True,
        check=True,
        env=child,
        timeout=60,
    ).stdout
    return json.loads(out)


def clean_env_vars() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k not in ("PIKO_NO_CACHE", "PIKO_MODELS_CATALOG")}


def _small_catalog(path: Path, second_name: str = "Second") -> None:
    model = {"id": "m1", "name": "M1", "api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1"}
    path.write_text(
        json.dumps(
            {
                "providers": {
                    "first": {"name": "First", "envKeys": ["FIRST_KEY"], "models": [model]},
                    "second": {
                        "name": second_name,
                        "defaultBaseUrl": "http://x",
                        "apis": ["a"],
                        "models": [],
                    },
                }
            }
        ),
        encoding="utf-8",
    )


def test_a_start_with_the_providers_cached_does_not_parse_the_catalog(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _start_up(catalog.CATALOG_PATH, cache)  # builds the summary
    again = _start_up(catalog.CATALOG_PATH, cache)
    listing = _start_up(catalog.CATALOG_PATH, cache, PIKO_NO_CACHE="1")  # parsed, as before the cache
    assert [p.name for p in catalog.provider_configs(raw())] == listing["names"] == again["names"]
    assert again["providers"] == first["providers"] == listing["providers"]
    assert again["models"] == listing["models"] and sum(map(len, again["models"].values())) == 1072
    assert first["parsed"] == 1 and listing["parsed"] == 1
    # the models above were built, so the catalog was parsed then; before that, only the summary:
    code = "import piko.plugins.providers.catalog as c; c.provider_configs(); c.provider_names(); print(c._read_catalog.cache_info().currsize)"
    child = {**clean_env_vars(), "PIKO_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=child)
    assert out.stdout.split() == ["0"]


def test_the_cached_providers_follow_every_change_of_the_catalog_file(tmp_path: Path) -> None:
    cache, path = tmp_path / "cache", tmp_path / "models.json"
    _small_catalog(path)
    assert _start_up(path, cache)["entry"]["name"] == "Second"
    _small_catalog(path, "Renamed")  # same size, new content
    assert path.stat().st_size == len(path.read_bytes())
    seen = _start_up(path, cache)
    assert seen["entry"]["name"] == "Renamed" and seen["parsed"] == 1
    assert seen["providers"]["second"][0] == "http://x" and seen["models"] == {"first": ["m1"]}
    other = tmp_path / "other.json"  # another catalog file: its own providers
    other.write_text(json.dumps({"providers": {"third": {"models": []}}}), encoding="utf-8")
    assert _start_up(other, cache)["names"] == ["third"]
    assert _start_up(path, cache)["names"] == ["first", "second"]


def test_a_broken_or_unwritable_summary_cache_only_costs_a_parse(tmp_path: Path) -> None:
    cache, path = tmp_path / "cache", tmp_path / "models.json"
    _small_catalog(path)
    _start_up(path, cache)
    (summary,) = cache.glob("catalog-providers-*.json")
    summary.write_text("{not json", encoding="utf-8")
    assert _start_up(path, cache)["names"] == ["first", "second"]
    assert json.loads(summary.read_text(encoding="utf-8"))["version"] == catalog.SUMMARY_VERSION
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be", encoding="utf-8")
    assert _start_up(path, blocked)["names"] == ["first", "second"]
    assert _start_up(path, tmp_path / "none", PIKO_NO_CACHE="1")["parsed"] == 1
    assert not (tmp_path / "none").exists()


def test_one_key_builds_only_that_providers_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clean_environment(monkeypatch, tmp_path, ANTHROPIC_API_KEY="sk-ant-test")
    registry = boot_app(tmp_path).model_registry
    assert {m.provider for m in registry.available_models()} == {"anthropic"}
    assert registry.key_variable("openai") == "OPENAI_API_KEY" and not registry.has_auth("google")
    # the credential checks of every provider (the auth plugin's included) built no other models
    assert "openai" in registry._waiting and "anthropic" not in registry._waiting
    assert registry.env_keys("openai") == ["OPENAI_API_KEY"] and "openai" in registry._waiting
    assert "google" not in registry._waiting  # has_auth asks for the provider itself: built then
