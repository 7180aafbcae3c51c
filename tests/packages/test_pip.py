"""``pi install pip:...`` into piko's own environment, from a local wheel index: list, plugins, tools, update, remove."""

from __future__ import annotations

from pkg_env import PiEnv


def test_install_list_plugins_tool_and_remove(pienv: PiEnv) -> None:
    result = pienv.pi("install", "pip:piko-hello")
    assert result.stdout.strip() == "Installed pip:piko-hello"
    assert "Installing pip:piko-hello..." in result.stderr
    assert "Successfully installed piko-hello-1.1" in result.stderr  # pip's progress, on stderr
    assert "Requirement already satisfied" not in result.stderr
    assert "piko_hello" in pienv.installed()  # into piko's environment, not the development one
    assert pienv.settings() == {"packages": ["pip:piko-hello"]}

    listing = pienv.pi("list").stdout
    assert listing.splitlines()[0] == "User packages:"
    assert "  pip:piko-hello" in listing.splitlines()
    assert "piko-hello 1.1; plugins: hello" in listing

    plugins = pienv.pi("plugins").stdout
    assert any(
        line.startswith("hello ") and "active" in line and "register_tools" in line
        for line in plugins.splitlines()
    )
    probe = pienv.probe()
    assert "hello_tool" in probe["tools"]
    assert any(path.endswith("piko_hello/skills/hello_tool-skill/SKILL.md") for path in probe["skills"])

    removed = pienv.pi("remove", "pip:piko-hello")
    assert removed.stdout.strip() == "Removed pip:piko-hello"
    assert "piko_hello" not in pienv.installed()
    assert pienv.settings() == {"packages": []}
    assert "hello_tool" not in pienv.probe()["tools"]
    assert pienv.pi("list").stdout.strip() == "No packages installed."


def test_bare_name_means_pip_and_update_respects_pins(pienv: PiEnv) -> None:
    pienv.pi("install", "piko-hello==1.0")
    pienv.pi("install", "piko-other<2")
    assert pienv.settings() == {"packages": ["pip:piko-hello==1.0", "pip:piko-other<2"]}
    updated = pienv.pi("update")
    assert updated.stdout.strip() == "Updated packages"
    assert "Updating pip:piko-other<2..." in updated.stderr
    assert "piko-hello" not in updated.stderr  # pinned: left alone
    assert "piko-hello 1.0" in pienv.pi("list").stdout

    explicit = pienv.pi("update", "pip:piko-hello")
    assert "pip:piko-hello==1.0 is pinned; not updated" in explicit.stderr

    # installing the same package with another requirement replaces its settings entry
    pienv.pi("install", "pip:piko-hello>=1.1")
    assert pienv.settings() == {"packages": ["pip:piko-hello>=1.1", "pip:piko-other<2"]}
    assert "piko-hello 1.1" in pienv.pi("list").stdout


def test_wheel_file_and_errors(pienv: PiEnv) -> None:
    wheel = next(pienv.wheelhouse.glob("piko_other-1.0-*.whl"))
    pienv.pi("install", str(wheel))
    [entry] = pienv.settings()["packages"]
    assert entry.startswith("pip:") and entry.endswith(wheel.name)
    assert "other_tool" in pienv.probe()["tools"]

    missing = pienv.pi("install", "pip:piko-does-not-exist", check=False)
    assert missing.returncode == 1
    assert missing.stderr.splitlines()[-1].startswith("Error: ")
    assert "piko-does-not-exist" not in str(pienv.settings())

    nothing = pienv.pi("remove", "pip:piko-hello", check=False)
    assert nothing.returncode == 1
    assert nothing.stderr.strip() == "No matching package found for pip:piko-hello"

    usage = pienv.pi("install", check=False)
    assert usage.returncode == 1
    assert usage.stderr.splitlines() == ["Missing install source.", "Usage: pi install <source> [-l]"]
    unknown = pienv.pi("remove", "--bogus", "x", check=False)
    assert unknown.stderr.splitlines() == [
        'Unknown option --bogus for "remove".',
        'Use "pi --help" or "pi remove <source> [-l]".',
    ]
    assert pienv.pi("install", "--help").stdout.startswith("Usage:\n  pi install <source> [-l]")


def test_missing_global_package_installs_at_startup(pienv: PiEnv) -> None:
    pienv.agent_dir.joinpath("settings.json").write_text('{"packages": ["pip:piko-other"]}', encoding="utf-8")
    offline = pienv.probe(PI_OFFLINE="1")
    assert "other_tool" not in offline["tools"]
    assert any("pip:piko-other is not installed (offline" in n for n in offline["notices"])
    probe = pienv.probe()
    assert "other_tool" in probe["tools"]  # installed and loaded in the same run
    assert "piko_other" in pienv.installed()
