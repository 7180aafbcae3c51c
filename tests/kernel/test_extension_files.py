"""Extension files: ``-e PATH``, ``~/.pi/agent/extensions/``, a trusted project's ``.pi/extensions/``."""

from __future__ import annotations

from piko.app.application import BootOptions
from piko.config.trust_store import TrustStore


def command_extension(name: str) -> str:
    return f"def activate(pi):\n    pi.register_command({name!r}, description='from {name}')\n"


def test_dash_e_loads_files_and_package_folders_repeatedly(env, only_site, app_factory) -> None:
    one = env.write("exts/one.py", command_extension("cmd-one"))
    env.write("exts/pkg_ext/__init__.py", "from .impl import activate\n")
    env.write("exts/pkg_ext/impl.py", command_extension("cmd-pkg"))
    app = app_factory().boot(BootOptions(extensions=[str(one), str(env.root / "exts" / "pkg_ext")]))
    assert {"cmd-one", "cmd-pkg"} <= set(app.registries.commands.names())
    info = app.pm.infos["one"]
    assert (info.origin, info.path, info.source) == ("file", str(one), str(one))
    assert app.pm.infos["pkg_ext"].path == str(env.root / "exts" / "pkg_ext")


def test_dash_e_resolves_relative_paths_and_home(env, only_site, app_factory) -> None:
    env.write("project/local.py", command_extension("cmd-local"))
    env.write("home/in_home.py", command_extension("cmd-home"))
    app = app_factory().boot(BootOptions(extensions=["local.py", "~/in_home.py"]))
    assert {"cmd-local", "cmd-home"} <= set(app.registries.commands.names())


def test_same_file_twice_loads_once(env, only_site, app_factory) -> None:
    one = env.write("exts/one.py", "count = []\ndef activate(pi):\n    count.append(1)\n")
    app = app_factory().boot(BootOptions(extensions=[str(one), str(one)]))
    assert app.pm.infos["one"].error is None
    assert not [d for d in app.diagnostics() if "one" in d]


def test_two_files_with_one_name_warn(env, only_site, app_factory) -> None:
    first = env.write("a/same.py", command_extension("cmd-a"))
    second = env.write("b/same.py", command_extension("cmd-b"))
    app = app_factory().boot(BootOptions(extensions=[str(first), str(second)]))
    assert "cmd-a" in app.registries.commands and "cmd-b" not in app.registries.commands
    assert f"extension '{second}' ignored: the name 'same' is taken by {first}" in app.diagnostics()


def test_extension_named_like_an_entry_point_plugin_warns(env, only_site, fake_dist, app_factory) -> None:
    fake_dist("tidy_dist", "1.0", {"tidy": "tidy_mod"}, {"tidy_mod": "x = 1\n"})
    ext = env.write("exts/tidy.py", command_extension("cmd-file"))
    app = app_factory().boot(BootOptions(extensions=[str(ext)]))
    assert f"extension '{ext}' ignored: the name 'tidy' is taken by tidy_dist 1.0" in app.diagnostics()
    assert "cmd-file" not in app.registries.commands


def test_global_extension_folder_is_discovered(env, only_site, app_factory) -> None:
    env.write("agent/extensions/global_one.py", command_extension("cmd-global"))
    env.write("agent/extensions/global_pkg/__init__.py", command_extension("cmd-global-pkg"))
    env.write("agent/extensions/_private.py", command_extension("cmd-private"))
    env.write("agent/extensions/notes.txt", "not python")
    env.write("agent/extensions/helpers/util.py", "x = 1\n")  # a folder without __init__.py: not an extension
    app = app_factory().boot()
    names = set(app.registries.commands.names())
    assert {"cmd-global", "cmd-global-pkg"} <= names
    assert "cmd-private" not in names
    assert "helpers" not in app.pm.infos


def test_settings_extensions_list_is_loaded(env, only_site, app_factory) -> None:
    env.write("agent/my-ext/listed.py", command_extension("cmd-listed"))
    env.write("agent/settings.json", '{"extensions": ["my-ext/listed.py"]}')
    app = app_factory().boot()
    assert "cmd-listed" in app.registries.commands


def test_no_extensions_skips_discovery_but_keeps_dash_e(env, only_site, app_factory) -> None:
    env.write("agent/extensions/global_one.py", command_extension("cmd-global"))
    explicit = env.write("exts/explicit.py", command_extension("cmd-explicit"))
    app = app_factory().boot(BootOptions(extensions=[str(explicit)], no_extensions=True))
    names = set(app.registries.commands.names())
    assert "cmd-explicit" in names and "cmd-global" not in names


def test_project_extensions_need_a_trusted_project(env, only_site, app_factory) -> None:
    env.write("project/.pi/extensions/proj.py", command_extension("cmd-project"))
    env.write("project/.pi/listed/also.py", command_extension("cmd-listed"))
    env.write("project/.pi/settings.json", '{"extensions": ["listed/also.py"]}')

    untrusted = app_factory().boot()
    assert "cmd-project" not in untrusted.registries.commands
    assert "cmd-listed" not in untrusted.registries.commands
    assert "proj" not in untrusted.pm.infos
    (notice,) = untrusted.notices
    assert notice.startswith(
        f"Project resources in {env.project} were not loaded (.pi/settings.json (extensions: listed/also.py), "
        ".pi/extensions (proj.py)): "
        "this project is not trusted. Use --approve (-a)"
    )
    assert f"`pi trust` in {env.project}" in notice

    TrustStore(env.agent_dir).set(env.project, True)
    trusted = app_factory().boot()
    assert {"cmd-project", "cmd-listed"} <= set(trusted.registries.commands.names())
    assert trusted.notices == []


