"""``pi config``: plugins on and off (``disabledPlugins``), package resources with pi's +/- patterns."""

from __future__ import annotations

import json
from pathlib import Path

from pkg_env import PiEnv


def _pack(root: Path) -> Path:
    pack = root / "pack"
    for name in ("lint", "deploy"):
        (pack / "skills" / name).mkdir(parents=True)
        (pack / "skills" / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name}\n---\n")
    (pack / "prompts").mkdir()
    (pack / "prompts" / "ship.md").write_text("Ship\n")
    return pack


def test_disable_and_enable_package_resources(pienv: PiEnv) -> None:
    pack = _pack(pienv.root)
    pienv.pi("install", str(pack))
    listed = json.loads(pienv.pi("config", "list", "--json").stdout)
    names = {(r["kind"], r["name"]): r["enabled"] for r in listed["resources"]}
    assert names == {("skills", "lint"): True, ("skills", "deploy"): True, ("prompts", "ship.md"): True}

    result = pienv.pi("config", "disable", "lint", "ship.md")
    [entry] = pienv.settings()["packages"]
    assert result.stdout.splitlines() == [
        f"Disabled skill lint of {entry['source']} (user settings)",
        f"Disabled prompt ship.md of {entry['source']} (user settings)",
    ]
    assert entry["skills"] == ["-skills/lint/SKILL.md"] and entry["prompts"] == ["-prompts/ship.md"]
    probe = pienv.probe()
    assert [Path(p).parent.name for p in probe["skills"]] == ["deploy"]
    assert probe["prompts"] == []

    pienv.pi("config", "enable", "skills:lint")
    [entry] = pienv.settings()["packages"]
    assert entry["skills"] == ["+skills/lint/SKILL.md"]
    assert sorted(Path(p).parent.name for p in pienv.probe()["skills"]) == ["deploy", "lint"]
    text = pienv.pi("config").stdout  # no terminal: the list
    assert "[x] lint" in text and "[ ] ship.md" in text

    missing = pienv.pi("config", "disable", "nothing-like-this", check=False)
    assert missing.returncode == 1
    assert "Error: No plugin or package resource named nothing-like-this" in missing.stderr


def test_disable_and_enable_plugins(pienv: PiEnv) -> None:
    pienv.pi("install", "pip:piko-other")
    assert pienv.pi("config", "disable", "other").stdout.startswith("Disabled plugin other (")
    assert pienv.settings()["disabledPlugins"] == ["other"]
    probe = pienv.probe()
    assert (
        probe["plugins"]["other"]["blockedBy"] == "settings disabledPlugins"
        and "other_tool" not in probe["tools"]
    )
    project = pienv.root / "proj"
    project.mkdir()
    pienv.pi("config", "disable", "-l", "tools.ls", cwd=project)
    assert json.loads((project / ".pi" / "settings.json").read_text()) == {"disabledPlugins": ["tools.ls"]}
    pienv.pi("config", "enable", "other")
    assert "disabledPlugins" not in pienv.settings()
    assert "other_tool" in pienv.probe()["tools"]
    essential = pienv.pi("config", "disable", "modes.print", check=False)
    assert essential.returncode == 1
    assert essential.stderr.strip() == "Error: plugin 'modes.print' is essential and cannot be disabled"
