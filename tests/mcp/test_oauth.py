"""OAuth against an authorization server on 127.0.0.1: ``pi mcp login``, stored tokens, refresh, logout."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import time

import httpx
import pytest
from mcp_support import PI
from mcp_support import answer
from mcp_support import call
from mcp_support import tool_messages
from support.processes import reaped

pytestmark = pytest.mark.timeout(120)


def login(env, name: str) -> subprocess.CompletedProcess[str]:
    """``pi mcp login NAME``, approving in place of the browser: the test follows the page it prints."""
    process = subprocess.Popen([PI, "mcp", "login", name, "--timeout", "60"], cwd=env.work,
                               env=env.environment({"PIKO_NO_BROWSER": "1"}), stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stderr is not None
    line = process.stderr.readline()
    assert line.startswith(f"Open this page to sign in to {name}:"), line
    url = process.stderr.readline().strip()
    page = httpx.get(url, follow_redirects=True, timeout=30)
    assert page.status_code == 200 and "Signed in" in page.text, (page.url, page.text[:300])
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, out, line + url + "\n" + err)


def test_login_stores_tokens_and_sessions_use_them(mcp_env, auth_server):
    url = auth_server()
    env = mcp_env([call("mcp__secure__secret"), answer()])
    env.write_mcp({"secure": {"url": url, "exposure": "direct"}})
    before = env.run("mcp", "list")
    assert before.returncode == 1
    assert "needs sign-in: run `pi mcp login secure`" in before.stdout
    done = login(env, "secure")
    assert done.returncode == 0, done.stderr
    assert done.stdout == 'Signed in to MCP server "secure".\n'
    auth = env.home / "mcp-auth.json"
    assert stat.S_IMODE(auth.stat().st_mode) == 0o600
    stored = json.loads(auth.read_text())["servers"][f"secure|{url}"]
    assert stored["tokens"]["access_token"] and stored["client"]["client_id"]
    assert "secure: connected, 2 tools" in env.run("mcp", "list").stdout
    run = env.prompt("go")
    assert run.returncode == 0, run.stderr
    assert tool_messages(env.bodies()[1])[0]["content"] == "the secret"
    out = env.run("mcp", "logout", "secure")
    assert (out.returncode, out.stdout) == (0, 'Signed out of MCP server "secure".\n')
    assert f"secure|{url}" not in json.loads(auth.read_text())["servers"]


def test_expired_tokens_are_refreshed(mcp_env, auth_server):
    url = auth_server(token_seconds=1)
    env = mcp_env([])
    env.write_mcp({"secure": {"url": url}})
    assert login(env, "secure").returncode == 0
    first = json.loads((env.home / "mcp-auth.json").read_text())["servers"][f"secure|{url}"]["tokens"]
    time.sleep(2)
    assert "secure: connected" in env.run("mcp", "list").stdout
    second = json.loads((env.home / "mcp-auth.json").read_text())["servers"][f"secure|{url}"]["tokens"]
    assert second["access_token"] != first["access_token"]


def test_login_of_an_unknown_or_stdio_server_is_refused(mcp_env):
    env = mcp_env([])
    env.write_mcp({"local": {"command": "x"}})
    done = env.run("mcp", "login", "nope")
    assert (done.returncode, done.stderr) == (1, 'No MCP server named "nope" in mcp.json.\n')
    done = env.run("mcp", "login", "local")
    assert done.returncode == 1 and "does not use OAuth" in done.stderr


def test_a_session_says_in_one_line_that_sign_in_is_needed(mcp_env, auth_server):
    url = auth_server()
    env = mcp_env([answer()])
    env.write_mcp({"secure": {"url": url, "exposure": "direct"}})
    done = env.prompt("go")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        'Warning: MCP server "secure" failed: needs sign-in: run `pi mcp login secure`'
    ]
    assert not (env.home / "mcp-auth.json").exists()  # no client registered behind the user's back


def test_mcp_login_and_logout_in_a_running_session(mcp_env, auth_server):
    """``/mcp login`` names the page in a notice; once approved the session's server connects and
    its tools work on the next turn; ``/mcp logout`` deletes the sign-in."""
    from piko.testing.rpc_client import RpcProcess

    url = auth_server()
    env = mcp_env([call("mcp__secure__secret"), answer()])
    env.write_mcp({"secure": {"url": url, "exposure": "direct"}, "local": {"command": sys.executable}})
    args = ["--mode", "rpc", "--provider", "mock", "--model", "mock-1"]
    rpc = RpcProcess(env.home, env.work, args, env.environment({"PIKO_NO_BROWSER": "1"}))

    def notice(start: str) -> str:
        record = rpc.wait_for(
            lambda r: r.get("method") == "notify" and str(r.get("message")).startswith(start), 60
        )
        return str(record["message"])

    try:
        rpc.send({"id": "l", "type": "prompt", "message": "/mcp login secure"})
        page = notice('Sign in to MCP server "secure" in your browser:\n').splitlines()[1]
        approved = httpx.get(page, follow_redirects=True, timeout=30)
        assert approved.status_code == 200 and "Signed in" in approved.text
        assert notice('Signed in to MCP server "secure"') == 'Signed in to MCP server "secure" (2 tools).'
        rpc.prompt("go", timeout=60)
        rpc.send({"id": "n", "type": "prompt", "message": "/mcp login local"})
        assert "Only HTTP servers without an Authorization header do." in notice(
            "No enabled MCP server uses OAuth"
        )
        rpc.send({"id": "o", "type": "prompt", "message": "/mcp logout secure"})
        assert notice("Signed out") == 'Signed out of MCP server "secure".'
    finally:
        assert rpc.close() == 0, rpc.stderr
    assert tool_messages(env.bodies()[1])[0]["content"] == "the secret"
    assert f"secure|{url}" not in json.loads((env.home / "mcp-auth.json").read_text())["servers"]


def test_a_server_asking_for_more_scope_asks_for_sign_in_again(mcp_env, auth_server):
    """A 403 ``insufficient_scope`` step-up: the call fails saying to sign in (no browser opened
    by a session); the next ``pi mcp login`` asks for the added scope, then the call works."""
    url = auth_server()
    env = mcp_env([call("mcp__secure__admin_secret"), answer(), call("mcp__secure__admin_secret"), answer()])
    env.write_mcp({"secure": {"url": url, "exposure": "direct", "oauth": {"scope": "tools"}}})
    assert login(env, "secure").returncode == 0
    stored = lambda: json.loads((env.home / "mcp-auth.json").read_text())["servers"][f"secure|{url}"]  # noqa: E731
    assert stored()["tokens"]["scope"] == "tools"
    first = env.prompt("go")
    assert first.returncode == 0, first.stderr
    refused = tool_messages(env.bodies()[1])[-1]["content"]
    assert "needs sign-in: run `pi mcp login secure`" in refused, refused
    assert stored()["scope"] == "tools admin"
    assert login(env, "secure").returncode == 0
    assert stored()["tokens"]["scope"] == "tools admin"
    second = env.prompt("go")
    assert second.returncode == 0, second.stderr
    assert tool_messages(env.bodies()[3])[-1]["content"] == "the admin secret"


def test_auth_server_metadata_url_replaces_discovery(mcp_env, auth_server):
    """The server names an authorization server that is not there: sign-in fails, unless
    ``oauth.authServerMetadataUrl`` points at the right one's metadata."""
    url = auth_server(3600, "--wrong-authorization-server")
    env = mcp_env([call("mcp__secure__secret"), answer()])
    env.write_mcp({"secure": {"url": url, "exposure": "direct"}})
    failed = subprocess.run([PI, "mcp", "login", "secure", "--timeout", "30"], cwd=env.work,
                            env=env.environment({"PIKO_NO_BROWSER": "1"}), stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert failed.returncode == 1 and 'Sign-in to MCP server "secure" failed' in failed.stderr
    metadata = url.removesuffix("/mcp") + "/.well-known/oauth-authorization-server"
    env.write_mcp(
        {"secure": {"url": url, "exposure": "direct", "oauth": {"authServerMetadataUrl": metadata}}}
    )
    done = login(env, "secure")
    assert done.returncode == 0, done.stderr
    run = env.prompt("go")
    assert run.returncode == 0, run.stderr
    assert tool_messages(env.bodies()[1])[0]["content"] == "the secret"


def test_login_takes_the_redirected_url_pasted_on_stdin(mcp_env, auth_server):
    """The browser runs on another machine: the test fetches the authorization page itself,
    without following its redirect, and writes the address it redirects to on the login's stdin.
    A URL of another sign-in (wrong ``state``) or one without ``code`` is one error line each,
    and the login goes on waiting; the loopback callback is never requested."""
    from urllib.parse import parse_qs
    from urllib.parse import urlencode
    from urllib.parse import urlsplit

    url = auth_server()
    env = mcp_env([call("mcp__secure__secret"), answer()])
    env.write_mcp({"secure": {"url": url, "exposure": "direct"}})
    process = subprocess.Popen([PI, "mcp", "login", "secure", "--timeout", "60"], cwd=env.work,
                               env=env.environment({"PIKO_NO_BROWSER": "1"}), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stdin is not None and process.stderr is not None
    with reaped(process):
        assert process.stderr.readline() == "Open this page to sign in to secure:\n"
        page = process.stderr.readline().strip()
        redirected = httpx.get(page, follow_redirects=False, timeout=30)
        assert redirected.status_code in (302, 303, 307), redirected.text[:300]
        location = redirected.headers["location"]
        parts = urlsplit(location)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        assert query["code"] and query["state"]
        wrong_state = parts._replace(query=urlencode({**query, "state": "not-this-one"})).geturl()
        no_code = parts._replace(query=urlencode({"state": query["state"]})).geturl()
        process.stdin.write(wrong_state + "\n")
        process.stdin.flush()
        assert process.stderr.readline().startswith(
            "That URL is not from this sign-in (its state does not match)"
        )
        process.stdin.write(no_code + "\n")
        process.stdin.flush()
        assert process.stderr.readline().startswith("That URL has no authorization code")
        process.stdin.write(location + "\n")
        process.stdin.flush()
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert out == 'Signed in to MCP server "secure".\n'
    assert err == ""
    run = env.prompt("go")
    assert run.returncode == 0, run.stderr
    assert tool_messages(env.bodies()[1])[0]["content"] == "the secret"


@pytest.fixture
def client_document(tmp_path):
    """A Client ID Metadata Document served over https on 127.0.0.1 (a self-signed certificate
    the test authorization server accepts, as a hosted document would be served); yields its URL
    and the list of paths fetched."""
    import http.server
    import ssl
    import threading

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)  # fmt: skip
    fetched: list[str] = []
    where: dict[str, str] = {}

    class Document(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fetched.append(self.path)
            body = json.dumps({
                "client_id": where["url"], "client_name": "piko at example", "token_endpoint_auth_method": "none",
                "redirect_uris": ["http://127.0.0.1/callback", "http://localhost/callback"],
                "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            }).encode()  # fmt: skip
            self.send_response(200 if self.path == "/oauth/client.json" else 404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Document)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    where["url"] = f"https://127.0.0.1:{server.server_address[1]}/oauth/client.json"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield where["url"], fetched
    server.shutdown()
    server.server_close()


def _stored_client(env, url: str) -> dict:
    return (
        json.loads((env.home / "mcp-auth.json").read_text())["servers"][f"secure|{url}"].get("client") or {}
    )


def test_auto_identifies_by_the_configured_document_when_the_server_takes_it(
    mcp_env, auth_server, client_document
):
    doc, fetched = client_document
    url = auth_server(3600, "--cimd")
    env = mcp_env([call("mcp__secure__secret"), answer()])
    env.write_mcp({"secure": {"url": url, "exposure": "direct", "oauth": {"clientMetadataUrl": doc}}})
    done = login(env, "secure")
    assert done.returncode == 0, done.stderr
    client = _stored_client(env, url)
    assert client["client_id"] == doc and "client_secret" not in client
    assert fetched and set(fetched) == {"/oauth/client.json"}  # the server read the document
    run = env.prompt("go")
    assert run.returncode == 0, run.stderr
    assert tool_messages(env.bodies()[1])[0]["content"] == "the secret"


@pytest.mark.parametrize(
    ("flags", "oauth"),
    [
        pytest.param((), {}, id="auto, the server takes no documents"),
        pytest.param(("--cimd",), {"clientRegistration": "dcr"}, id="dcr"),
        pytest.param(("--cimd",), {"clientName": "Claude Code"}, id="auto with clientName"),
    ],
)
def test_registration_instead_of_the_document(mcp_env, auth_server, client_document, flags, oauth):
    doc, fetched = client_document
    url = auth_server(3600, *flags)
    env = mcp_env([])
    env.write_mcp({"secure": {"url": url, "oauth": {"clientMetadataUrl": doc, **oauth}}})
    done = login(env, "secure")
    assert done.returncode == 0, done.stderr
    client = _stored_client(env, url)
    assert client["client_id"] and client["client_id"] != doc
    assert fetched == []


def test_cimd_with_a_server_that_takes_no_documents_fails_in_one_line(mcp_env, auth_server, client_document):
    doc, _fetched = client_document
    url = auth_server()
    env = mcp_env([])
    env.write_mcp({"secure": {"url": url, "oauth": {"clientRegistration": "cimd", "clientMetadataUrl": doc}}})
    failed = subprocess.run([PI, "mcp", "login", "secure", "--timeout", "30"], cwd=env.work,
                            env=env.environment({"PIKO_NO_BROWSER": "1"}), stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert failed.returncode == 1
    assert failed.stderr.splitlines() == [
        'Sign-in to MCP server "secure" failed: The authorization server does not support Client ID '
        'Metadata Documents for public clients; remove oauth.clientRegistration "cimd"'
    ]
    assert (
        not _stored_client(env, url) if (env.home / "mcp-auth.json").exists() else True
    )  # nothing registered


def test_login_on_a_terminal_prompts_for_the_redirected_url(mcp_env, auth_server):
    """stdin is a terminal: after the page, a prompt line asks for the redirected URL; a refused
    one is said and the prompt comes again."""
    import os
    import pty

    url = auth_server()
    env = mcp_env([])
    env.write_mcp({"secure": {"url": url}})
    master, slave = pty.openpty()
    process = subprocess.Popen([PI, "mcp", "login", "secure", "--timeout", "60"], cwd=env.work,
                               env=env.environment({"PIKO_NO_BROWSER": "1"}), stdin=slave,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    os.close(slave)
    assert process.stderr is not None
    try:
        with reaped(process):
            assert process.stderr.readline() == "Open this page to sign in to secure:\n"
            page = process.stderr.readline().strip()
            location = httpx.get(page, follow_redirects=False, timeout=30).headers["location"]
            prompt = "Or paste the redirected URL here: "
            assert process.stderr.read(len(prompt)) == prompt
            os.write(master, b"http://127.0.0.1:9/callback?state=x\n")
            refused = process.stderr.readline()
            assert refused.startswith("That URL has no authorization code"), refused
            assert process.stderr.read(len(prompt)) == prompt
            os.write(master, location.encode() + b"\n")
            out, err = process.communicate(timeout=60)
    finally:
        os.close(master)
    assert (process.returncode, out, err) == (0, 'Signed in to MCP server "secure".\n', "\n")
