"""The reference's "Runtime setting overrides" in Python: typed handles from ``piko.config.registry``
with ``pi.pi.settings`` as the scope, used by a real extension in a real ``pi`` run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_harness import OK
from agent_harness import run_extension
from agent_harness import with_record

SETTINGS_EXTENSION = with_record("""
from piko.config.registry import all as all_settings, lookup

def activate(pi):
    def start(_event, ctx):
        scope = pi.pi.settings
        record(unknown=lookup("recap.enabled") is None, count=len(all_settings()))
        compaction = lookup("compaction.enabled")
        heard = []
        stop = compaction.listen(scope, heard.append)
        record(before=[compaction.get(scope), compaction.is_configured(scope), compaction.provenance(scope)])
        if not compaction.isConfigured(scope):  # defer to the user, as the reference does
            compaction.override(scope, False)
        record(after=[compaction.get(scope), compaction.is_configured(scope), compaction.provenance(scope)])
        try:
            compaction.override(scope, "nope")
        except ValueError as exc:
            record(error=str(exc))
        level = lookup("defaultThinkingLevel")
        try:
            level.override(scope, "extreme")
        except ValueError as exc:
            record(choice_error=str(exc))
        retries = lookup("retry.maxRetries")
        record(user=[retries.get(scope), retries.provenance(scope)])
        retries.override(scope, 9)
        record(outranked=[retries.get(scope), retries.provenance(scope)])
        retries.clearOverride(scope)
        compaction.clear_override(scope)
        stop()
        compaction.override(scope, False)  # not heard: the listener stopped
        record(heard=heard, restored=[retries.get(scope), retries.provenance(scope)])
    pi.on("session_start", start)
""")


def test_setting_handles_override_read_listen_and_clear(pi_env: Any, tmp_path: Path) -> None:
    user_settings = {"retry": {"maxRetries": 5}}
    env, _done, rows = run_extension(
        pi_env,
        tmp_path,
        SETTINGS_EXTENSION,
        OK,
        "-p",
        "hi",
        name="settings_ext.py",
        settings=user_settings,
    )
    merged = {k: v for row in rows for k, v in row.items()}
    assert merged["unknown"] is True and merged["count"] > 40
    assert merged["before"] == [True, False, "default"]
    assert merged["after"] == [False, True, "runtime"]
    assert merged["error"] == 'Invalid value for compaction.enabled: "nope" (expected a boolean)'
    assert merged["choice_error"].startswith(
        'Invalid value for defaultThinkingLevel: "extreme" (expected one of'
    )
    assert merged["user"] == [5, "global"]
    assert merged["outranked"] == [9, "runtime"]
    assert merged["heard"] == [False, True]
    assert merged["restored"] == [5, "global"]
    assert json.loads((env.home / "settings.json").read_text())["retry"] == {"maxRetries": 5}  # not saved


def test_every_key_of_the_settings_doc_has_a_handle_of_its_type() -> None:
    import re

    from piko.config.registry import all as all_settings
    from piko.config.registry import lookup

    doc = (Path(__file__).resolve().parents[2] / "docs" / "settings.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Every key") :]
    section = section[: section.index("\n## ", 1)]
    documented = {
        m.group(1): m.group(2).strip()
        for m in re.finditer(r"^\| `([^`]+)` \| ([^|]+) \| [^|]+ \| ", section, re.M)
    }
    assert {h.id: h.type.replace('"header"', '`"header"`') for h in all_settings()} == documented
    assert lookup("no.such.setting") is None
