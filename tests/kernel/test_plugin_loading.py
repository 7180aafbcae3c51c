"""Loading plugins: entry points, origins, duplicates, blocking, the allowlist, essential plugins."""

from __future__ import annotations

import sys

import pytest

from piko.app.application import App
from piko.app.application import BootOptions
from piko.platform.manager import ESSENTIAL_PLUGINS
from piko.platform.manager import EssentialPluginError
from piko.platform.manager import PikoPluginManager

HOOK_PLUGIN = """
from piko import hookimpl

@hookimpl
def piko_register_commands(register):
    register("{name}", description="from {name}", handler=lambda args, ctx: None)
"""


def boot(app_factory, options: BootOptions | None = None) -> App:
    return app_factory().boot(options)


def test_entry_point_plugin_loads_with_its_origin_and_hooks(only_site, fake_dist, app_factory) -> None:
    fake_dist("hello_plugin", "2.1.0", {"hello": "hello_mod"}, {"hello_mod": HOOK_PLUGIN.format(name="hi")})
    app = boot(app_factory)

    info = app.pm.infos["hello"]
    assert (info.origin, info.dist_name, info.dist_version) == ("distribution", "hello_plugin", "2.1.0")
    assert info.source == "hello_plugin 2.1.0"
    assert info.hooks == ["piko_register_commands"]
    assert not info.blocked and info.error is None
    assert app.pm.get_plugin("hello") is sys.modules["hello_mod"]
    assert app.registries.commands.get("hi").plugin == "hello"
    # the kernel's own plugin is always there
    assert app.pm.infos["core"].origin == "internal"
    assert "plugins" in app.registries.cli_commands


def test_entry_point_may_name_an_object_or_an_activate_function(only_site, fake_dist, app_factory) -> None:
    fake_dist(
        "objs",
        "1.0",
        {"as-object": "objs_mod:Plugin", "as-factory": "objs_mod:setup"},
        {
            "objs_mod": """
            from piko import hookimpl

            class Plugin:
                @staticmethod
                @hookimpl
                def piko_register_commands(register):
                    register("from-object", handler=lambda a, c: None)

            def setup(pi):
                pi.register_command("from-factory", description="made by setup()")
            """
        },
    )
    app = boot(app_factory)
    assert app.registries.commands.get("from-object").plugin == "as-object"
    assert app.registries.commands.get("from-factory").plugin == "as-factory"
    assert app.pm.infos["as-factory"].hooks == ["piko_register_commands"]


def test_distribution_named_piko_is_built_in() -> None:
    from piko.platform.discovery import EntryPointRecord

    pm = PikoPluginManager()
    pm.load_entry_points(
        [EntryPointRecord("builtin-thing", "piko.platform.markers", "piko", "0.1.0", "/x")], None
    )
    assert pm.infos["builtin-thing"].origin == "built-in"
    assert pm.infos["builtin-thing"].source == "built-in"


def test_duplicate_plugin_names_warn_and_the_first_wins(only_site, fake_dist, app_factory) -> None:
    fake_dist("aaa_dist", "1.0", {"same": "aaa_mod"}, {"aaa_mod": HOOK_PLUGIN.format(name="from-aaa")})
    fake_dist("bbb_dist", "3.0", {"same": "bbb_mod"}, {"bbb_mod": HOOK_PLUGIN.format(name="from-bbb")})
    app = boot(app_factory)
    assert app.pm.infos["same"].dist_name == "aaa_dist"
    assert "from-aaa" in app.registries.commands
    assert "from-bbb" not in app.registries.commands
    assert "bbb_mod" not in sys.modules
    assert "plugin 'same' from bbb_dist 3.0 ignored: the name is taken by aaa_dist 1.0" in app.diagnostics()


# ---------------------------------------------------------------------------
# Blocking
# ---------------------------------------------------------------------------


@pytest.fixture
def three_plugins(only_site, fake_dist):
    for name in ("one", "two", "three"):
        fake_dist(
            f"{name}_dist",
            "1.0",
            {name: f"{name}_mod"},
            {f"{name}_mod": HOOK_PLUGIN.format(name=f"cmd-{name}")},
        )


def _state(app: App) -> dict[str, str | None]:
    return {
        n: (i.blocked_by if i.blocked else None)
        for n, i in app.pm.infos.items()
        if n in ("one", "two", "three")
    }


