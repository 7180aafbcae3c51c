"""``git:`` repositories on disk and ``path:`` folders: Python projects, resources, refs, update, remove."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pkg_env import EXAMPLE_PLUGIN
from pkg_env import PiEnv
from pkg_env import git

MINI_BACKEND = Path(__file__).with_name("mini_backend.py")
PYPROJECT = """[build-system]
requires = []
build-backend = "mini_backend"
backend-path = ["_backend"]

[project]
name = "piko-gitplug"
version = "{version}"
dependencies = ["piko"]

[project.entry-points.piko]
gitplug = "piko_gitplug"

[tool.piko]
skills = ["agent/skills"]
prompts = ["agent/prompts/*.md", "!agent/prompts/draft.md"]
"""
PLUGIN = """from piko import hookimpl


@hookimpl
def piko_register_tools(register):
    register(name="git_tool", description="{version}", execute=lambda *a, **k: None)
"""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _repo(pienv: PiEnv) -> Path:
    repo = pienv.root / "repo"
    _write(repo / "pyproject.toml", PYPROJECT.format(version="0.1.0"))
    _write(repo / "_backend" / "mini_backend.py", MINI_BACKEND.read_text(encoding="utf-8"))
    _write(repo / "piko_gitplug" / "__init__.py", PLUGIN.format(version="0.1.0"))
    _write(
        repo / "agent" / "skills" / "deploy" / "SKILL.md",
        "---\nname: deploy\ndescription: Deploy\n---\nSteps\n",
    )
    _write(repo / "agent" / "prompts" / "review.md", "---\ndescription: Review\n---\nReview $@\n")
    _write(repo / "agent" / "prompts" / "draft.md", "draft\n")
    _write(repo / "skills" / "ignored" / "SKILL.md", "not used: the manifest decides\n")
    env = pienv.env()
    git("init", "-q", "-b", "main", cwd=repo, env=env)
    git("add", "-A", cwd=repo, env=env)
    git("commit", "-qm", "one", cwd=repo, env=env)
    git("tag", "v1", cwd=repo, env=env)
    return repo


def test_git_repository_install_update_remove(pienv: PiEnv) -> None:
    repo = _repo(pienv)
    result = pienv.pi("install", f"git:{repo}")
    assert result.stdout.strip() == f"Installed git:{repo}"
    clone = pienv.agent_dir / "git" / "local" / str(repo).strip("/")
    assert (clone / "pyproject.toml").is_file()
    assert (pienv.agent_dir / "git" / ".gitignore").read_text() == "*\n!.gitignore\n"
    assert pienv.settings() == {"packages": [f"git:{repo}"]}
    probe = pienv.probe()
    assert "git_tool" in probe["tools"]
    assert probe["skills"] == [str(clone / "agent" / "skills" / "deploy" / "SKILL.md")]
    assert probe["prompts"] == [str(clone / "agent" / "prompts" / "review.md")]
    assert f"    {clone}" in pienv.pi("list").stdout

    env = pienv.env()
    _write(repo / "pyproject.toml", PYPROJECT.format(version="0.2.0"))
    _write(repo / "agent" / "prompts" / "fix.md", "Fix $@\n")
    git("commit", "-qam", "two", cwd=repo, env=env)
    git("add", "-A", cwd=repo, env=env)
    git("commit", "-qm", "three", cwd=repo, env=env)
    pienv.pi("update")
    assert (clone / "agent" / "prompts" / "fix.md").is_file()
    assert "piko-gitplug 0.2.0" in pienv.pi("list").stdout
    assert len(pienv.probe()["prompts"]) == 2

    pienv.pi("remove", f"git:{repo}")
    assert not clone.exists() and not (pienv.agent_dir / "git" / "local").exists()
    assert "git_tool" not in pienv.probe()["tools"]
    assert "piko_gitplug" not in pienv.installed()


def test_git_ref_pins_and_project_scope(pienv: PiEnv) -> None:
    repo = _repo(pienv)
    env = pienv.env()
    _write(repo / "later.txt", "later\n")
    git("add", "-A", cwd=repo, env=env)
    git("commit", "-qm", "later", cwd=repo, env=env)
    project = pienv.root / "proj"
    project.mkdir()
    pienv.pi("install", "-l", f"git:{repo}#v1", cwd=project)
    clone = project / ".pi" / "git" / "local" / str(repo).strip("/")
    assert not (clone / "later.txt").exists()  # checked out at the tag
    pienv.pi("trust", cwd=project)
    assert "git_tool" in pienv.probe(cwd=project)["tools"]
    assert "git_tool" not in pienv.probe()["tools"]
    pienv.pi("update", cwd=project)
    assert not (clone / "later.txt").exists()  # a ref pins the package
    assert "(not installed" not in pienv.pi("list", cwd=project).stdout


def test_example_plugin_through_path(pienv: PiEnv) -> None:
    # a copy, so that building it leaves nothing in the repository's examples/
    example = pienv.root / "piko-example-plugin"
    shutil.copytree(
        EXAMPLE_PLUGIN, example, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    )
    result = pienv.pi("install", f"path:{example}")
    assert result.returncode == 0
    [entry] = pienv.settings()["packages"]
    assert (pienv.agent_dir / entry).resolve() == example  # relative to the settings folder, as pi
    plugins = {p["name"]: p for p in json.loads(pienv.pi("plugins", "--json").stdout)["plugins"]}
    assert plugins["example"]["origin"] == "distribution" and not plugins["example"]["blocked"]
    assert "word_count" in pienv.probe()["tools"]
    direct = json.loads(
        next(pienv.site.glob("piko_example_plugin-*.dist-info")).joinpath("direct_url.json").read_text()
    )
    assert direct["dir_info"] == {"editable": True}  # used in place, not copied
    pienv.pi("remove", str(example))
    assert "word_count" not in pienv.probe()["tools"]
    assert not list(pienv.site.glob("piko_example_plugin-*"))


def test_resource_folder_and_single_extension_file(pienv: PiEnv) -> None:
    pack = pienv.root / "pack"
    _write(pack / "skills" / "lint" / "SKILL.md", "---\nname: lint\ndescription: Lint\n---\n")
    _write(pack / "skills" / "quick.md", "---\nname: quick\ndescription: Quick\n---\n")
    _write(pack / "prompts" / "nested" / "ship.md", "Ship it\n")
    _write(pack / "themes" / "night.json", "{}")
    _write(pack / "extensions" / "packext.py", PLUGIN.replace("git_tool", "pack_tool").format(version="1"))
    _write(pack / "extensions" / "legacy.ts", "export default () => {}\n")
    single = pienv.root / "solo.py"
    _write(single, PLUGIN.replace("git_tool", "solo_tool").format(version="1"))
    pienv.pi("install", str(pack))
    pienv.pi("install", f"path:{single}")
    probe = pienv.probe()
    assert sorted(Path(p).name for p in probe["skills"]) == ["SKILL.md", "quick.md"]
    assert [Path(p).name for p in probe["prompts"]] == ["ship.md"]
    assert [Path(p).name for p in probe["themes"]] == ["night.json"]
    assert {"pack_tool", "solo_tool"} <= set(probe["tools"])
    assert any(
        "TypeScript/JavaScript extensions are not supported by piko" in n and "legacy.ts" in n
        for n in probe["notices"]
    )
    missing = pienv.pi("install", "path:./nowhere", check=False)
    assert (
        missing.returncode == 1 and f"Error: Path does not exist: {pienv.root / 'nowhere'}" in missing.stderr
    )
