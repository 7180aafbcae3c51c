"""Broken plugins: each gets one clear diagnostic line naming it and the cause; the rest loads."""

from __future__ import annotations

import pytest

from piko.app.application import BootOptions

GOOD = """
from piko import hookimpl

@hookimpl
def piko_register_commands(register):
    register("good", description="still here", handler=lambda args, ctx: None)
"""

BROKEN: dict[str, tuple[str, str]] = {
    # plugin source -> expected diagnostic (after "plugin 'bad' ")
    "missing-import": (
        "import not_a_real_module_anywhere\n",
        "failed to load: ModuleNotFoundError: No module named 'not_a_real_module_anywhere' (bad_mod.py:1)",
    ),
    "raises-on-import": (
        "x = 1\nraise RuntimeError('cannot start here')\n",
        "failed to load: RuntimeError: cannot start here (bad_mod.py:2)",
    ),
    "syntax-error": (
        "def broken(:\n    pass\n",
        "failed to load: SyntaxError: invalid syntax (bad_mod.py, line 1)",
    ),
    "factory-raises": (
        "def activate(pi):\n    pi.register_command('never')\n    raise ValueError('no config file')\n",
        "failed to load: ValueError: no config file (bad_mod.py:3)",
    ),
    "async-factory-raises": (
        "async def activate(pi):\n    raise OSError('port busy')\n",
        "failed to load: OSError: port busy (bad_mod.py:2)",
    ),
    "unknown-hook": (
        "from piko import hookimpl\n\n@hookimpl\ndef piko_tool_cal(event, ctx):\n    pass\n",
        "not loaded: unknown hook piko_tool_cal (is it misspelled?)",
    ),
    "wrong-hook-arguments": (
        "from piko import hookimpl\n\n@hookimpl\ndef piko_tool_call(evnt, ctx):\n    pass\n",
        "failed to load: PluginValidationError: Plugin 'bad' for hook 'piko_tool_call'",
    ),
}


def test_unknown_event_in_factory_is_one_warning_and_the_plugin_loads(
    only_site, fake_dist, app_factory
) -> None:
    source = "def activate(pi):\n    pi.on('tool_cal', lambda e: None)\n    pi.register_command('still')\n"
    fake_dist("bad_dist", "1.0", {"bad": "bad_mod"}, {"bad_mod": source})
    app = app_factory().boot()
    lines = [d for d in app.diagnostics() if "'bad'" in d]
    assert len(lines) == 1 and "pi.on('tool_cal')" in lines[0] and "did you mean 'tool_call'?" in lines[0]
    assert app.pm.infos["bad"].error is None
    assert "still" in app.registries.commands


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_entry_point_plugin(case: str, only_site, fake_dist, app_factory) -> None:
    source, expected = BROKEN[case]
    fake_dist("bad_dist", "1.0", {"bad": "bad_mod"}, {"bad_mod": source})
    fake_dist("good_dist", "1.0", {"good": "good_mod"}, {"good_mod": GOOD})

    app = app_factory().boot()

    lines = [d for d in app.diagnostics() if "'bad'" in d]
    assert len(lines) == 1, app.diagnostics()
    assert lines[0].startswith(f"plugin 'bad' {expected}"), lines[0]
    assert "\n" not in lines[0]
    assert app.pm.get_plugin("bad") is None
    assert app.pm.infos["bad"].error
    # the others load
    assert "good" in app.registries.commands
    assert app.pm.infos["good"].error is None


def test_missing_entry_point_module_names_no_kernel_frame(only_site, fake_dist, app_factory) -> None:
    fake_dist("bad_dist", "1.0", {"bad": "no_such_module_here"})
    app = app_factory().boot()
    assert (
        "plugin 'bad' failed to load: ModuleNotFoundError: No module named 'no_such_module_here'"
        in app.diagnostics()
    )


def test_missing_attribute_in_entry_point(only_site, fake_dist, app_factory) -> None:
    fake_dist("bad_dist", "1.0", {"bad": "bad_mod:nothing"}, {"bad_mod": "x = 1\n"})
    app = app_factory().boot()
    assert (
        "plugin 'bad' failed to load: AttributeError: module 'bad_mod' has no attribute 'nothing'"
        in app.diagnostics()
    )


def test_duplicate_tool_name_is_refused_with_a_diagnostic(only_site, fake_dist, app_factory) -> None:
    tool = """
    from piko import hookimpl

    @hookimpl
    def piko_register_tools(register):
        register(name="shared_tool", description="{who}", execute=lambda *a: None)
    """
    fake_dist("first_dist", "1.0", {"first": "first_mod"}, {"first_mod": tool.format(who="first")})
    fake_dist("second_dist", "1.0", {"second": "second_mod"}, {"second_mod": tool.format(who="second")})
    app = app_factory().boot()
    tools = app.registries.tools
    assert tools.get("shared_tool").description == "first"
    assert (
        "plugin 'second': tool 'shared_tool' is already registered by plugin 'first'; ignored (register it with override=True to replace it)"
        in app.diagnostics()
    )


