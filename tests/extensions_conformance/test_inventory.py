"""Every scenario of the fixtures is run by a test of this folder, and every port is used."""

from __future__ import annotations

from pathlib import Path

from ext_conformance_kit import EXTENSIONS
from ext_conformance_kit import PORTS
from ext_conformance_kit import scenario_files

HERE = Path(__file__).resolve().parent


def all_test_sources() -> str:
    return "\n".join(
        p.read_text(encoding="utf-8") for p in sorted(HERE.glob("test_*.py")) if p.name != "test_inventory.py"
    )


def test_every_scenario_has_its_test() -> None:
    sources = all_test_sources()
    missing = [
        s["id"]
        for data in scenario_files().values()
        for s in data["scenarios"]
        if f'"{s["id"]}"' not in sources
    ]
    assert missing == []


def test_every_fixture_extension_has_a_port_on_disk() -> None:
    assert set(PORTS) == set(scenario_files())
    for name in PORTS.values():
        assert (EXTENSIONS / name).exists(), name
