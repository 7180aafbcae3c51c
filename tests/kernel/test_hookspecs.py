"""Meta-tests: every hook is documented, in docs/hooks.md, tested, and its table row matches pi's spec."""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path
from types import ModuleType

import pytest

from piko.data import events
from piko.lib.records import record_fields
from piko.platform import hookspecs
from piko.platform.semantics import Semantics
from piko.platform.semantics import declared

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
HOOKS_DOC = ROOT / "docs" / "hooks.md"

HOOK_NAMES = sorted(name for name in dir(hookspecs) if name.startswith("piko_"))

SEMANTICS = {name: spec.semantics for name, spec in declared().items()}


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_hooks_doc", ROOT / "scripts" / "gen_hooks_doc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    return load_generator()


def test_every_hook_is_a_spec_with_a_docstring() -> None:
    assert len(HOOK_NAMES) > 40
    for name in HOOK_NAMES:
        spec = getattr(hookspecs, name)
        assert getattr(spec, "piko_spec", None) is not None, f"{name} is not marked @hookspec"
        doc = inspect.getdoc(spec) or ""
        assert doc.strip(), f"{name} has no docstring"
        first_line = doc.splitlines()[0]
        assert first_line.endswith((".", "?")), f"{name}: the first line should be a sentence: {first_line!r}"
        for param in inspect.signature(spec).parameters:
            if param != "ctx" and not (param == "event" and _event_class(spec) is not None):
                assert f":param {param}:" in doc, f"{name} does not document {param!r}"


def _event_class(spec: object) -> type | None:
    """The event class a spec's ``event`` parameter names, whose fields the reference lists."""
    annotation = inspect.signature(spec).parameters["event"].annotation  # type: ignore[arg-type]
    return getattr(events, annotation, None) if isinstance(annotation, str) else None


def test_the_reference_lists_each_events_fields_from_its_class() -> None:
    text = HOOKS_DOC.read_text(encoding="utf-8")
    for name in HOOK_NAMES:
        spec = getattr(hookspecs, name)
        if "event" not in inspect.signature(spec).parameters or _event_class(spec) is None:
            continue
        cls = _event_class(spec)
        fields = ", ".join(field.name for field in record_fields(cls))
        assert f"- **`event`**: `{cls.__name__}({fields})`" in text, name
        # the docstring does not repeat the list (a copy beside the class drifts from it)
        assert f"``{cls.__name__}(" not in (inspect.getdoc(spec) or ""), name


def test_every_hook_is_under_a_banner(generator: ModuleType) -> None:
    source = hookspecs.source()
    sections = generator.hook_sections(source)
    assert [title for title, _ in sections][:2] == ["Bootstrap hooks", "Registration hooks"]
    grouped = [name for _title, hooks in sections for name in hooks]
    assert sorted(grouped) == HOOK_NAMES
    assert len(grouped) == len(set(grouped))


def test_every_dispatched_event_has_a_hookspec() -> None:
    assert {f"piko_{name}" for name in SEMANTICS} <= set(HOOK_NAMES)


# Words of the docstrings' "Semantics:" lines -> the dispatcher's Semantics.
DOC_WORDS = {
    "notify": Semantics.NOTIFY,
    "chain": Semantics.CHAIN,
    "modify": Semantics.CHAIN,
    "cancel": Semantics.CANCEL,
    "block": Semantics.BLOCK,
    "first result": Semantics.FIRST,
    "collect": Semantics.COLLECT,
}


@pytest.mark.parametrize("event", sorted(SEMANTICS))
def test_docstring_semantics_agree_with_the_dispatcher(event: str) -> None:
    spec = getattr(hookspecs, f"piko_{event}")
    doc = inspect.getdoc(spec) or ""
    if next(iter(inspect.signature(spec).parameters)) == "request":
        assert (
            "first result" in doc
            or "first `True` wins" in doc
            or "first ``True`` wins" in doc
            or "semantics as" in doc
        )
        return
    # the docs take the word from the ``@event`` declaration; a docstring's own "Semantics:" line
    # (one that qualifies it) must name the same
    match = re.search(r"^Semantics: ([a-z ]+?)(?:[,.(:;]|$)", doc, re.MULTILINE)
    if match:
        assert DOC_WORDS[match.group(1).strip()] is SEMANTICS[event]
    if SEMANTICS[event] is not Semantics.NOTIFY:
        assert "Return value:" in doc, f"piko_{event} does not say what a handler may return"


def test_hooks_doc_lists_every_hook_and_is_up_to_date(generator: ModuleType) -> None:
    text = HOOKS_DOC.read_text(encoding="utf-8")
    for name in HOOK_NAMES:
        assert f"### `{name}(" in text, f"{name} is missing from docs/hooks.md"
    assert text == generator.render(), "docs/hooks.md is out of date: run scripts/gen_hooks_doc.py"


