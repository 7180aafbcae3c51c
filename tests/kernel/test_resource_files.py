"""Folder scans for skills, templates and themes: pi's discovery rules and its ignore files."""

from __future__ import annotations

from pathlib import Path

from piko.resources.files import files_with_suffix
from piko.resources.files import markdown_files
from piko.resources.files import skill_files


def _tree(root: Path, files: list[str]) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n", encoding="utf-8")


def _rel(paths: list[Path], root: Path) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]


def test_skill_folders_stop_at_skill_md_and_skip_hidden_and_node_modules(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        ["loose.md", "a/SKILL.md", "a/nested/SKILL.md", "b/c/SKILL.md", ".hidden/SKILL.md",
         "node_modules/x/SKILL.md", "b/notes.md"],
    )  # fmt: skip
    assert _rel(skill_files(tmp_path, root_files=True), tmp_path) == [
        "a/SKILL.md",
        "b/c/SKILL.md",
        "loose.md",
    ]
    assert _rel(skill_files(tmp_path, root_files=False), tmp_path) == ["a/SKILL.md", "b/c/SKILL.md"]


def test_ignore_files_hide_skills_as_pi_reads_them(tmp_path: Path) -> None:
    """Expected results checked with pi 0.73.1's own ``loadSkillsFromDir`` on the same trees."""
    _tree(
        tmp_path,
        ["keep/SKILL.md", "drafts/one/SKILL.md", "build/SKILL.md", "nested/inner/SKILL.md",
         "nested/other/SKILL.md", "deep/x/tmp/SKILL.md", "wip.md", "final.md"],
    )  # fmt: skip
    # drafts/ is a folder pattern; /build loses its slash; tmp matches at any depth; nested's own
    # "inner" is read as nested/inner
    (tmp_path / ".gitignore").write_text("# comment\n\ndrafts/\n/build\n", encoding="utf-8")
    (tmp_path / ".ignore").write_text("tmp\n", encoding="utf-8")
    (tmp_path / "nested" / ".fdignore").write_text("inner\n", encoding="utf-8")
    assert _rel(skill_files(tmp_path, root_files=True), tmp_path) == [
        "final.md", "keep/SKILL.md", "nested/other/SKILL.md", "wip.md",
    ]  # fmt: skip
    # *.md matches at any depth, SKILL.md files included; ! brings one back
    (tmp_path / ".gitignore").write_text("drafts/\n/build\n*.md\n!final.md\n", encoding="utf-8")
    assert _rel(skill_files(tmp_path, root_files=True), tmp_path) == ["final.md"]


def test_below_an_ignored_skill_md_the_search_goes_on(tmp_path: Path) -> None:
    """As pi 0.73.1's ``loadSkillsFromDir`` does (checked on the same tree)."""
    _tree(tmp_path, ["a/SKILL.md", "a/sub/SKILL.md"])
    (tmp_path / ".gitignore").write_text("a/SKILL.md\n", encoding="utf-8")
    assert _rel(skill_files(tmp_path, root_files=True), tmp_path) == ["a/sub/SKILL.md"]


def test_a_folder_pattern_does_not_hide_a_file_of_that_name(tmp_path: Path) -> None:
    _tree(tmp_path, ["notes/a.md", "sub/notes"])
    (tmp_path / ".gitignore").write_text("notes/\n", encoding="utf-8")
    assert _rel(files_with_suffix(tmp_path, ".md"), tmp_path) == []
    assert _rel(files_with_suffix(tmp_path, "notes"), tmp_path) == ["sub/notes"]


def test_markdown_files_recursive_or_not_with_ignores(tmp_path: Path) -> None:
    _tree(tmp_path, ["a.md", "b.txt", "sub/c.md", "sub/skip.md", "gen/d.md"])
    (tmp_path / ".gitignore").write_text("gen\n", encoding="utf-8")
    (tmp_path / "sub" / ".ignore").write_text("skip.md\n", encoding="utf-8")
    assert _rel(markdown_files(tmp_path, recursive=False), tmp_path) == ["a.md"]
    assert _rel(markdown_files(tmp_path, recursive=True), tmp_path) == ["a.md", "sub/c.md"]
