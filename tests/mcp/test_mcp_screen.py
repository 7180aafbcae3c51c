"""The interactive ``/mcp`` screen in a real terminal (tmux): the server list, a server's details
and tools, disable/enable and exposure saved to ``mcp.json`` with the rest of the file kept."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from mcp_support import stdio_entry

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interactive"))
from tmux_terminal import Terminal

pytestmark = pytest.mark.timeout(180)  # needs tmux, as tests/interactive do


def open_when_connected(term: Terminal) -> str:
    """Open ``/mcp`` once both servers are connected (the list shows states as they are)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        term.submit("/mcp")
        screen = term.wait_for("MCP servers")
        if screen.count("connected · 11 tools") == 2:
            return screen
        term.keys("Escape")
        time.sleep(0.5)
    raise AssertionError(f"servers did not connect:\n{term.screen()}")


def test_the_mcp_screen_lists_inspects_and_changes_servers(tmp_path: Path) -> None:
    config = {
        "mcpServers": {"demo": stdio_entry(exposure="direct"), "other": stdio_entry(exposure="deferred")},
        "keep": {"me": True},
    }
    term = Terminal(
        tmp_path, args=["--provider", "faux"], agent_files={"mcp.json": json.dumps(config)}, height=40
    )
    path = term.agent / "mcp.json"
    try:
        term.start()
        term.wait_ready()
        screen = open_when_connected(term)
        assert "demo  connected · 11 tools · resources · direct · global" in screen
        assert "other  connected · 11 tools · resources · deferred · global" in screen

        term.keys("Enter")  # demo
        screen = term.wait_for("MCP server demo")
        assert f"global: {path}" in screen and "State: connected · 11 tools · resources" in screen
        assert (
            "Tools  11 offered" in screen
            and "Reconnect" in screen
            and "Disable  saved to the global mcp.json" in screen
        )
        term.keys("Enter")  # Tools
        screen = term.wait_for("Tools of demo")
        assert "Exposure direct: declared to the model like built-in tools" in screen
        assert "echo  Echo the text back." in screen
        term.keys("Escape")
        term.wait_for("MCP server demo")

        term.keys("Down", "Down", "Down", "Enter")  # Disable
        screen = term.wait_for("State: disabled")
        assert "Enable  saved to the global mcp.json" in screen
        saved = json.loads(path.read_text())
        assert saved["mcpServers"]["demo"]["enabled"] is False
        assert saved["keep"] == {"me": True} and saved["mcpServers"]["other"] == config["mcpServers"]["other"]

        term.keys("Escape")  # the list: the disabled server last, still highlighted
        screen = term.wait_for("demo  disabled · direct · global")
        assert screen.index("other  connected") < screen.index("demo  disabled")
        assert "→ demo  disabled" in screen
        term.keys("Up", "Enter")  # other
        term.wait_for("MCP server other")
        term.keys("Down", "Down", "Enter")  # Exposure
        screen = term.wait_for("Exposure of other")
        assert "✓ deferred" in screen and f"Saved to {path}." in screen
        term.keys("Down", "Enter")  # direct
        screen = term.wait_for("Exposure  direct")
        assert json.loads(path.read_text())["mcpServers"]["other"]["exposure"] == "direct"

        term.keys("Escape")
        term.wait_for("demo  disabled")
        term.keys("Down", "Enter")  # demo again
        term.wait_for("MCP server demo")
        term.keys("Enter")  # Enable: it connects again
        term.wait_for("State: connected · 11 tools", timeout=60)
        assert json.loads(path.read_text())["mcpServers"]["demo"]["enabled"] is True
        term.keys("Escape", "Escape")
        term.wait_for(lambda s: "MCP servers" not in s)
    finally:
        term.close()


def test_the_sign_in_screen_takes_the_redirected_url(tmp_path: Path, auth_server) -> None:
    """``/mcp login`` in the interactive mode: the page goes to the browser (here a script that
    notes it), the screen offers an input field; a pasted URL of another sign-in is refused in
    one line and the field stays; the right one signs in, and the loopback callback is unused."""
    from urllib.parse import parse_qs
    from urllib.parse import urlencode
    from urllib.parse import urlsplit

    term, opened = _signing_in_terminal(tmp_path, auth_server())
    try:
        term.start()
        term.wait_ready()
        term.submit("/mcp login secure")
        term.wait_for("paste the address it ended on", timeout=60)
        location = _redirected_location(opened)
        parts = urlsplit(location)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        term.paste(parts._replace(query=urlencode({**query, "state": "other"})).geturl())
        term.keys("Enter")
        screen = term.wait_for("its state does not match")
        assert "paste the address it ended on" in screen
        term.paste(location)
        term.keys("Enter")
        term.wait_for(r'Signed in to MCP server "secure" \(2 tools\)\.', timeout=60)
        term.wait_for(lambda s: "paste the address it ended on" not in s)
    finally:
        term.close()


def _redirected_location(opened: Path) -> str:
    """Where the authorization page the "browser" was given redirects (not followed)."""
    import httpx

    deadline = time.monotonic() + 30
    while not opened.exists() or not opened.read_text().strip():
        assert time.monotonic() < deadline, "the browser was not opened"
        time.sleep(0.1)
    url = opened.read_text().strip()
    opened.unlink()
    return httpx.get(url, follow_redirects=False, timeout=30).headers["location"]


