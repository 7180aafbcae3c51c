"""Finding resources in a package folder: manifests, conventional folders, pi's pattern rules."""

from __future__ import annotations

import json
from pathlib import Path

from piko.plugins.packages.resources_scan import package_resources
from piko.resources.patterns import apply_patterns


def _files(root: Path, names: list[str]) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x", encoding="utf-8")


def _names(found: list[tuple[Path, bool]], root: Path, enabled: bool | None = True) -> list[str]:
    return sorted(str(p.relative_to(root)) for p, on in found if enabled is None or on is enabled)


def test_conventional_folders(tmp_path: Path) -> None:
    _files(tmp_path, [
        "skills/a/SKILL.md", "skills/a/notes.md", "skills/top.md", "skills/deep/b/SKILL.md",
        "prompts/p.md", "prompts/sub/q.md", "prompts/readme.txt", "themes/t.json", "themes/.hidden.json",
        "extensions/e.py", "extensions/_private.py", "extensions/pkg/__init__.py", "extensions/old.ts",
        "node_modules/x/skills/z/SKILL.md",
    ])  # fmt: skip
    found = package_resources(tmp_path)
    assert _names(found["skills"], tmp_path) == [
        "skills/a/SKILL.md",
        "skills/deep/b/SKILL.md",
        "skills/top.md",
    ]
    assert _names(found["prompts"], tmp_path) == ["prompts/p.md", "prompts/sub/q.md"]
    assert _names(found["themes"], tmp_path) == ["themes/t.json"]
    assert _names(found["extensions"], tmp_path) == ["extensions/e.py", "extensions/old.ts", "extensions/pkg"]


def test_tool_piko_manifest_wins_and_overrides(tmp_path: Path) -> None:
    _files(tmp_path, ["res/prompts/a.md", "res/prompts/b.md", "res/prompts/draft.md", "skills/x/SKILL.md"])
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.piko]\nprompts = ["res/prompts/*.md", "!**/draft.md"]\n',
        encoding="utf-8",
    )
    found = package_resources(tmp_path)
    assert _names(found["prompts"], tmp_path) == ["res/prompts/a.md", "res/prompts/b.md"]
    assert found["skills"] == []  # a manifest lists what the package offers


def test_package_json_manifest_and_settings_filter(tmp_path: Path) -> None:
    _files(tmp_path, ["s/one/SKILL.md", "s/two/SKILL.md", "t/a.json"])
    (tmp_path / "package.json").write_text(
        json.dumps({"pi": {"skills": ["./s"], "themes": ["t"]}}), encoding="utf-8"
    )
    found = package_resources(tmp_path, {"source": "x", "skills": ["-s/two/SKILL.md"], "themes": []})
    assert _names(found["skills"], tmp_path) == ["s/one/SKILL.md"]
    assert _names(found["skills"], tmp_path, enabled=False) == ["s/two/SKILL.md"]
    assert _names(found["themes"], tmp_path, enabled=False) == ["t/a.json"]


def test_pattern_rules(tmp_path: Path) -> None:
    paths = [tmp_path / "a" / "x.md", tmp_path / "a" / "y.md", tmp_path / "b" / "SKILL.md"]
    assert apply_patterns(paths, ["a/*"], tmp_path) == set(paths[:2])
    assert apply_patterns(paths, ["!a/x.md"], tmp_path) == {paths[1], paths[2]}
    assert apply_patterns(paths, ["a/*", "!y.md", "+b"], tmp_path) == {paths[0], paths[2]}
    assert apply_patterns(paths, ["+a/x.md", "-a/x.md"], tmp_path) == {paths[1], paths[2]}


def test_manifest_overrides_match_within_a_segment_as_pi_s_minimatch(tmp_path: Path) -> None:
    """``!prompts/*`` leaves out the templates directly in ``prompts/``, not the ones deeper."""
    for name in ("prompts/top.md", "prompts/deep/inner.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("---\ndescription: d\n---\nbody\n", encoding="utf-8")
    manifest = {"pi": {"prompts": ["prompts/top.md", "prompts/deep/inner.md", "!prompts/*"]}}
    (tmp_path / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    found = package_resources(tmp_path, {"source": "x"})
    assert _names(found["prompts"], tmp_path) == ["prompts/deep/inner.md"]


def test_ignore_files_in_package_folders(tmp_path: Path) -> None:
    _files(tmp_path, [
        "skills/a/SKILL.md", "skills/wip/SKILL.md", "prompts/p.md", "prompts/draft.md",
        "themes/t.json", "themes/old.json", "extensions/e.py", "extensions/scratch.py",
    ])  # fmt: skip
    (tmp_path / "skills" / ".gitignore").write_text("wip/\n", encoding="utf-8")
    (tmp_path / "prompts" / ".ignore").write_text("draft.md\n", encoding="utf-8")
    (tmp_path / "themes" / ".fdignore").write_text("old.*\n", encoding="utf-8")
    (tmp_path / "extensions" / ".gitignore").write_text("scratch.py\n", encoding="utf-8")
    found = package_resources(tmp_path)
    assert _names(found["skills"], tmp_path) == ["skills/a/SKILL.md"]
    assert _names(found["prompts"], tmp_path) == ["prompts/p.md"]
    assert _names(found["themes"], tmp_path) == ["themes/t.json"]
    assert _names(found["extensions"], tmp_path) == ["extensions/e.py"]
