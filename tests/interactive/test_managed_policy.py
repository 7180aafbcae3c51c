"""The managed policy in interactive mode: a blocked tool cannot run, a refused model cannot be
chosen, and a policy that cannot be read stops the start with one line."""

from __future__ import annotations

import json

from scripted_turns import bash_then_answer


def _policy(t, data) -> None:
    path = t.root / "policy.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    t.env["PIKO_POLICY"] = str(path)


def test_a_blocked_tool_is_refused_and_the_rule_is_named(term) -> None:
    t = term(
        turns=bash_then_answer("echo ran", "could not run it"), env={"ANTHROPIC_API_KEY": "sk-x"}, start=False
    )
    _policy(t, {"tools": {"block": ["bash"]}, "models": {"allow": ["faux/*"]}})
    t.start()
    t.wait_ready()
    t.submit("run it")
    history = t.wait_for(r"could not run it", scrollback=True)
    assert "tool 'bash' is blocked by tools.block of the managed policy" in history
    assert "Tool bash not found" in history
    t.submit("/model anthropic/claude-sonnet-4-5")
    t.wait_for(r"not in models\.allow of the managed policy", scrollback=True)
    assert "faux-1" in t.screen()


def test_a_broken_policy_stops_the_start_with_one_line(term) -> None:
    t = term(start=False)
    path = t.root / "policy.json"
    path.write_text('{"tools": ', encoding="utf-8")
    t.env["PIKO_POLICY"] = str(path)
    t.start()
    t.wait_for(
        lambda _: "the managed policy cannot be used" in t.errors() or "managed policy" in t.history(),
        timeout=20,
    )
    text = t.errors() + t.history()
    assert "the managed policy cannot be used" in text and str(path) in text