def test_hooks_doc_gives_every_event_its_declared_semantics() -> None:
    sections = re.split(r"^### `", HOOKS_DOC.read_text(encoding="utf-8"), flags=re.MULTILINE)
    by_hook = {section.split("(", 1)[0]: section for section in sections[1:]}
    for event, semantics in SEMANTICS.items():
        section = by_hook[f"piko_{event}"]
        if next(iter(inspect.signature(getattr(hookspecs, f"piko_{event}")).parameters)) == "request":
            continue  # services say "first result" in their own words
        match = re.search(r"^\*\*Semantics:\*\* ([a-z ]+?)(?:[,.(:;]|$)", section, re.MULTILINE)
        assert match, f"docs/hooks.md gives piko_{event} no semantics"
        word = match.group(1).strip()
        assert DOC_WORDS[word] is semantics


def test_generator_check_mode(generator: ModuleType, tmp_path: Path) -> None:
    stale = tmp_path / "hooks.md"
    stale.write_text("old\n", encoding="utf-8")
    assert generator.main(["--check", "--output", str(stale)]) == 1
    assert generator.main(["--output", str(stale)]) == 0
    assert generator.main(["--check", "--output", str(stale)]) == 0


def test_every_hook_appears_in_a_test() -> None:
    """Datasette's rule: a hook nobody tests is a hook nobody knows still works."""
    this = Path(__file__).resolve()
    text = "\n".join(
        path.read_text(encoding="utf-8") for path in sorted(TESTS.rglob("*.py")) if path.resolve() != this
    )
    untested = [name for name in HOOK_NAMES if not re.search(rf"\b{name}\b", text)]
    assert untested == []


# EXISTING_PI_STRUCTURE.md appendix A.2 (event: can modify, can cancel), and pi's docs/extensions.md
# for the events A.2 does not list ("Can modify" for message_end/before_provider_request/
# assistant_message, notification-only for the others).
SPEC_TABLE: dict[str, tuple[bool, bool]] = {
    "project_trust": (True, False),  # pi 1.6's docs/extensions.md: a handler decides
    "resources_discover": (True, False),
    "session_start": (False, False),
    "session_before_switch": (False, True),
    "session_switch": (False, False),
    "session_before_fork": (False, True),
    "session_fork": (False, False),
    "session_before_compact": (True, True),
    "session_compact": (False, False),
    "session_before_tree": (True, True),
    "session_tree": (False, False),
    "session_shutdown": (False, False),
    "context": (True, False),
    "before_agent_start": (True, False),
    "agent_start": (False, False),
    "agent_end": (False, False),
    "turn_start": (False, False),
    "turn_end": (False, False),
    "model_select": (False, False),
    "tool_call": (False, True),
    "tool_result": (True, False),
    "user_bash": (True, False),
    "input": (True, True),
    # pi docs/extensions.md
    "before_provider_request": (True, False),
    "after_provider_response": (False, False),
    "message_start": (False, False),
    "message_update": (False, False),
    "message_end": (True, False),
    "assistant_message": (True, False),
    "tool_execution_start": (False, False),
    "tool_execution_update": (False, False),
    "tool_execution_end": (False, False),
    "thinking_level_select": (False, False),
    "auto_compaction_start": (False, False),
    "auto_compaction_end": (False, False),
    "auto_retry_start": (False, False),
    "auto_retry_end": (False, False),
    "extension_error": (False, False),
    # declared for subscription (extensions.md section 8, pi 1.6); see docs/extensions.md
    "agent_settled": (False, False),
    "session_info_changed": (False, False),
    "session_stop": (True, True),
    "mcp_servers_change": (False, False),
    "mcp_notification": (False, False),
    "session_compacting": (True, False),
    "before_provider_headers": (False, False),
    "context_with_system": (True, False),
    "ui_prompt_start": (False, False),
    "ui_prompt_end": (False, False),
    "cache_warming_decision": (False, False),
    "tool_approval_requested": (False, False),
    "tool_approval_resolved": (False, False),
    "plan_review_requested": (False, False),
    "plan_review_resolved": (False, False),
    "before_subagent_spawn": (False, False),
    "retry_fallback_applied": (False, False),
    "retry_fallback_succeeded": (False, False),
    "ttsr_triggered": (False, False),
    "todo_reminder": (False, False),
    "goal_updated": (False, False),
    "credential_disabled": (False, False),
    "user_python": (True, False),
}


def test_event_table_matches_the_spec(generator: ModuleType) -> None:
    text = HOOKS_DOC.read_text(encoding="utf-8")
    rows = {
        m.group(1): (m.group(2), m.group(3))
        for m in re.finditer(
            r"^\| `(\w+)` \| `piko_\w+` \| [a-z ]+ \| ([^|]+) \| ([^|]+) \|", text, re.MULTILINE
        )
    }
    events = {
        name
        for name in SEMANTICS
        if next(iter(inspect.signature(getattr(hookspecs, f"piko_{name}")).parameters)) == "event"
    }
    assert set(rows) == events == set(SPEC_TABLE)
    for event, (modify, cancel) in SPEC_TABLE.items():
        got_modify, got_cancel = rows[event]
        assert got_modify.startswith("Yes" if modify else "No"), (event, got_modify)
        assert got_cancel.startswith("Yes" if cancel else "No"), (event, got_cancel)
