"""Registration hooks: each plugin's ``register`` is its own, import strings resolve lazily."""

from __future__ import annotations

import sys

import pytest

from piko.platform.registries import CommandDefinition
from piko.platform.registries import ModeDefinition
from piko.platform.registries import Registries
from piko.platform.registries import Registry
from piko.platform.registries import ToolDefinition
from piko.platform.registries import resolve_import

EVERYTHING = """
from piko import hookimpl, ToolDefinition, ProviderConfig, Model

@hookimpl
def piko_register_tools(register):
    register(ToolDefinition(name="t_obj", description="as an object", execute="reg_impl:execute"))
    register(name="t_kw", label="Keyword", execute="reg_impl:execute", default_active=True)
    register({"name": "t_dict", "execute": "reg_impl:execute"})

@hookimpl
def piko_register_provider_apis(register):
    register("acme-messages", "reg_impl:stream")

@hookimpl
def piko_register_providers(register):
    register(ProviderConfig(name="acme", base_url="http://127.0.0.1:1", api="acme-messages",
                            models=[Model(id="acme-1", provider="acme", api="acme-messages")]))

@hookimpl
def piko_resolve_api_key(provider, app, check_only):
    return "key-from-plugin" if provider == "acme" else None

@hookimpl
def piko_register_commands(register):
    register("greet", description="Say hello", handler=lambda args, ctx: "hello " + args)

@hookimpl
def piko_register_cli_commands(register):
    register("hello-cli", "reg_impl:cli", help="A subcommand")

@hookimpl
def piko_register_flags(register):
    register("plan", description="Plan first", type="boolean", default=False)
    register("persona", description="Who to be", type="string")

@hookimpl
def piko_register_shortcuts(register):
    register("ctrl+shift+g", description="Go", handler=lambda ctx: None)

@hookimpl
def piko_register_modes(register):
    register("quiet", "reg_impl:run_mode", description="Say nothing")

@hookimpl
def piko_register_message_renderers(register):
    register("my-note", lambda message, options, theme: message.content)

@hookimpl
def piko_register_resource_loaders(register):
    register("skills", "reg_impl:load_skills")
    register("themes", lambda request: ["theme"])

@hookimpl
def piko_register_package_sources(register):
    register("acme", "reg_impl:AcmeSource")
"""

IMPL = """
import click

def execute(tool_call_id, params, signal, on_update, ctx):
    return {"content": [{"type": "text", "text": "ok"}]}

async def stream(model, context, options):
    if False:
        yield None

@click.command()
def cli():
    click.echo("hello from a plugin subcommand")

def run_mode(app):
    return 0

def load_skills(request):
    return ["skill"]

class AcmeSource:
    pass
"""


@pytest.fixture
def app(only_site, fake_dist, app_factory):
    fake_dist("reg_dist", "1.0", {"reg": "reg_mod"}, {"reg_mod": EVERYTHING, "reg_impl": IMPL})
    return app_factory().boot()


def test_tools_in_every_form_and_lazily_imported(app) -> None:
    tools = app.registries.tools
    assert tools.names() == ["t_obj", "t_kw", "t_dict"]
    assert all(t.plugin == "reg" for t in tools)
    assert tools.get("t_kw").default_active is True and tools.get("t_obj").default_active is False
    assert "reg_impl" not in sys.modules
    execute = tools.get("t_obj").resolved("execute")
    assert "reg_impl" in sys.modules
    assert execute("id", {}, None, None, None) == {"content": [{"type": "text", "text": "ok"}]}
    assert tools.get("t_obj").execute is execute  # resolved once
    assert tools.get("t_obj").to_json() == {
        "name": "t_obj",
        "description": "as an object",
        "parameters": {"type": "object", "properties": {}},
    }


def test_provider_apis_providers_and_api_keys(app) -> None:
    api = app.registries.provider_apis.get("acme-messages")
    assert api.plugin == "reg" and api.stream == "reg_impl:stream"
    registry = app.model_registry.load()
    model = registry.find("acme", "acme-1")
    assert model is not None and model.provider == "acme"
    assert registry.api_key("acme") == "key-from-plugin"
    assert registry.api_key("nobody") is None


def test_commands_flags_shortcuts_modes_renderers(app) -> None:
    assert app.registries.commands.get("greet").handler("you", None) == "hello you"
    flags = {f.name: (f.type, f.default, f.plugin) for f in app.registries.flags}
    assert flags == {"plan": ("boolean", False, "reg"), "persona": ("string", None, "reg")}
    assert app.registries.shortcuts.get("ctrl+shift+g").description == "Go"
    mode = app.registries.modes.get("quiet")
    assert mode.resolved("run")(app) == 0
    renderer = app.registries.message_renderers.get("my-note")
    assert renderer.plugin == "reg"


