"""Conformance of read, write, edit, ls and truncation with pi 0.73.1.

Two sources of truth, each case its own test:

1. ``pi_agent_rust/conformance/*.json``: the Rust port's cases. Every case also runs against
   ``pi_tools_oracle/oracle.json``, which records what pi 0.73.1's own tools returned for the same
   inputs (``generate.mjs``). piko must equal that record exactly (text, details, error, files
   left on disk). The fixture's own expectations are checked too, after translating the Rust
   port's known dialect (see ``translate``); where a fixture still disagrees with the real pi,
   the case is listed in ``FIXTURE_DISAGREES_WITH_PI`` and the test proves the disagreement.
2. ``pi_tools_oracle/cases.json``: piko's own cases (truncation notices, images, multi-edit,
   fuzzy matching, CRLF/BOM, collation...), compared with the oracle the same way.
"""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path
from typing import Any

import pytest
from tool_harness import apply_setup
from tool_harness import case_params
from tool_harness import load_extra_suites
from tool_harness import load_oracle
from tool_harness import load_suite
from tool_harness import make_app
from tool_harness import record
from tool_harness import run_tool
from tool_harness import strip_long_text_previews
from tool_harness import substitute_cwd

ORACLE = load_oracle()
FILE_TOOLS = ("read_tool", "write_tool", "edit_tool", "ls_tool")

# Fixture expectations that differ from what pi 0.73.1 does, even after translation.
FIXTURE_DISAGREES_WITH_PI = {
    "read/read_trailing_newline": "the Rust port drops the empty line after a final newline; pi keeps the text as is",
    "edit/edit_nonexistent_file": "pi says 'Could not edit file: PATH. Error code: ENOENT.', not 'File not found'",
}


def _run_case(tool: str, case: dict[str, Any], tmp_path: Path) -> tuple[Any, Path]:
    root = (tmp_path / "work").resolve()
    root.mkdir()
    apply_setup(root, case.get("setup"))
    settings = {}
    if case.get("options", {}).get("autoResizeImages") is False:
        settings["images.autoResize"] = False
    app = make_app(root, settings=settings)
    run = run_tool(tool, substitute_cwd(case["input"], root), root, app=app)
    return run, root


def _compare_with_oracle(tool: str, case: dict[str, Any], run: Any, root: Path) -> None:
    expected = strip_long_text_previews(ORACLE[f"{tool}/{case['name']}"])
    observed = record(run, root)
    if case.get("image_data") == "resized":
        # Scaled pixels come from different encoders (Photon in pi, Pillow here): compare the
        # text and type, and check the image really has the size the note announces.
        _check_resized_image(run, expected)
        expected = _without_image_data(expected)
        observed = _without_image_data(observed)
    assert observed == expected


def _without_image_data(rec: dict[str, Any]) -> dict[str, Any]:
    out = dict(rec)
    out["content"] = [
        {k: v for k, v in block.items() if k not in ("dataSha256", "dataBytes")}
        for block in rec.get("content", [])
    ]
    return out


def _check_resized_image(run: Any, expected: dict[str, Any]) -> None:
    from PIL import Image

    note = expected["content"][0]["text"]
    match = re.search(r"displayed at (\d+)x(\d+)", note)
    assert match, note
    image = next(b for b in run.result.content if getattr(b, "data", None))
    with Image.open(io.BytesIO(base64.b64decode(image.data))) as decoded:
        assert decoded.size == (int(match.group(1)), int(match.group(2)))


# ---------------------------------------------------------------------------
# The Rust port's fixture expectations, translated to pi 0.73.1's wording
# ---------------------------------------------------------------------------

_RUST_LINE_NUMBER = re.compile(r"^ *\d+→", re.MULTILINE)


def translate(tool: str, text: str) -> str:
    """The Rust port's rendering of a result, as pi 0.73.1 words it.

    - read: the port numbers lines like ``cat -n`` (``    1→``); pi returns the text itself.
    - edit: the port keeps pi's older ``Successfully replaced text in PATH.``; pi 0.73.1 (with
      multi-edit) says ``Successfully replaced 1 block(s) in PATH.``.
    """
    if tool == "read":
        return _RUST_LINE_NUMBER.sub("", text)
    if tool == "edit":
        return re.sub(
            r"Successfully replaced text in (.+?)(\.?)$", r"Successfully replaced 1 block(s) in \1\2", text
        )
    return text


