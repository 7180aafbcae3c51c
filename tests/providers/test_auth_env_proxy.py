"""Proxy variables in an ``auth.json`` ``env`` map (``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY``,
``NO_PROXY``) route that provider's requests, and no other's: real ``pi`` subprocesses, the scripted
server and a small forward proxy on 127.0.0.1 that records what it carried."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from support.clean_env import clean_environment
from support.llm_server import LLMServer

from piko.plugins.providers.proxy_env import scoped_proxy

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}


class ForwardProxy:
    """A plain-HTTP forward proxy (absolute-URI requests, no CONNECT) that records each URL."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                proxy.seen.append(self.path)
                target = urlsplit(self.path)
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                upstream.request(
                    "POST", target.path + (f"?{target.query}" if target.query else ""), body, headers
                )
                answer = upstream.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in HOP_BY_HOP and key.lower() != "content-length":
                        self.send_header(key, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                upstream.close()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def proxy() -> Iterator[ForwardProxy]:
    running = ForwardProxy()
    yield running
    running.close()


MODELS = [{"id": "m-1", "name": "M", "contextWindow": 128000, "maxTokens": 1000}]


def _setup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base_url: str, env: dict[str, str] | None
) -> None:
    agent = clean_environment(monkeypatch, tmp_path)
    for name in list(os.environ):
        if name.lower() in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
            monkeypatch.delenv(name)
    providers = {
        name: {
            "baseUrl": base_url + "/v1",
            "api": "openai-completions",
            "apiKey": "from-models-json",
            "models": MODELS,
        }
        for name in ("proxied", "direct")
    }
    (agent / "models.json").write_text(json.dumps({"providers": providers}))
    auth: dict[str, Any] = {
        "proxied": {"type": "api_key", "key": "k1"},
        "direct": {"type": "api_key", "key": "k2"},
    }
    if env is not None:
        auth["proxied"]["env"] = env
    (agent / "auth.json").write_text(json.dumps(auth))
    (agent / "auth.json").chmod(0o600)


def _ask(tmp_path: Path, provider: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "piko", "--no-session", "--model", f"{provider}/m-1", "-p", "hi"],
        env={**os.environ, **env}, capture_output=True, text=True, timeout=90, cwd=tmp_path,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_the_env_maps_proxy_carries_that_providers_requests_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, proxy: ForwardProxy
) -> None:
    turns = [{"blocks": [{"text": "through the proxy"}]}, {"blocks": [{"text": "straight"}]}]
    with LLMServer(turns) as server:
        _setup(tmp_path, monkeypatch, server.base_url, {"HTTP_PROXY": proxy.url})
        through = _ask(tmp_path, "proxied")
        direct = _ask(tmp_path, "direct")
        endpoint = server.base_url + "/v1/chat/completions"
    assert through.returncode == 0, through.stderr
    assert "through the proxy" in through.stdout
    assert direct.returncode == 0 and "straight" in direct.stdout
    assert proxy.seen == [endpoint]  # the first provider's only


def test_the_env_maps_no_proxy_wins_over_the_process_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, proxy: ForwardProxy
) -> None:
    turns = [{"blocks": [{"text": "straight"}]}, {"blocks": [{"text": "proxied by the process"}]}]
    with LLMServer(turns) as server:
        _setup(tmp_path, monkeypatch, server.base_url, {"no_proxy": "127.0.0.1"})
        direct = _ask(tmp_path, "proxied", HTTP_PROXY=proxy.url)
        assert direct.returncode == 0 and "straight" in direct.stdout, direct.stderr
        assert proxy.seen == []
        other = _ask(tmp_path, "direct", HTTP_PROXY=proxy.url)  # no env map: the process's proxy
    assert other.returncode == 0 and "proxied by the process" in other.stdout, other.stderr
    assert len(proxy.seen) == 1


def test_an_unreachable_scoped_proxy_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LLMServer([{"blocks": [{"text": "never"}]}]) as server:
        _setup(tmp_path, monkeypatch, server.base_url, {"HTTP_PROXY": "http://127.0.0.1:9"})
        (tmp_path / "agent" / "settings.json").write_text(json.dumps({"retry": {"enabled": False}}))
        done = _ask(tmp_path, "proxied")
        assert server.requests == []
    assert done.returncode != 0
    assert "Connection error" in done.stderr or "connect" in done.stderr.lower(), done.stderr


@pytest.mark.parametrize(
    ("env", "url", "expected"),
    [
        ({}, "http://a.test/v1", None),  # no proxy variable in the map: the process decides
        ({"HTTPS_PROXY": "p:3128"}, "https://api.test/v1", "https://p:3128"),
        ({"HTTPS_PROXY": "http://p:3128"}, "http://api.test/v1", ""),  # no proxy for http
        ({"ALL_PROXY": "http://p:1"}, "http://api.test/v1", "http://p:1"),
        ({"http_proxy": "http://p:1", "NO_PROXY": "*.test"}, "http://api.test/v1", ""),
        ({"http_proxy": "http://p:1", "NO_PROXY": "api.test:8080"}, "http://api.test/v1", "http://p:1"),
        ({"http_proxy": "http://p:1", "NO_PROXY": "api.test:8080"}, "http://api.test:8080/v1", ""),
        ({"http_proxy": "http://p:1", "NO_PROXY": "*"}, "http://api.test/v1", ""),
        ({"http_proxy": "http://p:1", "NO_PROXY": "other.test, .x"}, "http://api.test/v1", "http://p:1"),
    ],
)
def test_which_proxy_a_request_takes(env: dict[str, str], url: str, expected: str | None,
                                     monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    from piko.lib.provider_env import forget_provider_envs
    from piko.lib.provider_env import set_provider_env

    for name in list(os.environ):
        if name.lower() in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
            monkeypatch.delenv(name)
    set_provider_env("p", env)
    try:
        assert scoped_proxy("p", url) == expected
    finally:
        forget_provider_envs()
