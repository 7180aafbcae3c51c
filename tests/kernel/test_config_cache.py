"""piko.config.cache: a cache document is read back only for its version and key, and is never needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from piko.config import cache


def test_a_document_is_read_back_for_its_version_and_key_only(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    cache.write(path, 1, ["a", 1], {"x": [1, 2]})
    assert cache.read(path, 1, ["a", 1]) == {"x": [1, 2]}
    assert cache.read(path, 2, ["a", 1]) is None  # another format
    assert cache.read(path, 1, ["a", 2]) is None  # made from something else
    path.write_text("{not json", encoding="utf-8")
    assert cache.read(path, 1, ["a", 1]) is None
    assert cache.read(tmp_path / "missing.json", 1, ["a", 1]) is None


def test_an_unwritable_folder_and_no_cache_lose_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder would be", encoding="utf-8")
    cache.write(blocked / "doc.json", 1, "k", "payload")  # no error
    monkeypatch.setenv("PIKO_NO_CACHE", "1")
    path = tmp_path / "doc.json"
    cache.write(path, 1, "k", "payload")
    assert not path.exists()
    monkeypatch.delenv("PIKO_NO_CACHE")
    cache.write(path, 1, "k", "payload")
    monkeypatch.setenv("PIKO_NO_CACHE", "1")
    assert cache.read(path, 1, "k") is None