def fixture_failures(tool: str, case: dict[str, Any], ok: bool, text: str, details: Any) -> list[str]:
    """What in the fixture's expectations does not hold for a result (empty: all hold).

    ``error_contains`` ignores case (the port's "No such file" is Node's "no such file").
    ``details_exact`` lists keys that must be equal (truncation cases list a subset).
    """
    problems: list[str] = []
    if case.get("expect_error"):
        if ok:
            return ["expected an error"]
        needle = case.get("error_contains")
        if needle and translate(tool, needle).lower() not in text.lower():
            problems.append(f"error {text!r} lacks {needle!r}")
        return problems
    if not ok:
        return [f"unexpected error {text!r}"]
    expected = case.get("expected", {})
    if "content_exact" in expected and translate(tool, expected["content_exact"]) != text:
        problems.append(f"content {text!r} != {translate(tool, expected['content_exact'])!r}")
    for needle in expected.get("content_contains", []):
        if translate(tool, needle) not in text:
            problems.append(f"content lacks {needle!r}")
    for needle in expected.get("content_not_contains", []):
        if needle in text:
            problems.append(f"content has {needle!r}")
    if "content_regex" in expected and not re.search(expected["content_regex"], text):
        problems.append(f"content does not match {expected['content_regex']!r}")
    if expected.get("details_none") and details is not None:
        problems.append(f"details {details!r} is not None")
    for key, value in expected.get("details_exact", {}).items():
        if not isinstance(details, dict) or details.get(key) != value:
            problems.append(f"details[{key!r}] != {value!r}")
    for needle in expected.get("details_contains", []):
        if needle not in repr(details) and (
            not isinstance(details, dict) or needle not in str(details.get("diff", ""))
        ):
            problems.append(f"details lack {needle!r}")
    return problems


def _oracle_view(tool: str, case: dict[str, Any]) -> tuple[bool, str, Any]:
    rec = ORACLE[f"{tool}/{case['name']}"]
    if not rec["ok"]:
        return False, rec["error"], None
    text = "\n".join(b["text"] for b in rec["content"] if b["type"] == "text")
    return True, text, rec["details"]


@pytest.mark.parametrize(("tool", "case"), case_params(map(load_suite, FILE_TOOLS)))
def test_rust_fixture_case(tool: str, case: dict[str, Any], tmp_path: Path) -> None:
    run, root = _run_case(tool, case, tmp_path)
    _compare_with_oracle(tool, case, run, root)
    key = f"{tool}/{case['name']}"
    oracle_failures = fixture_failures(tool, case, *_oracle_view(tool, case))
    piko_failures = fixture_failures(tool, case, run.ok, run.text, run.details)
    if key in FIXTURE_DISAGREES_WITH_PI:
        # The listed disagreement is real: pi itself fails the fixture, and piko behaves as pi.
        assert oracle_failures, f"{key} now agrees with pi; remove it from FIXTURE_DISAGREES_WITH_PI"
        assert piko_failures == oracle_failures
    else:
        assert oracle_failures == [], "the translated fixture must describe pi's real behaviour"
        assert piko_failures == []


@pytest.mark.parametrize(("tool", "case"), case_params(load_extra_suites()))
def test_piko_case_matches_pi(tool: str, case: dict[str, Any], tmp_path: Path) -> None:
    run, root = _run_case(tool, case, tmp_path)
    _compare_with_oracle(tool, case, run, root)


# ---------------------------------------------------------------------------
# truncation.json
# ---------------------------------------------------------------------------


def _truncation_cases() -> list[Any]:
    return [pytest.param(case, id=f"truncation/{case['name']}") for case in load_suite("truncation")["cases"]]


@pytest.mark.parametrize("case", _truncation_cases())
def test_truncation_case(case: dict[str, Any]) -> None:
    from piko.plugins.tools.truncate import truncate_head
    from piko.plugins.tools.truncate import truncate_tail

    data = case["input"]
    results = {
        "head": truncate_head(data["content"], max_lines=data["max_lines"], max_bytes=data["max_bytes"]),
        "tail": truncate_tail(data["content"], max_lines=data["max_lines"], max_bytes=data["max_bytes"]),
    }
    # Both directions equal pi's truncateHead/truncateTail for the same input.
    assert {k: v.to_details() for k, v in results.items()} == ORACLE[f"truncation/{case['name']}"]
    # The fixture's expectations hold for the direction its name gives (both when it names none).
    name = case["name"]
    directions = (
        ["head"] if name.startswith("head_") else ["tail"] if name.startswith("tail_") else ["head", "tail"]
    )
    expected = case["expected"]
    for direction in directions:
        result = results[direction]
        if "content_exact" in expected:
            assert result.content == expected["content_exact"]
        for needle in expected.get("content_contains", []):
            assert needle in result.content
        for key, value in expected.get("details_exact", {}).items():
            assert getattr(result, key) == value, (direction, key)