def _signing_in_terminal(tmp_path: Path, url: str) -> tuple[Terminal, Path]:
    """A terminal (not started) with one server at ``url`` that needs sign-in, and the file its
    noting ``BROWSER`` writes each page it is given to."""
    opened, browser = _noting_browser(tmp_path)
    config = {"mcpServers": {"secure": {"url": url, "exposure": "direct"}}}
    term = Terminal(
        tmp_path, args=["--provider", "faux"], agent_files={"mcp.json": json.dumps(config)},
        env={"BROWSER": str(browser)}, height=40,
    )  # fmt: skip
    return term, opened


def _noting_browser(tmp_path: Path) -> tuple[Path, Path]:
    """A ``BROWSER`` script that writes the page it is given to a file."""
    opened, browser = tmp_path / "opened.txt", tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" > {opened}\n')
    browser.chmod(0o755)
    return opened, browser


def test_the_screen_redraws_as_a_server_connects(tmp_path: Path) -> None:
    """The list is open while a server is still connecting; it shows it connected without a key."""
    go = tmp_path / "go"
    slow = {"command": "sh", "args": ["-c", f'while [ ! -e {go} ]; do sleep 0.1; done; exec "$0" "$1"',
                                      sys.executable, stdio_entry()["args"][0]]}  # fmt: skip
    term = Terminal(
        tmp_path,
        args=["--provider", "faux"],
        agent_files={"mcp.json": json.dumps({"mcpServers": {"slow": slow}})},
    )
    try:
        term.start()
        term.wait_ready()
        term.submit("/mcp")
        term.wait_for("slow  connecting…")
        term.keys("Enter")
        term.wait_for("State: connecting…")
        go.touch()
        screen = term.wait_for("State: connected · 11 tools", timeout=60)
        assert "Tools  11 offered" in screen
        term.keys("Escape")
        term.wait_for("slow  connected · 11 tools")
    finally:
        term.close()


def test_sign_in_and_sign_out_on_the_screen(tmp_path: Path, auth_server) -> None:
    """A server that needs sign-in offers "Sign in" (the sign-in screen, a pasted URL), then,
    signed in and connected, "Sign out", after which it needs sign-in again."""
    url = auth_server()
    term, opened = _signing_in_terminal(tmp_path, url)
    try:
        term.start()
        term.wait_ready()
        term.submit("/mcp")
        term.wait_for("secure  needs sign-in", timeout=60)
        term.keys("Enter")
        screen = term.wait_for("Sign in  opens the authorization page")
        assert "Sign out" not in screen
        term.keys("Down", "Enter")  # Reconnect, Sign in
        term.wait_for("paste the address it ended on", timeout=60)
        term.paste(_redirected_location(opened))
        term.keys("Enter")
        screen = term.wait_for("State: connected · 2 tools", timeout=60)
        assert "Sign out  deletes the stored sign-in" in screen and "Sign in " not in screen
        term.keys("Down", "Down", "Enter")  # Tools, Reconnect, Sign out
        screen = term.wait_for("State: needs sign-in", timeout=60)
        assert "Sign in  opens the authorization page" in screen
        stored = json.loads((term.agent / "mcp-auth.json").read_text())["servers"]
        assert f"secure|{url}" not in stored
    finally:
        term.close()


def test_enable_and_disable_in_this_project(tmp_path: Path) -> None:
    """In a trusted project, "Disable in this project" writes an override of the user-level
    server into .pi/mcp.json (only ``enabled``); later changes to it go to the override, the
    user file untouched."""
    config = {"mcpServers": {"demo": stdio_entry(exposure="direct")}}
    work = tmp_path / "work"
    term = Terminal(
        tmp_path, args=["--provider", "faux"], height=40,
        agent_files={"mcp.json": json.dumps(config),
                     "trusted-projects.json": json.dumps({"projects": {str(work): True}})},
        work_files={".pi/mcp.json": json.dumps({"mcpServers": {}, "keep": 1})},
    )  # fmt: skip
    user, project = term.agent / "mcp.json", work / ".pi" / "mcp.json"
    try:
        term.start()
        term.wait_ready()
        open_when_connected_n(term, 1)
        term.keys("Enter")
        screen = term.wait_for("MCP server demo")
        assert "Disable  saved to the global mcp.json" in screen
        assert "Disable in this project  a project override in .pi/mcp.json" in screen
        term.keys(
            "Down", "Down", "Down", "Down", "Enter"
        )  # Tools, Reconnect, Exposure, Disable, Disable here
        screen = term.wait_for("State: disabled")
        assert json.loads(project.read_text()) == {"mcpServers": {"demo": {"enabled": False}}, "keep": 1}
        assert json.loads(user.read_text()) == config
        assert f"project: {project}" in screen and "Enable  saved to the project mcp.json" in screen
        assert "in this project" not in screen
        term.keys("Enter")  # Enable: saved to the override
        term.wait_for("State: connected · 11 tools", timeout=60)
        assert json.loads(project.read_text())["mcpServers"]["demo"] == {"enabled": True}
        term.keys("Down", "Down", "Enter")  # Exposure
        screen = term.wait_for("Exposure of demo")
        assert f"Saved to {project}." in screen
        term.keys("Enter")  # deferred
        term.wait_for("Exposure  deferred")
        assert json.loads(project.read_text())["mcpServers"]["demo"] == {
            "enabled": True,
            "exposure": "deferred",
        }
        assert json.loads(user.read_text()) == config
    finally:
        term.close()


def open_when_connected_n(term: Terminal, count: int) -> str:
    """Open ``/mcp`` and wait (the list redraws) until ``count`` servers show connected."""
    term.submit("/mcp")
    return term.wait_for(lambda s: s.count("connected · 11 tools") == count, timeout=60)
