"""Project-local packages (``pi install -l``): ``.pi/python``, trust, isolation between projects."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pkg_env import PiEnv


def _project(pienv: PiEnv, name: str) -> Path:
    folder = pienv.root / name
    folder.mkdir()
    return folder


def test_two_projects_keep_their_own_plugins(pienv: PiEnv) -> None:
    a, b = _project(pienv, "a"), _project(pienv, "b")
    pienv.pi("install", "-l", "pip:piko-hello", cwd=a)
    pienv.pi("install", "-l", "pip:piko-other", cwd=b)
    assert pienv.settings(a) == {"packages": ["pip:piko-hello"]}
    assert pienv.settings(b) == {"packages": ["pip:piko-other"]}
    assert (a / ".pi" / "python" / ".gitignore").read_text() == "*\n"
    assert pienv.installed() == set()  # nothing went into piko's own environment

    # not trusted yet: the project's packages stay out, and the run says so on stderr
    untrusted = pienv.probe(cwd=a)
    assert "hello_tool" not in untrusted["tools"]
    assert untrusted["trusted"] is False
    assert any("not trusted" in n and "pip:piko-hello" in n for n in untrusted["notices"])
    listing = pienv.pi("list", cwd=a).stdout
    assert "pip:piko-hello (not loaded: project not trusted)" in listing
    assert "Project packages:" in listing

    assert pienv.pi("trust", cwd=a).stdout.strip() == f"Trusted {a}"
    pienv.pi("trust", str(b))
    probe_a, probe_b = pienv.probe(cwd=a), pienv.probe(cwd=b)
    assert "hello_tool" in probe_a["tools"] and "other_tool" not in probe_a["tools"]
    assert "other_tool" in probe_b["tools"] and "hello_tool" not in probe_b["tools"]
    assert "hello" in pienv.pi("plugins", cwd=a).stdout
    assert "hello" not in pienv.pi("plugins", cwd=b).stdout
    assert "hello_tool" not in pienv.probe(cwd=pienv.root)["tools"]

    pienv.pi("remove", "-l", "pip:piko-hello", cwd=a)
    assert pienv.settings(a) == {"packages": []}
    assert "hello_tool" not in pienv.probe(cwd=a)["tools"]


def test_missing_project_packages_install_once_trusted(pienv: PiEnv) -> None:
    project = _project(pienv, "team")
    (project / ".pi").mkdir()
    (project / ".pi" / "settings.json").write_text(
        json.dumps({"packages": ["pip:piko-other"]}), encoding="utf-8"
    )
    untrusted = pienv.probe(cwd=project)
    assert not (project / ".pi" / "python").exists()  # nothing installed for an untrusted project
    assert "other_tool" not in untrusted["tools"]
    pienv.pi("trust", cwd=project)
    probe = pienv.probe(cwd=project)
    assert "other_tool" in probe["tools"]
    assert list((project / ".pi" / "python").glob("lib/python*/site-packages/piko_other-1.0.dist-info"))
    # the environment was made by this interpreter; one made by another is replaced
    shutil.rmtree(project / ".pi" / "python")
    assert "other_tool" in pienv.probe(cwd=project)["tools"]


def test_project_entry_wins_over_global_one(pienv: PiEnv) -> None:
    project = _project(pienv, "p")
    pienv.pi("install", "pip:piko-hello==1.0")
    pienv.pi("install", "-l", "pip:piko-hello==1.1", cwd=project)
    pienv.pi("trust", cwd=project)
    plugins = pienv.pi("plugins", "--json", cwd=project).stdout
    [hello] = [p for p in json.loads(plugins)["plugins"] if p["name"] == "hello"]
    assert hello["version"] == "1.1"
    [outside] = [
        p for p in json.loads(pienv.pi("plugins", "--json").stdout)["plugins"] if p["name"] == "hello"
    ]
    assert outside["version"] == "1.0"
