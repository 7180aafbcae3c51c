"""Table tests of ``mcp.json``: merging, checks, values, tool names and exposure rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from piko.plugins.mcp.config import check_entry
from piko.plugins.mcp.config import load_config
from piko.plugins.mcp.config import resolve_value
from piko.plugins.mcp.naming import assign_names
from piko.plugins.mcp.naming import name_matcher
from piko.plugins.mcp.naming import tool_exposure
from piko.plugins.mcp.naming import tool_name
from piko.plugins.mcp.results import truncate_middle

U = "https://example.com/mcp"
D = "https://docs.example/oauth/client.json"


def write(path: Path, servers: dict[str, Any], **top: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers, **top}))


@pytest.mark.parametrize(
    ("name", "entry", "kind", "error"),
    [
        ("fs", {"command": "npx", "args": ["-y", "x"]}, "stdio", ""),
        ("docs", {"url": "https://example.com/mcp"}, "http", ""),
        ("docs", {"url": "https://example.com/mcp", "type": "streamable-http"}, "http", ""),
        ("docs", {"url": "https://example.com/mcp", "type": "http"}, "http", ""),
        ("fs", {"command": "x", "type": "stdio"}, "stdio", ""),
        ("both", {"command": "x", "url": "http://127.0.0.1:9/mcp"}, "http", ""),
        ("old", {"url": "http://h/sse", "type": "sse"}, None,
         'server "old": legacy SSE transport is not supported; use the streamable HTTP URL'),
        ("bad name", {"command": "x"}, None, 'invalid server name "bad name" (use letters, digits, "_" and "-")'),
        ("none", {"args": ["x"]}, None, 'server "none" needs either "command" (stdio) or "url" (streamable HTTP)'),
        ("typo", {"command": "x", "type": "stdioo"}, None,
         'server "typo" needs either "command" (stdio) or "url" (streamable HTTP)'),
        ("t", {"command": "x", "timeout": 0}, None, 'server "t": timeout must be a positive number of seconds'),
        ("t", {"command": "x", "enabled": "no"}, None, 'server "t": enabled must be a boolean'),
        ("a", {"command": "x", "args": "y"}, None, 'server "a": args must be an array of strings'),
        ("e", {"command": "x", "env": {"K": 1}}, None, 'server "e": env must map names to strings'),
        ("u", {"url": "ftp://h/x"}, None, 'server "u": url must be an http or https URL'),
        ("h", {"url": "http://h/x", "headers": []}, None, 'server "h": headers must map names to strings'),
        ("x", {"command": "x", "exposure": "loud"}, None,
         'server "x": exposure must be one of "codemode", "deferred", "direct", "hidden"'),
        ("x", {"command": "x", "exposure": "codemode-deferred"}, "stdio", ""),
        ("x", {"command": "x", "toolExposure": {"a": "nope"}}, None,
         'server "x": toolExposure "a" must be one of "codemode", "deferred", "direct", "hidden"'),
        ("s", "just a string", None, 'server "s" must be an object'),
        # oauth, with pi 1.6's wording
        ("o", {"url": U, "oauth": {"clientId": "c", "clientSecret": "${S}", "callbackPort": 8765,
                                  "clientName": "N", "clientRegistration": "dcr", "scope": "a b",
                                  "authServerMetadataUrl": "https://idp.example/.well-known/openid-configuration"}},
         "http", ""),
        ("o", {"url": U, "oauth": []}, None, 'server "o": oauth must be an object'),
        ("o", {"url": U, "oauth": {"clientId": 1}}, None, 'server "o": oauth.clientId must be a string'),
        ("o", {"url": U, "oauth": {"callbackPort": 70000}}, None, 'server "o": oauth.callbackPort must be a port number'),
        ("o", {"url": U, "oauth": {"callbackUrl": "http://127.0.0.1/cb"}}, "http", ""),
        ("o", {"url": U, "oauth": {"callbackUrl": "http://[::1]:9/cb", "callbackPort": 9}}, "http", ""),
        ("o", {"url": U, "oauth": {"callbackUrl": "https://127.0.0.1/cb"}}, None,
         'server "o": oauth.callbackUrl must be an http URI on localhost, 127.0.0.1, or [::1] without query or fragment'),
        ("o", {"url": U, "oauth": {"callbackUrl": "http://localhost:8/cb", "callbackPort": 9}}, None,
         'server "o": oauth.callbackUrl and oauth.callbackPort name different ports'),
        ("o", {"url": U, "oauth": {"clientName": " "}}, None, 'server "o": oauth.clientName must be a non-empty string'),
        ("o", {"url": U, "oauth": {"clientRegistration": "x"}}, None,
         'server "o": oauth.clientRegistration must be "auto", "dcr", or "cimd"'),
        ("o", {"url": U, "oauth": {"clientRegistration": "cimd", "clientId": "c"}}, None,
         'server "o": oauth.clientRegistration "cimd" cannot be combined with oauth.clientId or oauth.clientName'),
        ("o", {"url": U, "oauth": {"clientRegistration": "cimd"}}, None,
         'server "o": oauth.clientRegistration "cimd" needs oauth.clientMetadataUrl: piko has no Client ID '
         "Metadata Document of its own, so name the https URL of one you host"),
        # piko's clientMetadataUrl: the document the user hosts
        ("o", {"url": U, "oauth": {"clientRegistration": "cimd", "clientMetadataUrl": D}}, "http", ""),
        ("o", {"url": U, "oauth": {"clientRegistration": "cimd", "clientMetadataUrl": D,
                                  "callbackUrl": "http://localhost:8/callback"}}, "http", ""),
        ("o", {"url": U, "oauth": {"clientRegistration": "cimd", "clientMetadataUrl": D,
                                  "callbackUrl": "http://127.0.0.1/cb"}}, None,
         'server "o": oauth.clientRegistration "cimd" requires oauth.callbackUrl on localhost or 127.0.0.1 with path /callback'),
        ("o", {"url": U, "oauth": {"clientRegistration": "cimd", "clientMetadataUrl": D, "clientName": "N"}}, None,
         'server "o": oauth.clientRegistration "cimd" cannot be combined with oauth.clientId or oauth.clientName'),
        ("o", {"url": U, "oauth": {"clientMetadataUrl": D, "clientName": "N"}}, "http", ""),
        ("o", {"url": U, "oauth": {"clientMetadataUrl": "http://docs.example/client.json"}}, None,
         'server "o": oauth.clientMetadataUrl must be an https URL with a path (the Client ID Metadata Document you host)'),
        ("o", {"url": U, "oauth": {"clientMetadataUrl": "https://docs.example/"}}, None,
         'server "o": oauth.clientMetadataUrl must be an https URL with a path (the Client ID Metadata Document you host)'),
        ("o", {"url": U, "oauth": {"authServerMetadataUrl": "http://idp.example/x"}}, None,
         'server "o": oauth.authServerMetadataUrl must be an https URL, or http on localhost, 127.0.0.1, or [::1]'),
        ("o", {"url": U, "oauth": {"authServerMetadataUrl": "http://127.0.0.1:9/x"}}, "http", ""),
    ],
)  # fmt: skip
def test_check_entry(name: str, entry: Any, kind: str | None, error: str) -> None:
    assert check_entry(name, entry) == (kind, error)


def test_project_entries_replace_user_entries_and_overrides_keep_the_rest(tmp_path: Path) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "work"
    write(agent / "mcp.json", {
        "tools": {"command": "t", "env": {"K": "V"}, "exposure": "direct"},
        "docs": {"url": "https://a/mcp", "headers": {"A": "1"}},
        "keep": {"command": "k"},
    })  # fmt: skip
    write(cwd / ".pi" / "mcp.json", {
        "tools": {"enabled": False, "toolExposure": {"x": "hidden"}, "env": {"IGNORED": "1"}},
        "docs": {"url": "https://b/mcp"},
        "local": {"command": "l"},
    })  # fmt: skip
    config = load_config(agent, cwd, project_trusted=True)
    assert list(config.servers) == ["tools", "docs", "keep", "local"]
    tools = config.servers["tools"]
    assert tools.raw == {"command": "t", "env": {"K": "V"}, "exposure": "direct", "enabled": False,
                         "toolExposure": {"x": "hidden"}}  # fmt: skip
    assert tools.scope == "project" and not tools.enabled
    assert config.servers["docs"].raw == {"url": "https://b/mcp"}
    assert config.servers["keep"].scope == "global"
    assert config.errors == []
    untrusted = load_config(agent, cwd, project_trusted=False)
    assert list(untrusted.servers) == ["tools", "docs", "keep"]
    assert untrusted.servers["tools"].enabled


def test_names_differing_in_dash_and_underscore_are_one_server(tmp_path: Path) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "work"
    write(agent / "mcp.json", {"dev-radius": {"command": "a"}, "dev_radius": {"command": "b"}})
    write(cwd / ".pi" / "mcp.json", {"dev_radius": {"command": "c"}})
    config = load_config(agent, cwd, project_trusted=True)
    assert list(config.servers) == ["dev_radius"]
    assert config.servers["dev_radius"].raw["command"] == "c"
    assert config.errors == [f'{agent / "mcp.json"}: server "dev_radius" has the same name as another server']


def test_extension_servers_lose_to_files(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write(agent / "mcp.json", {"shared": {"command": "file"}})
    extra = {"shared": ({"command": "ext"}, "x.py"), "own": ({"command": "ext"}, "x.py")}
    config = load_config(agent, tmp_path, project_trusted=False, extra=extra)
    assert config.servers["shared"].raw["command"] == "file"
    assert config.servers["own"].source == "extension:x.py"


def test_invalid_files_are_reported_and_other_files_still_count(tmp_path: Path) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "work"
    agent.mkdir()
    (agent / "mcp.json").write_text("{not json")
    write(cwd / ".pi" / "mcp.json", {"ok": {"command": "x"}}, autoEnableCodemode=False)
    config = load_config(agent, cwd, project_trusted=True)
    assert list(config.servers) == ["ok"]
    assert len(config.errors) == 1 and config.errors[0].startswith(str(agent / "mcp.json"))
    assert config.auto_enable_codemode is False


@pytest.mark.parametrize(
    ("value", "env", "expected"),
    [
        ("Bearer ${TOKEN}", {"TOKEN": "abc"}, "Bearer abc"),
        ("${A}-${B}", {"A": "1", "B": "2"}, "1-2"),
        ("plain", {}, "plain"),
        ("GITHUB_TOKEN", {"GITHUB_TOKEN": "x"}, "GITHUB_TOKEN"),  # a bare name is a literal here
        ("${MISSING}", {}, ValueError("Failed to resolve thing from environment variable: MISSING")),
        ("${M1}${M2}", {}, ValueError("Failed to resolve thing from environment variables: M1, M2")),
        ("!echo from-command", {}, "from-command"),
        ("!false", {}, ValueError("Failed to resolve thing from shell command: false")),
    ],
)
def test_values(value: str, env: dict[str, str], expected: Any) -> None:
    if isinstance(expected, Exception):
        with pytest.raises(ValueError) as raised:
            resolve_value(value, "thing", env)
        assert str(raised.value) == str(expected)
    else:
        assert resolve_value(value, "thing", env) == expected


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        ("demo", "echo", "mcp__demo__echo"),
        ("dev-radius", "get.thing", "mcp__dev_radius__get_thing"),
        ("s", "x" * 80, "mcp__s__" + "x" * 47 + "_" + "4a1c1f9a"),
    ],
)
def test_tool_names(server: str, tool: str, expected: str) -> None:
    import hashlib

    name = tool_name(server, tool)
    if len(expected) > 64 or "x" * 47 in expected:
        digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
        expected = f"mcp__s__{'x' * (64 - 9 - 8)}_{digest}"
    assert name == expected
    assert len(name) <= 64


def test_colliding_names_all_get_the_suffix() -> None:
    names = assign_names("s", ["a.b", "a-b", "c"], lambda _n: False)
    assert names["c"] == "mcp__s__c"
    assert names["a.b"] != names["a-b"]
    assert names["a.b"].startswith("mcp__s__a_b_") and names["a-b"].startswith("mcp__s__a_b_")


@pytest.mark.parametrize(
    ("overrides", "tool", "expected"),
    [
        ({}, "anything", "deferred"),
        ({"search_code": "direct", "search_*": "hidden"}, "search_code", "direct"),  # exact wins
        ({"search_*": "hidden", "search_code": "direct"}, "search_code", "direct"),
        ({"get_*": "codemode", "*": "hidden"}, "get_x", "codemode"),  # first pattern wins
        ({"*": "hidden", "get_*": "codemode"}, "get_x", "hidden"),
        ({"get_*": "direct"}, "list", "deferred"),
    ],
)
def test_tool_exposure(overrides: dict[str, str], tool: str, expected: str) -> None:
    assert tool_exposure("deferred", overrides, tool) == expected


def test_name_matcher() -> None:
    matches = name_matcher(["read", "mcp__radius__*"])
    assert matches("read") and matches("mcp__radius__x") and not matches("mcp__other__x")


def test_truncate_middle() -> None:
    assert truncate_middle("short") is None
    text = "é" * 20000  # 40000 bytes
    cut, total_bytes, lines = truncate_middle(text) or ("", 0, 0)
    assert total_bytes == 40000 and lines == 1
    head, rest = cut.split("\u2026", 1)
    removed, tail = rest.split(" chars truncated\u2026")
    assert len(head.encode()) <= 10240 and len(tail.encode()) <= 10240
    assert len(head) + int(removed) + len(tail) == 20000
