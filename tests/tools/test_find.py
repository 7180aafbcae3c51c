"""The find tool: fd's glob semantics over ``rg --files``, directories, ignore files, limits."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from tool_harness import ToolRun
from tool_harness import aborted_signal
from tool_harness import make_app
from tool_harness import run_tool

from piko.plugins.tools.find import GlobMatcher
from piko.plugins.tools.find import glob_to_regex


def write(root: Path, *paths: str) -> None:
    for rel in paths:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")


def find_run(root: Path, **params: Any) -> ToolRun:
    return run_tool("find", params, root, app=make_app(root))


def listing(run: ToolRun) -> list[str]:
    assert run.ok, run.error
    return run.text.split("\n")


TREE = (
    "README.md", "setup.py", "src/main.py", "src/Mixed.PY", "src/app.ts", "src/app.spec.ts",
    "src/lib/deep/inner.ts", "tests/test_a.py", "tests/sub/test_b.py", "docs/api/index.md",
    ".env", ".github/workflows/ci.yml", "src.py/notadir.txt", "weird name.txt", "data.v2.json",
)  # fmt: skip


@pytest.fixture
def tree(work: Path) -> Path:
    write(work, *TREE)
    return work


# Expected listings were checked against pi 0.73.1's own find tool (fd --glob).
@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("*.py", ["setup.py", "src.py/", "src/Mixed.PY", "src/main.py", "tests/sub/test_b.py", "tests/test_a.py"]),
        ("*.PY", ["src/Mixed.PY"]),  # an upper-case letter makes the match case-sensitive
        ("**/*.ts", ["src/app.spec.ts", "src/app.ts", "src/lib/deep/inner.ts"]),
        ("src/*.ts", ["src/app.spec.ts", "src/app.ts"]),
        ("src/**/*.ts", ["src/app.spec.ts", "src/app.ts", "src/lib/deep/inner.ts"]),
        ("tests/**/test_*.py", ["tests/sub/test_b.py", "tests/test_a.py"]),
        ("lib", ["src/lib/"]),
        ("deep", ["src/lib/deep/"]),
        ("src*", ["src.py/", "src/"]),
        ("docs/**", ["docs/api/", "docs/api/index.md"]),
        ("*test*", ["tests/", "tests/sub/test_b.py", "tests/test_a.py"]),
        ("readme.md", ["README.md"]),
        ("*.{py,ts}", [
            "setup.py", "src.py/", "src/Mixed.PY", "src/app.spec.ts", "src/app.ts", "src/lib/deep/inner.ts",
            "src/main.py", "tests/sub/test_b.py", "tests/test_a.py",
        ]),
        ("[st]*", ["setup.py", "src.py/", "src/", "tests/", "tests/sub/", "tests/sub/test_b.py", "tests/test_a.py"]),
        ("[!s]*.py", ["src/Mixed.PY", "src/main.py", "tests/sub/test_b.py", "tests/test_a.py"]),
        ("?eadme*", ["README.md"]),
        ("*.v2.*", ["data.v2.json"]),
        ("weird*", ["weird name.txt"]),
        (".*", [".env", ".github/"]),
        ("**/workflows/*.yml", [".github/workflows/ci.yml"]),
        ("ci.yml", [".github/workflows/ci.yml"]),
        ("c/d", ["No files found matching pattern"]),
        ("*.rs", ["No files found matching pattern"]),
    ],
)  # fmt: skip
def test_glob_semantics(tree: Path, pattern: str, expected: list[str]) -> None:
    run = find_run(tree, pattern=pattern)
    assert listing(run) == expected
    assert run.details is None


def test_match_everything(tree: Path) -> None:
    everything = listing(find_run(tree, pattern="*"))
    assert "src/" in everything and "src/lib/deep/" in everything and "src/lib/deep/inner.ts" in everything
    assert everything == sorted(everything)
    assert listing(find_run(tree, pattern="**")) == everything
    assert listing(find_run(tree, pattern="")) == everything
    assert listing(find_run(tree, pattern="**/*")) == everything


def test_path_parameter_makes_results_relative_to_it(tree: Path) -> None:
    assert listing(find_run(tree, pattern="*.ts", path="src/lib")) == ["deep/inner.ts"]
    assert listing(find_run(tree, pattern="lib/**/*.ts", path="src")) == ["lib/deep/inner.ts"]
    assert listing(find_run(tree, pattern="*.ts", path=str(tree / "src" / "lib"))) == ["deep/inner.ts"]


def test_gitignore_without_a_git_repo(work: Path) -> None:
    write(work, ".gitignore", "build/\n*.log\n", "build/out.js", "app.log", "src/app.js", "sub/.gitignore")
    (work / ".gitignore").write_text("build/\n*.log\n")
    (work / "sub" / ".gitignore").write_text("local.txt\n")
    write(work, "sub/local.txt", "sub/kept.txt")
    assert listing(find_run(work, pattern="*.js")) == ["src/app.js"]
    assert listing(find_run(work, pattern="*.txt")) == ["sub/kept.txt"]
    assert listing(find_run(work, pattern="*.log")) == ["No files found matching pattern"]


def test_git_repo_ignores_and_never_lists_git_dir(work: Path) -> None:
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    write(work, "kept.txt", "ignored.txt")
    (work / ".gitignore").write_text("ignored.txt\n")
    assert listing(find_run(work, pattern="*")) == [".gitignore", "kept.txt"]
    assert listing(find_run(work, pattern="HEAD")) == ["No files found matching pattern"]


def test_limit_notice_and_details(tree: Path) -> None:
    run = find_run(tree, pattern="*.py", limit=2)
    lines = listing(run)
    assert len(lines) == 4 and lines[2] == ""
    assert lines[3] == "[2 results limit reached. Use limit=4 for more, or refine pattern]"
    assert run.details == {"resultLimitReached": 2}


def test_byte_limit(work: Path) -> None:
    names = [f"{'n' * 200}{i:04d}.txt" for i in range(400)]
    write(work, *names)
    run = find_run(work, pattern="*.txt")
    text = run.text
    assert text.endswith("\n\n[50.0KB limit reached]")
    assert set(run.details) == {"truncation"}
    assert run.details["truncation"]["totalLines"] == 400
    assert run.details["truncation"]["maxLines"] == 2**53 - 1


def test_default_limit_is_1000(work: Path) -> None:
    write(work, *(f"d{i // 100}/f{i}.c" for i in range(1100)))
    run = find_run(work, pattern="*.c")
    assert run.details == {"resultLimitReached": 1000}
    assert run.text.endswith("[1000 results limit reached. Use limit=2000 for more, or refine pattern]")


def test_errors(tree: Path) -> None:
    assert str(find_run(tree, pattern="*", path="nope").error) == f"Path not found: {tree / 'nope'}"
    assert str(find_run(tree, pattern="*", path="setup.py").error) == f"Not a directory: {tree / 'setup.py'}"


def test_abort_before_start(tree: Path) -> None:
    run = run_tool("find", {"pattern": "*"}, tree, app=make_app(tree), signal=aborted_signal())
    assert str(run.error) == "Operation aborted"


def test_directories_without_listed_files_are_not_reported(work: Path) -> None:
    # a known difference from fd: rg lists files only, so a directory shows up through its files
    (work / "empty").mkdir()
    write(work, "full/a.txt")
    assert listing(find_run(work, pattern="*")) == ["full/", "full/a.txt"]


# -- glob translation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("*.py", "a.py", True),
        ("*.py", "a/b.py", False),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("**/b", "b", True),
        ("**/b", "x/b", True),
        ("a/**", "a/x/y", True),
        ("a/**", "a", False),
        ("a**b", "a/b", False),
        ("a**b", "axxb", True),
        ("?", "/", False),
        ("[a-c]x", "bx", True),
        ("[!a-c]x", "dx", True),
        ("[!a-c]x", "/x", False),
        ("[]]", "]", True),
        ("{a,b/c}", "b/c", True),
        (r"\*", "*", True),
        (r"\*", "a", False),
        ("a[", "a[", True),
        ("{a,b", "{a,b", True),
    ],
)
def test_glob_to_regex(glob: str, path: str, matches: bool) -> None:
    import re

    assert (re.fullmatch(glob_to_regex(glob), path) is not None) is matches


def test_full_path_patterns_see_the_search_root() -> None:
    # fd matches path patterns against the absolute path, as pi's find does
    matcher = GlobMatcher("proj/*.txt", "/home/me/proj")
    assert matcher.full_path and matcher.matches("a.txt")
    assert not matcher.matches("sub/a.txt")
    assert GlobMatcher("/home/me/proj/*.txt", "/home/me/proj").matches("a.txt")


def test_name_pattern_equivalences() -> None:
    assert not GlobMatcher("**/*.py", "/r").full_path  # "**/name" is a name pattern
    assert GlobMatcher("*.py", "/r").suffix == ".py"
    assert GlobMatcher("Makefile", "/r").matches("sub/Makefile")
    assert not GlobMatcher("Makefile", "/r").matches("sub/XMakefile")
    assert GlobMatcher("makefile", "/r").matches("Makefile")


# -- pi's own find tool (tests/fixtures/pi_exec_oracle) -------------------------------------------

ORACLE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "pi_exec_oracle"
# fd lists directories that hold no listed file; piko's find sees directories through their files
DIRS_WITHOUT_LISTED_FILES = {"emptydir/", "logs/"}


def oracle_cases(tool: str) -> list[Any]:
    import json

    spec = json.loads((ORACLE_DIR / "cases.json").read_text())
    results = json.loads((ORACLE_DIR / "oracle.json").read_text())["results"]
    return [
        pytest.param(spec["tree"], case, results[f"{tool}/{case['name']}"], id=f"{tool}/{case['name']}")
        for case in spec["cases"]
        if case["tool"] == tool
    ]


def make_oracle_tree(root: Path, tree: dict[str, str]) -> None:
    for rel, content in tree.items():
        path = root / rel
        if rel.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode())
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def normalise(run: ToolRun) -> dict[str, Any]:
    """The oracle's form: sorted result lines, notice and details (without truncation) apart."""
    if not run.ok:
        return {"ok": False, "error": str(run.error)}
    body, _, notice = run.text.partition("\n\n[")
    details = run.details
    if details is not None:
        details = {key: value for key, value in details.items() if key != "truncation"}
    return {
        "ok": True,
        "lines": sorted(body.split("\n")),
        "notice": f"[{notice}" if notice else None,
        "details": details,
    }


@pytest.mark.parametrize(("tree", "case", "expected"), oracle_cases("find"))
def test_same_as_pi_find(
    work: Path, tree: dict[str, str], case: dict[str, Any], expected: dict[str, Any]
) -> None:
    make_oracle_tree(work, tree)
    params = {
        key: str(value).replace("<CWD>", str(work)) if key == "path" else value
        for key, value in case["params"].items()
    }
    observed = normalise(find_run(work, **params))
    expected = dict(expected)
    lines = [line for line in expected["lines"] if line not in DIRS_WITHOUT_LISTED_FILES]
    expected["lines"] = lines or ["No files found matching pattern"]
    assert observed == expected
