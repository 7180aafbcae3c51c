"""Parsing package sources: schemes, identities, pins, and how sources are written to settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from piko.plugins.packages.sources import PARSERS
from piko.plugins.packages.sources import SourceError
from piko.plugins.packages.sources import scheme_of
from piko.plugins.packages.sources import settings_form

BASE = Path("/home/u/.pi/agent")


def parse(source: str):
    return PARSERS[scheme_of(source)](source, BASE)


@pytest.mark.parametrize(
    "source, scheme, identity, pinned",
    [
        ("piko-foo", "pip", "pip:piko-foo", False),
        ("pip:Piko_Foo.Bar>=1,<2", "pip", "pip:piko-foo-bar", False),
        ("pip:piko-foo==1.2.0", "pip", "pip:piko-foo", True),
        ("pip:piko-foo[extra]==2.*", "pip", "pip:piko-foo", False),
        ("pip:piko-foo @ https://example.com/piko_foo-1.0-py3-none-any.whl", "pip", "pip:piko-foo", True),
        ("./dist/piko_foo-1.0-py3-none-any.whl", "pip", "pip:piko-foo", True),
        ("pip:git+https://example.com/a/b@0123abc#egg=piko-bar", "pip", "pip:piko-bar", True),
        ("git:github.com/user/repo", "git", "git:github.com/user/repo", False),
        ("git:github.com/user/repo@v1", "git", "git:github.com/user/repo", True),
        ("git:github.com/user/repo#main", "git", "git:github.com/user/repo", True),
        ("https://github.com/user/repo.git", "git", "git:github.com/user/repo", False),
        ("git:git@github.com:user/repo@v2", "git", "git:github.com/user/repo", True),
        ("ssh://git@git.acme.com/team/tools", "git", "git:git.acme.com/team/tools", False),
        ("git:file:///srv/repos/tools#v3", "git", "git:local/srv/repos/tools", True),
        ("./local/pack", "path", f"path:{BASE}/local/pack", True),
        ("path:/opt/pack", "path", "path:/opt/pack", True),
        ("npm:@foo/bar@1.0.0", "npm", "npm:@foo/bar", True),
        ("npm:pi-skills", "npm", "npm:pi-skills", False),
    ],
)
def test_sources(source: str, scheme: str, identity: str, pinned: bool) -> None:
    ref = parse(source)
    assert (ref.scheme, ref.identity, ref.pinned) == (scheme, identity, pinned)


def test_git_details() -> None:
    ref = parse("git:github.com/user/repo@v1")
    assert (ref.repo, ref.host, ref.repo_path, ref.ref) == (
        "https://github.com/user/repo",
        "github.com",
        "user/repo",
        "v1",
    )
    scp = parse("git:git@github.com:user/repo")
    assert scp.repo == "git@github.com:user/repo" and scp.ref is None


@pytest.mark.parametrize(
    "source", ["frob:thing", "git:nohost", "npm:Not A Name", "pip:foo bar", "git:github.com/../etc"]
)
def test_bad_sources(source: str) -> None:
    with pytest.raises(SourceError):
        parse(source)


def test_settings_form() -> None:
    assert settings_form(parse("path:/home/u/.pi/agent/packs/x"), BASE) == "./packs/x"
    assert settings_form(parse("path:/srv/x"), BASE) == "../../../../srv/x"
    assert (
        settings_form(parse("pip:./w/piko_foo-1.0-py3-none-any.whl"), BASE)
        == "pip:./w/piko_foo-1.0-py3-none-any.whl"
    )
    assert settings_form(parse("git:file:///srv/r#v1"), BASE) == "git:/srv/r#v1"
    assert settings_form(parse("npm:x@1"), BASE) == "npm:x@1"


def test_a_source_class_must_give_parse_install_and_remove() -> None:
    """``PackageSource``'s three abstract methods: a subclass lacking one cannot be made, and the
    error names what is missing; the rest have defaults."""
    from piko.plugins.packages.base import PackageSource
    from piko.plugins.packages.sources import PackageRef

    class ParseOnly(PackageSource):
        def parse(self, source: str, base: Path) -> PackageRef:
            return PackageRef("demo", source, source, f"demo:{source}")

    with pytest.raises(TypeError, match=r"install.*remove"):
        ParseOnly()  # type: ignore[abstract]

    class Whole(ParseOnly):
        def install(self, ref: PackageRef, ctx: object) -> None:
            pass

        def remove(self, ref: PackageRef, ctx: object) -> None:
            pass

    whole = Whole()
    ref = whole.parse("x", BASE)
    assert whole.installed_path(ref, None) is None  # type: ignore[arg-type]
    assert whole.details(ref, None) == {} and whole.declared_resources(ref, None) == {}  # type: ignore[arg-type]
