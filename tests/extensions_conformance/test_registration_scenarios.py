"""The fixtures' registration scenarios: what our ports register, read back from piko.

Registrations need no model: these boot piko in process with the port loaded by the real
loader (``piko_session.boot``) and read the registries, or, where a scenario is about what a
client sees (models, commands), ask a real ``pi --mode rpc``.
"""

from __future__ import annotations

from typing import Any

from ext_conformance_kit import port
from ext_conformance_kit import scenario


def boot(piko_session: Any, ext_id: str) -> tuple[Any, str]:
    """A booted App with the port of ``ext_id`` loaded; (app, the port's plugin name)."""
    path = port(ext_id)
    app = piko_session.boot(extensions=[path])
    return app, path.stem


def handlers_of(app: Any, plugin: str, event: str) -> list[Any]:
    return [h for h in app.dispatcher.handlers(event) if h.plugin == plugin]


def test_minimal_configuration_registers_a_flag_and_a_shortcut(piko_session: Any) -> None:
    expect = scenario("scn-minimal-configuration-001")["expect"]
    app, name = boot(piko_session, "minimal_configuration")
    flags = [f.name for f in app.registries.flags if f.plugin == name]
    shortcuts = [s.key for s in app.registries.shortcuts if s.plugin == name]
    assert set(expect["flags_contains"]) <= set(flags)
    assert set(expect["shortcuts_contains"]) <= set(shortcuts)


def test_minimal_multi_registers_one_tool_and_an_event_hook(piko_session: Any) -> None:
    expect = scenario("scn-minimal-multi-002")["expect"]
    app, name = boot(piko_session, "minimal_multi")
    assert len([t for t in app.registries.tools if t.plugin == name]) == expect["tool_count"]
    for event in expect["event_hooks_contains"]:
        assert len(handlers_of(app, name, event)) == 1


def test_minimal_ui_component_registers_a_message_renderer(piko_session: Any) -> None:
    """scn-minimal-ui-component-001 states no expectation beyond its summary: a message renderer
    for the ``test/plain`` content type."""
    item = scenario("scn-minimal-ui-component-001")
    assert "test/plain" in item["summary"]
    app, name = boot(piko_session, "minimal_ui_component")
    renderer = app.registries.message_renderers.get("test/plain")
    assert renderer is not None and renderer.plugin == name
    assert renderer.renderer(type("M", (), {"content": "plain"})(), {}, None) == "plain"


def test_minimal_mcp_registers_a_server(piko_session: Any) -> None:
    expect = scenario("scn-minimal-mcp-001")["expect"]
    app, name = boot(piko_session, "minimal_mcp")
    api = next(a for a in app.extension_apis if a.name == name)
    assert bool(api.get_mcp_servers()) is expect["mcp_server_registered"]
    assert [s["name"] for s in api.get_mcp_servers()] == ["minimal"]


def test_minimal_provider_registers_its_models(piko_session: Any) -> None:
    item = scenario("scn-minimal-provider-001")
    app, name = boot(piko_session, "minimal_provider")
    provider = app.model_registry.provider(item["provider_id"])
    assert (provider is not None) is item["expect"]["provider_registered"]
    assert provider.plugin == name
    models = [m.id for m in app.model_registry.models_of(item["provider_id"])]
    assert set(item["expect"]["models_contain"]) <= set(models)


def test_sandbox_replaces_bash_with_its_own_label(piko_session: Any) -> None:
    expected = scenario("scn-sandbox-001")["expect"]["tool_registered"]
    app, name = boot(piko_session, "sandbox")
    bash = app.registries.tools.get(expected["name"])
    assert (bash.name, bash.label, bash.plugin) == (expected["name"], expected["label"], name)
    assert app.registries.tools.original("bash") is not None  # the built-in stays callable (ctx.invoke_tool)


def available_models(port_rpc: Any, ext_id: str, env: dict[str, str]) -> list[dict[str, Any]]:
    pi = port_rpc(ext_id, env=env)
    return list(pi.request({"id": "cmd-1", "type": "get_available_models"})["data"]["models"])


def check_provider(port_rpc: Any, scenario_id: str) -> None:
    """A provider scenario: ``get_available_models`` lists its models on its API as the capture
    shows them. (The capture ran without the key variable set, ``no_env``: a provider whose
    ``apiKey`` names a variable counts as configured, in pi and in piko.)"""
    from ext_conformance_kit import golden

    item = scenario(scenario_id)
    expect = item["expect"]
    mine = [
        m
        for m in available_models(port_rpc, item["extension_id"], {})
        if m["provider"] == item["provider_id"]
    ]
    assert set(expect.get("models_contains", [])) <= {m["id"] for m in mine}
    assert {m["api"] for m in mine} == {expect["api"]}
    captured = [m for m in golden(item)[0]["data"]["models"] if m["provider"] == item["provider_id"]]
    fields = ("id", "name", "api", "baseUrl", "contextWindow", "maxTokens", "input", "reasoning", "cost")
    assert [{k: m.get(k) for k in fields} for m in mine] == [{k: m.get(k) for k in fields} for m in captured]


def test_custom_provider_anthropic(port_rpc: Any) -> None:
    check_provider(port_rpc, "scn-custom-provider-anthropic-001")


def test_custom_provider_qwen_cli(port_rpc: Any) -> None:
    check_provider(port_rpc, "scn-custom-provider-qwen-cli-001")


def test_custom_provider_anthropic_streams_with_the_key_it_names(piko_home: Any, llm_server: Any) -> None:
    """The provider's own API (``custom-anthropic-api``, the port's stream function) answers a
    prompt, with the key read from the variable the provider names."""
    from ext_conformance_kit import json_lines

    expect = scenario("scn-custom-provider-anthropic-001")["expect"]
    llm_server.add_turns([{"blocks": [{"text": "ok"}]}])
    env = {expect["api_key_env"]: "custom-key", "CUSTOM_ANTHROPIC_BASE_URL": llm_server.base_url}
    args = ["--mode", "json", "-e", str(port("custom-provider-anthropic")), "--provider", "custom-anthropic"]
    done = piko_home.pi(*args, "--model", "claude-sonnet-4-5", "hi", env=env)
    assert done.returncode == 0, done.stderr
    end = [r for r in json_lines(done.stdout) if r["type"] == "message_end"][-1]["message"]
    assert (end["api"], end["provider"], end["content"][0]["text"]) == (
        "custom-anthropic-api",
        "custom-anthropic",
        "ok",
    )
    headers = {k.lower(): v for k, v in llm_server.requests[0]["headers"].items()}
    assert headers["x-api-key"] == "custom-key"


def test_provider_keys_come_from_the_variables_they_name(piko_session: Any) -> None:
    for scenario_id, ext_id in [
        ("scn-custom-provider-anthropic-001", "custom-provider-anthropic"),
        ("scn-custom-provider-qwen-cli-001", "custom-provider-qwen-cli"),
    ]:
        item = scenario(scenario_id)
        app, _name = boot(piko_session, ext_id)
        assert app.model_registry.provider(item["provider_id"]).api_key == item["expect"]["api_key_env"]
