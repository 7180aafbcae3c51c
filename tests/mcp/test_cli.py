"""``pi mcp add|remove|list`` as real subprocesses, against real servers."""

from __future__ import annotations

import json
import sys

import pytest
from mcp_support import DEMO_SERVER
from mcp_support import stdio_entry

pytestmark = pytest.mark.timeout(120)


def test_add_replace_remove_keep_the_rest_of_the_file(mcp_env):
    env = mcp_env([])
    path = env.home / "mcp.json"
    path.write_text(json.dumps({"autoEnableCodemode": False, "mcpServers": {"other": {"command": "o"}}}))
    done = env.run("mcp", "add", "fs", "--env", "K=V", "--env", "A=${B}", "--", "npx", "-y", "srv", ".")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f'Added global MCP server "fs" in {path}.\nCheck it with: pi mcp list\n'
    done = env.run("mcp", "add", "docs", "--url", "https://example.com/mcp", "--bearer-token-env-var", "DOCS_TOKEN",
                   "--exposure", "direct", "--description", "Docs")  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = env.run("mcp", "add", "fs", "--", "other")
    assert done.stdout.startswith(f'Replaced global MCP server "fs" in {path}.')
    data = json.loads(path.read_text())
    assert data["autoEnableCodemode"] is False
    assert data["mcpServers"] == {
        "other": {"command": "o"},
        "fs": {"command": "other"},
        "docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"},
                 "exposure": "direct", "description": "Docs"},
    }  # fmt: skip
    done = env.run("mcp", "remove", "fs")
    assert (done.returncode, done.stdout) == (0, f'Removed global MCP server "fs" from {path}.\n')
    done = env.run("mcp", "remove", "nope")
    assert (done.returncode, done.stderr) == (1, f'No global MCP server named "nope" in {path}.\n')
    assert list(json.loads(path.read_text())["mcpServers"]) == ["other", "docs"]


def test_add_rejects_bad_input_and_writes_nothing(mcp_env):
    env = mcp_env([])
    done = env.run("mcp", "add", "bad name", "--", "x")
    assert done.returncode == 1
    assert done.stderr == 'invalid server name "bad name" (use letters, digits, "_" and "-")\n'
    done = env.run("mcp", "add", "x")
    assert done.returncode == 1 and done.stderr.startswith("Usage: pi mcp add <server>")
    done = env.run("mcp", "add", "x", "--exposure", "loud", "--", "cmd")
    assert done.returncode == 1 and "exposure must be one of" in done.stderr
    assert not (env.home / "mcp.json").exists()


def test_add_local_writes_the_project_file_and_says_it_is_not_trusted(mcp_env):
    env = mcp_env([])
    done = env.run("mcp", "add", "-l", "loc", "--", "cmd")
    path = env.work / ".pi" / "mcp.json"
    assert done.returncode == 0, done.stderr
    assert "The project is not trusted" in done.stdout
    assert json.loads(path.read_text()) == {"mcpServers": {"loc": {"command": "cmd"}}}


def test_list_connects_and_reports_each_server(mcp_env):
    env = mcp_env([])
    env.write_mcp({
        "demo": stdio_entry(exposure="direct", toolExposure={"get*": "hidden"}),
        "dead": {"command": "/nonexistent/bin"},
        "crash": stdio_entry("crash-on-start"),
        "flood": stdio_entry("flood-stderr"),
        "garbage": stdio_entry("garbage"),
        "hang": stdio_entry("hang-initialize", timeout=1),
        "off": {"command": "x", "enabled": False},
        "old": {"url": "http://127.0.0.1:9/sse", "type": "sse"},
    })  # fmt: skip
    done = env.run("mcp", "list")
    assert done.returncode == 1
    out = done.stdout
    assert f"demo: connected, 11 tools (direct, global)\n  {sys.executable} {DEMO_SERVER}\n" in out
    assert "get.thing [hidden]" in out and "offers resources" in out
    assert "dead: failed (codemode, global)\n  /nonexistent/bin\n  spawn /nonexistent/bin ENOENT\n" in out
    assert "crash: failed" in out and "fatal: missing API key" in out
    assert "flood: connected" in out and "garbage: connected" in out
    assert "hang: failed" in out
    assert "off: disabled (codemode, global)" in out
    assert "config error: " in out and 'server "old": legacy SSE transport is not supported' in out
    as_json = json.loads(env.run("mcp", "list", "--json").stdout)
    demo = as_json["servers"][0]
    assert demo["name"] == "demo" and demo["state"] == "connected" and demo["resources"] is True
    assert demo["toolExposure"] == {"get.thing": "hidden"}
    assert [s["name"] for s in as_json["servers"]] == [
        "demo",
        "dead",
        "crash",
        "flood",
        "garbage",
        "hang",
        "off",
    ]