def test_disable_plugin_option_blocks_before_import(three_plugins, app_factory) -> None:
    app = boot(app_factory, BootOptions(disable_plugins=["two"]))
    assert _state(app) == {"one": None, "two": "--disable-plugin", "three": None}
    assert "two_mod" not in sys.modules
    assert "cmd-two" not in app.registries.commands
    assert app.pm.is_blocked("two")


def test_disable_plugin_accepts_comma_lists(three_plugins, app_factory) -> None:
    app = boot(app_factory, BootOptions(disable_plugins=["one,three"]))
    assert _state(app) == {"one": "--disable-plugin", "two": None, "three": "--disable-plugin"}


def test_environment_blocks(three_plugins, app_factory, monkeypatch) -> None:
    monkeypatch.setenv("PIKO_DISABLE_PLUGINS", "one, three")
    app = boot(app_factory)
    assert _state(app) == {"one": "PIKO_DISABLE_PLUGINS", "two": None, "three": "PIKO_DISABLE_PLUGINS"}


def test_settings_block(three_plugins, env, app_factory) -> None:
    env.write("agent/settings.json", '{"disabledPlugins": ["three"]}')
    app = boot(app_factory)
    assert _state(app) == {"one": None, "two": None, "three": "settings disabledPlugins"}


def test_command_line_wins_over_environment_and_settings_in_the_reason(
    three_plugins, env, app_factory, monkeypatch
) -> None:
    env.write("agent/settings.json", '{"disabledPlugins": ["one"]}')
    monkeypatch.setenv("PIKO_DISABLE_PLUGINS", "one")
    app = boot(app_factory, BootOptions(disable_plugins=["one"]))
    assert _state(app)["one"] == "--disable-plugin"


def test_allowlist_loads_only_the_named_plugins_and_the_essential_ones(
    three_plugins, app_factory, monkeypatch
) -> None:
    monkeypatch.setenv("PIKO_PLUGINS", "two")
    app = boot(app_factory)
    assert _state(app) == {"one": "PIKO_PLUGINS allowlist", "two": None, "three": "PIKO_PLUGINS allowlist"}
    assert "core" in app.pm.infos and not app.pm.infos["core"].blocked
    assert app.pm.is_allowed("core") and app.pm.is_allowed("two") and not app.pm.is_allowed("one")


@pytest.mark.parametrize("name", sorted(ESSENTIAL_PLUGINS))
def test_essential_plugins_cannot_be_blocked(name: str, only_site, app_factory) -> None:
    with pytest.raises(EssentialPluginError, match=f"plugin '{name}' is essential and cannot be blocked"):
        boot(app_factory, BootOptions(disable_plugins=[name]))


def test_essential_plugin_blocked_from_settings_names_the_setting(only_site, env, app_factory) -> None:
    env.write("agent/settings.json", '{"disabledPlugins": ["core"]}')
    with pytest.raises(EssentialPluginError, match=r"\(asked by settings disabledPlugins\)"):
        boot(app_factory)


# ---------------------------------------------------------------------------
# Bootstrap hooks
# ---------------------------------------------------------------------------


def test_piko_addhooks_lets_a_plugin_add_its_own_hooks(only_site, fake_dist, app_factory) -> None:
    fake_dist(
        "spec_dist",
        "1.0",
        {"a-spec": "spec_mod", "b-user": "user_mod"},
        {
            "spec_mod": """
            import sys
            from piko import hookimpl, hookspec

            @hookspec
            def piko_custom_greeting(name):
                "A hook of this plugin's own."

            @hookimpl
            def piko_addhooks(pluginmanager):
                pluginmanager.add_hookspecs(sys.modules[__name__])
            """,
            "user_mod": """
            from piko import hookimpl

            @hookimpl
            def piko_custom_greeting(name):
                return f"hello {name}"
            """,
        },
    )
    app = boot(app_factory)
    assert app.pm.infos["b-user"].error is None
    assert app.pm.hook.piko_custom_greeting(name="piko") == ["hello piko"]


def test_piko_configure_gets_the_app_once_plugins_are_loaded(only_site, fake_dist, app_factory) -> None:
    fake_dist(
        "conf_dist",
        "1.0",
        {"conf": "conf_mod"},
        {
            "conf_mod": """
            from piko import hookimpl
            seen = []

            @hookimpl
            def piko_configure(config):
                seen.append((config, sorted(config.pm.infos)))
            """
        },
    )
    app = boot(app_factory)
    seen = sys.modules["conf_mod"].seen
    assert len(seen) == 1
    assert seen[0][0] is app
    assert "conf" in seen[0][1]
    assert app.booted