def test_cli_commands_resources_and_package_sources(app) -> None:
    cli = app.registries.cli_commands.get("hello-cli")
    assert (cli.help, cli.plugin) == ("A subcommand", "reg")
    assert app.registries.cli_commands.get("plugins").plugin == "core"
    assert [loader.plugin for loader in app.registries.resource_loaders("skills")] == ["reg"]
    assert app.registries.resource_loaders("skills")[0].resolved("loader")(None) == ["skill"]
    assert app.registries.resource_loaders("themes")[0].loader(None) == ["theme"]
    assert app.registries.resource_loaders("prompt_templates") == []
    source = app.registries.package_sources.get("acme")
    assert source.resolved("handler").__name__ == "AcmeSource"


def test_registries_refill_when_plugins_change(app) -> None:
    assert "greet" in app.registries.commands
    app.pm.set_blocked("reg")
    assert "greet" not in app.registries.commands


def test_unknown_registry_attribute() -> None:
    with pytest.raises(AttributeError):
        Registries(None).nothing_like_this  # noqa: B018


def test_registry_refuses_a_second_definition_unless_replacing() -> None:
    registry: Registry[ModeDefinition] = Registry("mode")
    assert registry.add(ModeDefinition(name="text", plugin="a"))
    assert not registry.add(ModeDefinition(name="text", plugin="b"))
    assert registry.diagnostics == [
        "plugin 'b': mode 'text' is already registered by plugin 'a'; ignored (register it with override=True to replace it)"
    ]
    assert registry.add(ModeDefinition(name="text", plugin="c"), replace=True)
    assert registry.get("text").plugin == "c"
    assert "text" in registry and len(registry) == 1
    assert registry.remove("text").plugin == "c"
    assert registry.names() == []


def test_resolve_import() -> None:
    import os.path

    assert resolve_import("os.path:join") is os.path.join
    assert resolve_import("os:path.join") is os.path.join
    assert resolve_import("os.path") is os.path
    marker = object()
    assert resolve_import(marker) is marker
    with pytest.raises(ModuleNotFoundError):
        resolve_import("no_such_module_xyz:thing")


def test_definitions_record_their_plugin() -> None:
    tool = ToolDefinition(name="x")
    assert tool.plugin == "" and tool.label == ""
    assert CommandDefinition(name="c").source == "extension"


DECLARED = """
from piko import ModeDefinition, registers

piko_register_modes = registers(
    ModeDefinition(name="as-object", run="reg_impl:run_mode"),
    {"name": "as-dict", "run": "reg_impl:run_mode", "description": "From a dict"},
    name="as-fields",
    run="reg_impl:run_mode",
    interactive=True,
)
piko_register_flags = registers(name="declared-flag", type="string", default="7", colour="red")
"""

MISSPELT = """
from piko import registers

piko_register_mdoes = registers(name="never", run="reg_impl:run_mode")
"""


def test_declared_registrations_register_in_order_as_a_function_would(
    only_site, fake_dist, app_factory
) -> None:
    fake_dist("decl_dist", "1.0", {"decl": "decl_mod"}, {"decl_mod": DECLARED, "reg_impl": IMPL})
    app = app_factory().boot()
    modes = [
        (m.name, m.plugin, m.description, m.interactive) for m in app.registries.modes if m.plugin == "decl"
    ]
    assert modes == [
        ("as-object", "decl", "", False),
        ("as-dict", "decl", "From a dict", False),
        ("as-fields", "decl", "", True),
    ]
    assert app.registries.modes.get("as-fields").resolved("run")(app) == 0
    import decl_mod

    assert [getattr(d, "name", None) or d["name"] for d in decl_mod.piko_register_modes.declared] == [
        "as-object",
        "as-dict",
        "as-fields",
    ]
    # a field flags do not have fails that registration alone, reported as the plugin's
    assert "declared-flag" not in app.registries.flags
    assert any(
        line.startswith("plugin 'decl': piko_register_flags failed: TypeError") and "colour" in line
        for line in app.registries.diagnostics
    ), app.registries.diagnostics
    assert "as-dict" in app.registries.modes  # the plugin's other registrations stand


def test_a_declared_registration_under_a_misspelt_hook_name_is_reported_by_that_name(
    only_site, fake_dist, app_factory
) -> None:
    fake_dist("decl_dist", "1.0", {"decl": "decl_mod"}, {"decl_mod": MISSPELT, "reg_impl": IMPL})
    app = app_factory().boot()
    assert "never" not in app.registries.modes
    assert any("piko_register_mdoes" in line for line in app.pm.diagnostics), app.pm.diagnostics


def test_registers_needs_a_definition() -> None:
    from piko import registers

    with pytest.raises(TypeError, match="at least one definition"):
        registers()
