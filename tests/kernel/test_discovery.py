"""Entry-point discovery: parsing, scanning dist-info without importing, and the cache."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from piko.platform import discovery
from piko.platform.discovery import EntryPointRecord
from piko.platform.discovery import parse_entry_points


def test_parse_entry_points_reads_only_the_group() -> None:
    text = """
    [console_scripts]
    pi = piko.app.cli:main

    [piko]
    # a comment
    ; another
    tools.read = piko.plugins.tools.read
    hello=hello_plugin:plugin [extra]

    [other]
    x = y
    """
    assert parse_entry_points(text) == [
        ("tools.read", "piko.plugins.tools.read"),
        ("hello", "hello_plugin:plugin"),
    ]
    assert parse_entry_points(text, "other") == [("x", "y")]
    assert parse_entry_points("") == []


def test_record_module_and_attr() -> None:
    record = EntryPointRecord("a", "pkg.mod:obj.attr", "dist", "1", "/x")
    assert (record.module, record.attr) == ("pkg.mod", "obj.attr")
    plain = EntryPointRecord("b", "pkg.mod", "dist", "1", "/x")
    assert (plain.module, plain.attr) == ("pkg.mod", None)


def test_scan_finds_dist_info_and_egg_info_without_importing(env, fake_dist) -> None:
    fake_dist(
        "alpha_plugin", "1.2.3", {"alpha": "alpha_mod"}, {"alpha_mod": "raise RuntimeError('imported!')\n"}
    )
    fake_dist("beta", "0.1", {"beta.one": "beta_mod:one", "beta.two": "beta_mod:two"})
    fake_dist("unrelated", "2.0", {"x": "y"}, group="console_scripts")
    egg = env.site / "legacy.egg-info"
    egg.mkdir()
    (egg / "entry_points.txt").write_text("[piko]\nlegacy = legacy_mod\n", encoding="utf-8")

    records = discovery.scan(paths=[str(env.site)], use_cache=False)

    assert [(r.name, r.value, r.dist_name, r.dist_version) for r in records] == [
        ("alpha", "alpha_mod", "alpha_plugin", "1.2.3"),
        ("beta.one", "beta_mod:one", "beta", "0.1"),
        ("beta.two", "beta_mod:two", "beta", "0.1"),
        ("legacy", "legacy_mod", "legacy", ""),
    ]
    assert all(r.location == str(env.site) for r in records)
    assert "alpha_mod" not in sys.modules  # nothing was imported


def test_scan_order_follows_paths(env, tmp_path: Path) -> None:
    from piko.platform.discovery import scan

    first, second = tmp_path / "first", tmp_path / "second"
    _install(first, "one", {"p1": "m1"})
    _install(second, "two", {"p2": "m2"})
    names = [
        r.name for r in scan(paths=[str(second), str(tmp_path / "missing"), str(first)], use_cache=False)
    ]
    assert names == ["p2", "p1"]


def _install(site: Path, dist: str, eps: dict[str, str]) -> None:
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir(parents=True)
    body = "".join(f"{k} = {v}\n" for k, v in eps.items())
    (info / "entry_points.txt").write_text(f"[piko]\n{body}", encoding="utf-8")


def test_cache_is_written_reused_and_invalidated_by_an_install(env, fake_dist) -> None:
    fake_dist("first", "1.0", {"first": "first_mod"})
    paths = [str(env.site)]

    cold = discovery.scan(paths=paths)
    cache_files = list(env.cache_dir.glob("entry-points-piko-*.json"))
    assert len(cache_files) == 1
    assert [r.name for r in cold] == ["first"]

    # A warm scan answers from the cache: prove it by planting a record only the cache knows.
    from piko.lib import jsonio

    data = jsonio.read_json_file(cache_files[0])
    data["payload"].append(["cached-only", "x", "d", "1", paths[0]])
    cache_files[0].write_text(jsonio.dumps(data), encoding="utf-8")
    assert [r.name for r in discovery.scan(paths=paths)] == ["first", "cached-only"]

    # Installing a distribution changes the directory's mtime: the cache is rebuilt.
    fake_dist("second", "1.0", {"second": "second_mod"})
    stat = os.stat(env.site)
    os.utime(env.site, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert [r.name for r in discovery.scan(paths=paths)] == ["first", "second"]


def test_cache_can_be_bypassed(env, fake_dist, monkeypatch) -> None:
    fake_dist("first", "1.0", {"first": "first_mod"})
    monkeypatch.setenv("PIKO_NO_CACHE", "1")
    assert [r.name for r in discovery.scan(paths=[str(env.site)])] == ["first"]
    assert not list(env.cache_dir.glob("*.json"))


def test_corrupt_or_foreign_cache_is_ignored(env, fake_dist) -> None:
    fake_dist("first", "1.0", {"first": "first_mod"})
    paths = [str(env.site)]
    discovery.scan(paths=paths)
    (cache_file,) = env.cache_dir.glob("entry-points-piko-*.json")
    for junk in (
        "{not json",
        '{"version": 99, "state": [], "records": []}',
        '{"version": 1, "state": "x"}',
        "[]",
    ):
        cache_file.write_text(junk, encoding="utf-8")
        assert [r.name for r in discovery.scan(paths=paths)] == ["first"]


def test_unwritable_cache_dir_still_scans(env, fake_dist, monkeypatch) -> None:
    fake_dist("first", "1.0", {"first": "first_mod"})
    blocker = env.root / "not-a-dir"
    blocker.write_text("file", encoding="utf-8")
    monkeypatch.setenv("PIKO_CACHE_DIR", str(blocker / "cache"))
    assert [r.name for r in discovery.scan(paths=[str(env.site)])] == ["first"]
