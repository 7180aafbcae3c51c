"""Conformance of bash, grep and find with the pi_agent_rust fixtures (each case its own test).

A case lists setup steps, the tool input, and either expectations on the result (content
contains / not contains / exact / regex, details none / exact) or an expected error.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from tool_harness import apply_setup
from tool_harness import case_params
from tool_harness import load_suite
from tool_harness import make_app
from tool_harness import run_tool
from tool_harness import substitute_cwd

SUITES = ("bash_tool", "grep_tool", "find_tool")


def test_every_suite_has_cases() -> None:
    counts = {name: len(load_suite(name)["cases"]) for name in SUITES}
    assert counts == {"bash_tool": 34, "grep_tool": 12, "find_tool": 6}


@pytest.mark.parametrize(("tool", "case"), case_params(map(load_suite, SUITES)))
def test_case(tool: str, case: dict[str, Any], work: Path) -> None:
    apply_setup(work, case.get("setup"))
    run = run_tool(tool, substitute_cwd(case["input"], work), work, app=make_app(work))

    if case.get("expect_error"):
        assert not run.ok, f"expected an error, got {run!r}"
        if "error_contains" in case:
            assert case["error_contains"] in str(run.error)
        return
    assert run.ok, f"unexpected error: {run.error!r}"
    text = run.text
    expected = case["expected"]
    for needle in expected.get("content_contains", []):
        assert needle in text
    for needle in expected.get("content_not_contains", []):
        assert needle not in text
    if "content_exact" in expected:
        assert text == expected["content_exact"]
    if "content_regex" in expected:
        assert re.search(expected["content_regex"], text), f"{expected['content_regex']!r} not in {text!r}"
    if expected.get("details_none"):
        assert run.details is None
    if "details_exact" in expected:
        assert run.details == expected["details_exact"]