def test_duplicate_tool_from_an_extension_is_refused(only_site, env, fake_dist, app_factory) -> None:
    fake_dist("first_dist", "1.0", {"first": "first_mod"}, {"first_mod": """
        from piko import hookimpl

        @hookimpl
        def piko_register_tools(register):
            register(name="read_more", execute=lambda *a: None)
        """})  # fmt: skip
    ext = env.write(
        "exts/dup.py", "def activate(pi):\n    pi.register_tool(name='read_more', execute=lambda *a: None)\n"
    )
    app = app_factory().boot(BootOptions(extensions=[str(ext)]))
    assert app.registries.tools.get("read_more").plugin == "first"
    assert (
        "plugin 'dup': tool 'read_more' is already registered by plugin 'first'; ignored (register it with override=True to replace it)"
        in app.diagnostics()
    )


def test_registration_hook_that_raises_is_reported_and_others_register(
    only_site, fake_dist, app_factory
) -> None:
    fake_dist("bad_dist", "1.0", {"bad": "bad_mod"}, {"bad_mod": """
        from piko import hookimpl

        @hookimpl
        def piko_register_commands(register):
            register("half")
            raise KeyError("lost")
        """})  # fmt: skip
    fake_dist("good_dist", "1.0", {"good": "good_mod"}, {"good_mod": GOOD})
    app = app_factory().boot()
    assert "good" in app.registries.commands
    assert "plugin 'bad': piko_register_commands failed: KeyError: 'lost'" in app.diagnostics()


def test_reserved_shortcut_is_refused(only_site, env, app_factory, fake_dist) -> None:
    """The interactive mode reserves its own keys; an extension cannot take them."""
    fake_dist("piko_interactive", "1.0", {"modes.interactive": "piko.plugins.modes.interactive.mode"})
    ext = env.write(
        "exts/keys.py",
        "def activate(pi):\n"
        "    pi.register_shortcut('ctrl+c', description='steal quit', handler=lambda ctx: None)\n"
        "    pi.register_shortcut('ctrl+shift+x', description='fine', handler=lambda ctx: None)\n",
    )
    app = app_factory().boot(BootOptions(extensions=[str(ext)]))
    free = [s.key for s in app.registries.shortcuts if not s.reserved]
    assert free == ["ctrl+shift+x"]
    assert app.registries.shortcuts.get("ctrl+c").plugin == "modes.interactive"
    assert "plugin 'keys': shortcut 'ctrl+c' is reserved by piko; ignored" in app.diagnostics()


def test_without_the_interactive_mode_no_key_is_reserved(only_site, env, app_factory) -> None:
    ext = env.write(
        "exts/keys.py", "def activate(pi):\n    pi.register_shortcut('ctrl+c', handler=lambda ctx: None)\n"
    )
    app = app_factory().boot(BootOptions(extensions=[str(ext)]))
    assert [s.key for s in app.registries.shortcuts] == ["ctrl+c"]


def test_broken_extension_file(env, only_site, app_factory) -> None:
    bad = env.write("exts/broken.py", "import json\njson.loads('{')\n")
    good = env.write("exts/fine.py", "def activate(pi):\n    pi.register_command('fine')\n")
    app = app_factory().boot(BootOptions(extensions=[str(bad), str(good)]))
    (line,) = [d for d in app.diagnostics() if "broken" in d]
    assert line.startswith(f"extension 'broken' ({bad}) failed to load: JSONDecodeError: ")
    assert line.endswith("(broken.py:2)")
    assert "fine" in app.registries.commands


def test_folder_without_init_is_reported(env, only_site, app_factory) -> None:
    folder = env.root / "exts" / "not_a_package"
    folder.mkdir(parents=True)
    app = app_factory().boot(BootOptions(extensions=[str(folder)]))
    assert (
        f"extension 'not_a_package' ({folder}) failed to load: PluginLoadError: {folder} is a folder without __init__.py"
        in app.diagnostics()
    )


def test_missing_extension_file_is_reported(env, only_site, app_factory) -> None:
    missing = env.root / "nowhere.py"
    app = app_factory().boot(BootOptions(extensions=[str(missing)]))
    (line,) = [d for d in app.diagnostics() if "nowhere" in d]
    assert line.startswith(f"extension 'nowhere' ({missing}) failed to load: FileNotFoundError:")