def test_every_fixture_case_has_an_oracle_record() -> None:
    names = {f"{s['tool']}/{c['name']}" for n in FILE_TOOLS for s in [load_suite(n)] for c in s["cases"]}
    names |= {f"{s['tool']}/{c['name']}" for s in load_extra_suites() for c in s["cases"]}
    names |= {f"truncation/{c['name']}" for c in load_suite("truncation")["cases"]}
    assert names <= set(ORACLE), sorted(names - set(ORACLE))


def test_harness_app_registers_the_tools(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    assert {"read", "write", "edit", "ls"} <= set(app.registries.tools.names())


# ---------------------------------------------------------------------------
# Transcripts of the real pi (pi_mono_samples)
# ---------------------------------------------------------------------------

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "pi_mono_samples"
FILE_TOOL_NAMES = {"read", "write", "edit", "ls"}


@pytest.mark.parametrize("sample", ["c-tools-json", "c-parallel-tools-json"])
def test_pi_transcript_tool_results(sample: str, work: Path) -> None:
    """Replay a transcript's read/write/edit/ls calls: same results as pi's, same files left."""
    import json

    from piko.data.wire import to_wire

    folder = SAMPLES / sample
    scenario = json.loads((folder / "scenario.json").read_text(encoding="utf-8"))
    files_after: dict[str, str] = json.loads((folder / "meta.json").read_text(encoding="utf-8"))[
        "workdir_after"
    ]
    events = [
        json.loads(line) for line in (folder / "stdout.txt").read_text(encoding="utf-8").splitlines() if line
    ]
    ends = [e for e in events if e["type"] == "tool_execution_end" and e["toolName"] in FILE_TOOL_NAMES]
    starts = [e for e in events if e["type"] == "tool_execution_start" and e["toolName"] in FILE_TOOL_NAMES]
    calls = [b["tool_call"] for turn in scenario for b in turn["blocks"] if "tool_call" in b]
    calls = [c for c in calls if c["name"] in FILE_TOOL_NAMES]
    assert len(calls) == len(ends) == len(starts) > 0
    # The working directory before the run: what was left, minus what the run wrote.
    written = {c["arguments"]["path"] for c in calls if c["name"] == "write"}
    for rel, text in files_after.items():
        if rel not in written:
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            (work / rel).write_text(text, encoding="utf-8")
    app = make_app(work)
    by_id = {e["toolCallId"]: e for e in ends}
    for call, start in zip(calls, starts, strict=True):
        assert start["args"] == call["arguments"]
        run = run_tool(call["name"], call["arguments"], work, app=app)
        expected = by_id[start["toolCallId"]]
        assert run.ok == (not expected["isError"])
        assert to_wire(run.result) == expected["result"]
    left = {
        p.relative_to(work).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(work.rglob("*"))
        if p.is_file()
    }
    assert left == files_after


def test_tool_definitions_match_what_pi_advertises(tmp_path: Path) -> None:
    """Booted from the entry points, the four tools send pi's exact names, texts and schemas."""
    import json

    from piko.app.application import App

    advertised = json.loads((SAMPLES / "c-tools-json" / "tools.json").read_text(encoding="utf-8"))
    by_name = {t["function"]["name"]: t["function"] for t in advertised}
    app = App(cwd=tmp_path, agent_dir=tmp_path / "agent").boot()
    expected_snippets = {
        "read": "Read file contents",
        "write": "Create or overwrite files",
        "edit": "Make precise file edits with exact text replacement, including multiple disjoint edits in one call",
        "ls": "List directory contents",
    }
    for name in ("read", "write", "edit", "ls"):
        definition = app.registries.tools.get(name)
        assert definition is not None, name
        ours = definition.to_json()
        pis = {k: by_name[name][k] for k in ("name", "description", "parameters")}
        assert json.dumps(ours) == json.dumps(pis)  # same keys in the same order
        assert definition.label == name
        assert definition.prompt_snippet == expected_snippets[name]
        assert definition.default_active is (name != "ls")
    assert app.registries.tools.get("edit").prompt_guidelines[0] == (
        "Use edit for precise changes (edits[].oldText must match exactly)"
    )
