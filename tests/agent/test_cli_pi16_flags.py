"""pi 1.6's flags and settings outside the interactive mode: ``--thinking max``, ``httpProxy``,
``--offline``/``PI_OFFLINE`` and ``--use-theme`` (interactive only; accepted everywhere)."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest
from agent_harness import MOCK
from agent_harness import OK
from support.http_servers import QuietHandler
from support.http_servers import serving


@pytest.mark.parametrize(
    ("args", "budget", "level"),
    [
        (("--model", "mock-claude", "--thinking", "max"), 16384, "high"),  # lowered to the model's most
        (("--model", "mock-claude:max"), 16384, "high"),
        (("--model", "mock-1", "--thinking", "max"), None, "off"),
    ],
)
def test_thinking_max_is_lowered_to_what_the_model_takes(
    pi_env: Any, args: tuple[str, ...], budget: int | None, level: str
) -> None:
    env = pi_env(OK)
    done = env.run("-p", *args, "hi")
    assert (done.returncode, done.stderr) == (0, "")
    assert (env.server.requests[0]["body"].get("thinking") or {}).get("budget_tokens") == budget
    assert [e["thinkingLevel"] for e in env.session_lines() if e["type"] == "thinking_level_change"] == [
        level
    ]


def test_thinking_max_where_the_model_lists_it(pi_env: Any) -> None:
    env = pi_env(OK)

    def with_max(data: dict[str, Any]) -> None:
        data["providers"]["mock-anthropic"]["models"][0]["thinkingLevelMap"] = {
            "xhigh": "xhigh",
            "max": "max",
        }

    env.models(with_max)
    done = env.run("--mode", "rpc", "--no-session", "--model", "mock-claude", "--thinking", "max",
                   stdin='{"id":"l","type":"get_available_thinking_levels"}\n{"id":"s","type":"get_state"}\n')  # fmt: skip
    records = {r.get("id"): r for r in map(json.loads, done.stdout.splitlines())}
    assert records["l"]["data"]["levels"] == ["off", "minimal", "low", "medium", "high", "xhigh", "max"]
    assert records["s"]["data"]["thinkingLevel"] == "max"


class _Proxy(ThreadingHTTPServer):
    """A forward HTTP proxy on 127.0.0.1 that records what went through it."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        self.seen: list[str] = []


class _ProxyHandler(QuietHandler):
    server: _Proxy

    def do_POST(self) -> None:
        self.server.seen.append(self.path)
        target = urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        upstream = http.client.HTTPConnection(target.hostname or "", target.port or 80, timeout=30)
        headers = {
            k: v for k, v in self.headers.items() if k.lower() not in ("proxy-connection", "connection")
        }
        upstream.request("POST", target.path + (f"?{target.query}" if target.query else ""), body, headers)
        reply = upstream.getresponse()
        passed = [
            (key, value)
            for key, value in reply.getheaders()
            if key.lower() not in ("transfer-encoding", "connection", "content-length")
        ]
        self.reply(reply.status, reply.read(), headers=passed)


@pytest.fixture
def proxy() -> Iterator[_Proxy]:
    server = _Proxy()
    with serving(server):
        yield server


def _no_proxy_env() -> dict[str, str]:
    return {
        k: "" for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")
    }


def test_http_proxy_setting_routes_provider_requests(pi_env: Any, proxy: _Proxy) -> None:
    env = pi_env(OK)
    env.settings({"httpProxy": f"  http://127.0.0.1:{proxy.server_port}  "})
    clean = {k: v for k, v in env.environment().items() if "proxy" not in k.lower()}
    done = env.run("-p", *MOCK, "hi", env={**clean, "NO_PROXY": "", "no_proxy": ""})
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    assert proxy.seen == [env.server.base_url + "/v1/chat/completions"]


def test_proxy_variables_are_honoured(pi_env: Any, proxy: _Proxy) -> None:
    """``HTTP_PROXY`` routes provider requests (piko's own transport used to bypass it), and wins
    over the ``httpProxy`` setting, as in pi."""
    env = pi_env(OK)
    env.settings({"httpProxy": "http://127.0.0.1:9"})
    url = f"http://127.0.0.1:{proxy.server_port}"
    clean = {k: v for k, v in env.environment().items() if "proxy" not in k.lower()}
    done = env.run("-p", *MOCK, "hi", env={**clean, "HTTP_PROXY": url, "NO_PROXY": "", "no_proxy": ""})
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    assert proxy.seen == [env.server.base_url + "/v1/chat/completions"]


def test_http_proxy_in_a_project_is_ignored(pi_env: Any, proxy: _Proxy) -> None:
    env = pi_env(OK)
    env.settings({"httpProxy": f"http://127.0.0.1:{proxy.server_port}"}, project=True)
    done = env.run("-p", *MOCK, "hi", env={**_no_proxy_env(), "NO_PROXY": ""})
    assert done.returncode == 0 and proxy.seen == []


def test_offline_reaches_tools_and_their_commands(pi_env: Any) -> None:
    call = {"tool_call": {"name": "bash", "arguments": {"command": "echo offline=$PI_OFFLINE"}}}
    env = pi_env([{"blocks": [call]}, *OK, {"blocks": [call]}, *OK])
    assert env.run("-p", "--offline", *MOCK, "go").returncode == 0
    assert "offline=1" in json.dumps(env.server.requests[1]["body"]["messages"][-1])
    done = env.run("-p", *MOCK, "go", env={"PI_OFFLINE": "yes"})
    assert done.returncode == 0
    assert "offline=yes" in json.dumps(env.server.requests[3]["body"]["messages"][-1])


def test_use_theme_outside_the_interactive_mode_is_accepted_and_saves_nothing(pi_env: Any) -> None:
    env = pi_env(OK)
    done = env.run("-p", "--use-theme", "light", *MOCK, "hi")
    assert (done.returncode, done.stdout, done.stderr) == (0, "ok\n", "")
    assert not (env.home / "settings.json").exists()
