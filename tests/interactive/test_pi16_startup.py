"""pi 1.6's start-up settings in a real terminal: ``quietStartup: "header"``, ``--verbose`` over
``quietStartup``, and ``--use-theme`` choosing the theme for one run without saving it."""

from __future__ import annotations

import json

import pytest

CONTEXT = {"AGENTS.md": "Be brief.\n"}


@pytest.mark.parametrize(
    ("quiet", "args", "header", "listing"),
    [
        (False, [], True, True),
        ("header", [], True, False),
        (True, [], False, False),
        (True, ["--verbose"], True, True),
        ("header", ["--verbose"], True, True),
    ],
)
def test_quiet_startup(term, quiet, args, header, listing):
    t = term(settings={"quietStartup": quiet}, work_files=CONTEXT, args=["--provider", "faux", *args])
    t.wait_for(lambda s: "faux-1" in s, scrollback=True)  # the footer: start-up is done
    t.submit("/session")
    t.wait_for(r"Session Info|Messages", scrollback=True)  # anything printed after start-up
    screen = t.history()
    assert ("piko v" in screen) is header, screen
    assert ("[Context]" in screen) is listing, screen


def test_use_theme_is_for_this_run_only(term):
    t = term(settings={"theme": "dark"}, args=["--provider", "faux", "--use-theme", "light"])
    t.wait_ready()
    t.submit("/settings")
    t.wait_for(r"Search:")
    t.type("theme")
    t.wait_for(r"Theme: light")
    assert json.loads((t.agent / "settings.json").read_text())["theme"] == "dark"