def test_trusting_a_parent_covers_the_project_and_a_distrust_below_wins(env, only_site, app_factory) -> None:
    env.write("project/.pi/extensions/proj.py", command_extension("cmd-project"))
    store = TrustStore(env.agent_dir)
    store.set(env.root, True)
    assert store.is_trusted(env.project)
    assert "cmd-project" in app_factory().boot().registries.commands
    store.set(env.project, False)
    assert store.decision(env.project) is False
    assert "cmd-project" not in app_factory().boot().registries.commands
    assert store.forget(env.project) is True
    assert store.forget(env.project) is False
    assert store.is_trusted(env.project)


def test_blocking_applies_to_extension_files(env, only_site, app_factory) -> None:
    ext = env.write("exts/noisy.py", "raise SystemExit('must not be imported')\n")
    app = app_factory().boot(BootOptions(extensions=[str(ext)], disable_plugins=["noisy"]))
    info = app.pm.infos["noisy"]
    assert info.blocked and info.blocked_by == "--disable-plugin"
    assert info.error is None


def test_extension_module_name_is_private(env, only_site, app_factory) -> None:
    import sys

    ext = env.write("exts/my-ext.py", "def activate(pi):\n    pass\n")
    app_factory().boot(BootOptions(extensions=[str(ext)]))
    assert "piko_extension_my_ext" in sys.modules
    assert sys.modules["piko_extension_my_ext"].__file__ == str(ext)


def test_an_untrusted_project_cannot_change_which_plugins_load(env, only_site, app_factory) -> None:
    env.write("agent/extensions/guard.py", command_extension("cmd-guard"))
    env.write("agent/extensions/noisy.py", command_extension("cmd-noisy"))
    env.write("agent/settings.json", '{"disabledPlugins": ["noisy"]}')
    env.write("project/.pi/settings.json", '{"disabledPlugins": ["guard"]}')
    untrusted = app_factory().boot()
    assert "cmd-guard" in untrusted.registries.commands and "cmd-noisy" not in untrusted.registries.commands
    assert [n.split(": this project")[0] for n in untrusted.notices] == [
        f"Project resources in {env.project} were not loaded (.pi/settings.json (disabledPlugins: guard))"
    ]


def test_a_trusted_project_adds_to_the_users_disabled_plugins_and_says_so(
    env, only_site, app_factory
) -> None:
    env.write("agent/extensions/guard.py", command_extension("cmd-guard"))
    env.write("agent/extensions/noisy.py", command_extension("cmd-noisy"))
    env.write("agent/settings.json", '{"disabledPlugins": ["noisy"]}')
    env.write("project/.pi/extensions/own.py", command_extension("cmd-own"))
    settings = env.write(
        "project/.pi/settings.json", '{"disabledPlugins": ["guard", "own", "tools.ls", "nothing-like-this"]}'
    )
    TrustStore(env.agent_dir).set(env.project, True)
    app = app_factory().boot()
    names = set(app.registries.commands.names())
    assert not names & {"cmd-guard", "cmd-noisy", "cmd-own"}  # the user's own list still holds
    assert app.pm.infos["guard"].blocked_by == "project settings disabledPlugins"
    assert app.pm.infos["noisy"].blocked_by == "settings disabledPlugins"
    # only the user's plugin is worth a word: not the project's own one, not a built-in
    guard = env.agent_dir / "extensions" / "guard.py"
    assert app.notices == [
        f"plugin 'guard' ({guard}) is disabled by the project settings {settings} (disabledPlugins)"
    ]


def test_the_trust_question_offers_pis_choices_and_saves_the_one_taken(tmp_path) -> None:
    import io

    from piko.app import trust
    from piko.config.trust_store import TrustStore

    project = tmp_path / "work" / "app"
    project.mkdir(parents=True)
    err = io.StringIO()
    choice = trust.ask(project, [".pi/settings.json"], io.StringIO("maybe\n2\n"), err)
    assert choice is not None and choice.trusted and choice.label == f"Trust parent folder ({project.parent})"
    lines = err.getvalue().splitlines()
    assert lines[0] == f"Trust project folder? {project}"
    assert lines[2] == "Found: .pi/settings.json"
    assert lines[4:9] == [
        "  1. Trust",
        f"  2. Trust parent folder ({project.parent})",
        "  3. Trust (this session only)",
        "  4. Do not trust",
        "  5. Do not trust (this session only)",
    ]
    assert err.getvalue().count("Choice [1-5") == 2  # an answer that is none of them asks again
    store = TrustStore(tmp_path / "agent")
    store.set(project, False)
    trust.save_choice(store, choice)
    assert store.decisions() == {str(project.parent): True}  # the project's own "no" gave way
    assert trust.ask(project, [], io.StringIO("n\n"), io.StringIO()).label == "Do not trust"  # type: ignore[union-attr]
    assert trust.ask(project, [], io.StringIO("\n"), io.StringIO()).updates == []  # type: ignore[union-attr]
    assert trust.ask(project, [], io.StringIO(""), io.StringIO()) is None
