"""docs/extensions.md maps the extension reference; docs/extensions-coverage.md is generated from it."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "extension_coverage", ROOT / "scripts" / "extension_coverage.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_coverage_doc_is_up_to_date() -> None:
    assert load_script().main(["--check"]) == 0, "run scripts/extension_coverage.py"


def test_every_unsupported_item_says_why() -> None:
    rows = load_script().rows((ROOT / "docs" / "extensions.md").read_text(encoding="utf-8"))
    assert len(rows) >= 254  # issue 16 counted 254 items; the table splits some of them finer
    assert [item for _section, item, status, note in rows if status != "works" and not note] == []


def test_every_ui_method_of_the_doc_exists_in_every_mode() -> None:
    from piko.extensions.ui import UI_METHODS
    from piko.extensions.ui import NoOpUI
    from piko.plugins.modes.interactive.ui import InteractiveUI
    from piko.plugins.modes.rpc.ui import RpcUI

    for ui in (NoOpUI, RpcUI, InteractiveUI):
        assert [name for name in UI_METHODS if not callable(getattr(ui, name, None))] == []


def test_every_item_is_one_row() -> None:
    rows = load_script().rows((ROOT / "docs" / "extensions.md").read_text(encoding="utf-8"))
    items = [(section, item) for section, item, _status, _note in rows]
    assert sorted({i for i in items if items.count(i) > 1}) == []