def test_list_exits_0_when_all_is_well_and_without_servers(mcp_env):
    env = mcp_env([])
    done = env.run("mcp", "list")
    assert (done.returncode, done.stdout) == (
        0, f"No MCP servers configured. Add them to {env.home / 'mcp.json'} or .pi/mcp.json.\n"
    )  # fmt: skip
    env.write_mcp({"demo": stdio_entry()})
    assert env.run("mcp", "list").returncode == 0


def test_list_reads_the_project_file_only_when_trusted(mcp_env):
    env = mcp_env([])
    env.write_mcp({"proj": stdio_entry()}, project=True)
    assert "proj:" not in env.run("mcp", "list").stdout
    env.trust()
    assert "proj: connected" in env.run("mcp", "list").stdout


def test_unresolved_header_is_the_servers_error(mcp_env):
    env = mcp_env([])
    env.write_mcp(
        {"docs": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${NO_SUCH_TOKEN}"}}}
    )
    done = env.run("mcp", "list")
    assert done.returncode == 1
    assert (
        'Failed to resolve MCP server "docs" header "Authorization" from environment variable: NO_SUCH_TOKEN'
        in done.stdout
    )


def test_transient_http_errors_are_retried_twice(mcp_env):
    import http.server

    from support.http_servers import QuietHandler
    from support.http_servers import serving

    posts: list[str] = []

    class Unavailable(QuietHandler):
        def do_POST(self) -> None:
            posts.append(self.path)
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.reply(503)

    with serving(http.server.ThreadingHTTPServer(("127.0.0.1", 0), Unavailable)) as address:
        env = mcp_env([])
        env.write_mcp({"busy": {"url": f"http://{address}/mcp", "timeout": 10}})
        done = env.run("mcp", "list")
    assert done.returncode == 1
    assert "busy: failed" in done.stdout
    assert "503" in done.stdout
    assert len(posts) == 3


def test_add_writes_oauth_options_and_checks_them(mcp_env):
    env = mcp_env([])
    path = env.home / "mcp.json"
    done = env.run("mcp", "add", "s", "--url", "http://127.0.0.1:9/mcp", "--oauth-client-registration", "dcr",
                   "--oauth-client-id", "cid", "--oauth-client-secret", "${SEC}", "--oauth-callback-port", "8765",
                   "--oauth-client-name", "Claude Code")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f'Added global MCP server "s" in {path}.\nCheck it with: pi mcp list. If it requires sign-in: pi mcp login s\n'
    )
    oauth = json.loads(path.read_text())["mcpServers"]["s"]["oauth"]
    assert list(oauth.items()) == [("clientId", "cid"), ("clientSecret", "${SEC}"), ("callbackPort", 8765),
                                   ("clientName", "Claude Code"), ("clientRegistration", "dcr")]  # fmt: skip
    for args, error in [
        (["--oauth-client-id", "x", "--", "cmd"], "--oauth-client-id only applies to HTTP servers (--url).\n"),
        (["--url", "http://127.0.0.1:9/mcp", "--oauth-callback-port", "99999"],
         'server "t": oauth.callbackPort must be a port number\n'),
        (["--url", "http://127.0.0.1:9/mcp", "--oauth-client-registration", "bogus"],
         'server "t": oauth.clientRegistration must be "auto", "dcr", or "cimd"\n'),
        (["--url", "http://127.0.0.1:9/mcp", "--oauth-client-registration", "cimd"],
         'server "t": oauth.clientRegistration "cimd" needs oauth.clientMetadataUrl: piko has no Client ID '
         "Metadata Document of its own, so name the https URL of one you host\n"),
    ]:  # fmt: skip
        done = env.run("mcp", "add", "t", *args)
        assert (done.returncode, done.stderr) == (1, error)
    assert list(json.loads(path.read_text())["mcpServers"]) == ["s"]  # nothing written


def test_add_writes_the_client_metadata_document(mcp_env):
    """``--oauth-client-registration cimd`` with piko's ``--oauth-client-metadata-url``."""
    env = mcp_env([])
    doc = "https://docs.example/oauth/client.json"
    done = env.run("mcp", "add", "s", "--url", "http://127.0.0.1:9/mcp", "--oauth-client-registration", "cimd",
                   "--oauth-client-metadata-url", doc)  # fmt: skip
    assert done.returncode == 0, done.stderr
    oauth = json.loads((env.home / "mcp.json").read_text())["mcpServers"]["s"]["oauth"]
    assert oauth == {"clientRegistration": "cimd", "clientMetadataUrl": doc}
