"""``ts_oracle/dynamic_validation_results.json``: what 205 extensions registered in the TypeScript pi.

Two checks against it: our ports of the fixtures' extensions register what the originals
registered (same tools with the same schemas, commands, shortcuts, flags, event handlers,
providers); and every registration of the 139 extensions pi loaded, replayed through ``pi`` by
``oracle_replay``, is accepted by piko and reads back the same. (The 66 that pi failed to load
registered nothing to compare.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ext_conformance_kit import EXTENSIONS
from ext_conformance_kit import PORTS
from ext_conformance_kit import load
from ext_conformance_kit import port

ORACLE = load("ts_oracle/dynamic_validation_results.json")
LOADED = {r["id"]: r["registrations"] for r in ORACLE["results"] if r["load_success"]}
EVENT_ALIASES = {"session_branch": "session_fork", "session_before_branch": "session_before_fork"}


def registrations(app: Any, plugin: str, oracle: dict[str, Any]) -> dict[str, Any]:
    """What ``plugin`` registered in piko, in the oracle's shape (the handlers of the events and
    the providers the ``oracle`` entry names looked up)."""
    mine = lambda items: [item for item in items if item.plugin == plugin]  # noqa: E731
    handlers = {}
    for event in sorted(oracle["handlers"]):
        count = len(
            [h for h in app.dispatcher.handlers(EVENT_ALIASES.get(event, event)) if h.plugin == plugin]
        )
        if count:
            handlers[event] = count
    named = [app.model_registry.provider(p["name"]) for p in oracle["providers"]]
    providers = [p for p in named if p is not None and p.plugin == plugin]
    return {
        "handlers": handlers,
        "tools": sorted(
            (
                {"name": t.name, "label": t.label, "description": t.description, "parameters": t.parameters}
                for t in mine(app.registries.tools)
            ),
            key=lambda t: t["name"],
        ),
        "commands": sorted((c.name, c.description) for c in mine(app.registries.commands)),
        "shortcuts": sorted((s.key, s.description) for s in mine(app.registries.shortcuts)),
        "flags": sorted((f.name, f.type, f.default, f.description) for f in mine(app.registries.flags)),
        "messageRenderers": sorted(m.custom_type for m in mine(app.registries.message_renderers)),
        "providers": sorted(
            (p.name, [(m.id, m.name) for m in app.model_registry.models_of(p.name)]) for p in providers
        ),
    }


def expected(oracle: dict[str, Any], known_events: set[str]) -> dict[str, Any]:
    """An oracle entry in the shape of :func:`registrations` (events piko has)."""
    return {
        "handlers": {
            e: n for e, n in sorted(oracle["handlers"].items()) if EVENT_ALIASES.get(e, e) in known_events
        },
        "tools": sorted(
            ({k: t[k] for k in ("name", "label", "description", "parameters")} for t in oracle["tools"]),
            key=lambda t: t["name"],
        ),
        "commands": sorted((c["name"], c["description"]) for c in oracle["commands"]),
        "shortcuts": sorted((s["shortcut"], s["description"]) for s in oracle["shortcuts"]),
        "flags": sorted((f["name"], f["type"], f["default"], f["description"]) for f in oracle["flags"]),
        "messageRenderers": sorted(oracle["messageRenderers"]),
        "providers": sorted(
            (p["name"], [(m["id"], m["name"]) for m in p["models"]]) for p in oracle["providers"]
        ),
    }


def known_events() -> set[str]:
    from piko.extensions.extension_api import subscribable_events

    return set(subscribable_events())


@pytest.fixture(scope="module")
def boot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[Path, dict[str, Any] | None], Any]]:
    """``boot(extension, registrations=None)``: an App with the extension loaded, in an isolated
    home shared by the module (``$ORACLE_REPLAY`` set to a file of ``registrations``)."""
    from piko.testing.home import PikoHome
    from piko.testing.session import PikoSession

    monkeypatch = pytest.MonkeyPatch()
    root = tmp_path_factory.mktemp("oracle")
    session = PikoSession(PikoHome(root).isolate(monkeypatch))
    file = root / "registrations.json"
    monkeypatch.setenv("ORACLE_REPLAY", str(file))

    def start(extension: Path, oracle: dict[str, Any] | None = None) -> Any:
        if oracle is not None:
            file.write_text(json.dumps(oracle))
        return session.boot(extensions=[extension])

    try:
        yield start
    finally:
        monkeypatch.undo()


OURS = sorted(ext_id for ext_id in PORTS if ext_id in LOADED)


@pytest.mark.parametrize("ext_id", OURS)
def test_port_registers_what_the_original_registered(ext_id: str, boot: Any) -> None:
    app = boot(port(ext_id))
    oracle = LOADED[ext_id]
    assert registrations(app, port(ext_id).stem, oracle) == expected(oracle, known_events())


def test_the_ports_cover_the_oracle_entries_of_the_fixture_extensions() -> None:
    """Every fixture extension pi loaded is compared above; ``subagent`` failed to load in pi
    (its TypeScript imports ``parseFrontmatter``, which that pi did not export), the base
    fixtures (``minimal_*``) are not in the corpus."""
    failed = {r["id"]: r["error"] for r in ORACLE["results"] if not r["load_success"]}
    assert "parseFrontmatter" in failed["subagent"]
    assert set(PORTS) - set(OURS) == {"subagent"} | {e for e in PORTS if e.startswith("minimal_")}


@pytest.mark.parametrize("oracle_id", sorted(LOADED))
def test_corpus_registrations_replay(oracle_id: str, boot: Any) -> None:
    oracle = LOADED[oracle_id]
    app = boot(EXTENSIONS / "oracle_replay.py", oracle)
    known = known_events()
    assert registrations(app, "oracle_replay", oracle) == expected(oracle, known)
    # an event pi accepted but piko does not have is one warning, and the rest loaded
    for event in sorted(set(oracle["handlers"]) - known - set(EVENT_ALIASES)):
        warnings = [
            line for line in app.registries.diagnostics + app.pm.diagnostics if f"pi.on('{event}')" in line
        ]
        assert len(warnings) == 1, (event, app.pm.diagnostics)


def test_oracle_summary_is_what_its_results_say() -> None:
    results = ORACLE["results"]
    summary = ORACLE["summary"]
    assert (summary["total"], summary["passed"], summary["failed"]) == (
        len(results), len(LOADED), len(results) - len(LOADED)
    )  # fmt: skip
