"""The export through its hook: the dispatcher, ``pi --export``, and RPC ``export_html``."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from export_helpers import RICH
from export_helpers import Page

from piko.data.events import ExportRequest
from piko.engine.export import NO_EXPORTER
from piko.engine.export import ExportFailed
from piko.engine.export import request_export
from piko.extensions.context import ExtensionContext
from piko.platform.dispatch import Dispatcher
from piko.platform.manager import PikoPluginManager
from piko.platform.markers import hookimpl
from piko.plugins.export import html as export_plugin
from piko.testing import hermetic_environment

PI = str(Path(sys.executable).with_name("pi"))


def dispatcher(*plugins: tuple[Any, str]) -> Any:
    pm = PikoPluginManager()
    for plugin, name in plugins:
        pm.register(plugin, name=name)
    return SimpleNamespace(dispatcher=Dispatcher(pm))


def test_the_hook_writes_the_page(tmp_path: Path) -> None:
    app = dispatcher((export_plugin, "export.html"))
    out = tmp_path / "page.html"
    request = ExportRequest(session_file=str(RICH), output_path=str(out))
    assert asyncio.run(request_export(app, request, None)) == str(out)
    assert "Fixture session renamed" in out.read_text()


def test_a_plugin_of_ones_own_answers_first(tmp_path: Path) -> None:
    class Mine:
        @hookimpl
        def piko_export_html(self, request: Any, ctx: Any) -> Any:
            if request.output_path and request.output_path.endswith(".md"):
                Path(request.output_path).write_text("# mine\n")
                return request.output_path
            return None  # not mine: the built-in exporter answers

    # registered after the built-in one, still asked first: the built-in runs last
    app = dispatcher((export_plugin, "export.html"), (Mine(), "mine"))
    md, page = tmp_path / "x.md", tmp_path / "x.html"
    assert asyncio.run(
        request_export(app, ExportRequest(session_file=str(RICH), output_path=str(md)), None)
    ) == str(md)
    assert md.read_text() == "# mine\n"
    assert asyncio.run(
        request_export(app, ExportRequest(session_file=str(RICH), output_path=str(page)), None)
    ) == str(page)
    assert page.read_text().startswith("<!DOCTYPE html>")


def test_errors_reach_the_caller(tmp_path: Path) -> None:
    app = dispatcher((export_plugin, "export.html"))
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(ExportFailed, match=f"File not found: {missing}"):
        asyncio.run(request_export(app, ExportRequest(session_file=str(missing)), None))
    with pytest.raises(ExportFailed, match="not available"):
        asyncio.run(request_export(dispatcher(), ExportRequest(session_file=str(RICH)), None))
    assert app.dispatcher.error_listeners == []  # the listener is removed again


def test_a_running_session_gives_its_leaf_and_system_prompt(tmp_path: Path) -> None:
    """What ``/export`` and RPC hand over: the session's entries, header, and its ctx."""
    from piko.data.messages import AssistantMessage
    from piko.data.messages import TextContent
    from piko.data.messages import UserMessage
    from piko.sessions.manager import SessionManager

    manager = SessionManager.in_memory(str(tmp_path))
    manager.append_message(UserMessage(content="first question"))
    first_answer = manager.append_message(AssistantMessage(content=[TextContent(text="first answer")]))
    manager.append_message(UserMessage(content="second question"))
    manager.append_message(AssistantMessage(content=[TextContent(text="second answer")]))
    manager.branch(first_answer)  # /tree back to the first answer
    host = SimpleNamespace(
        cwd=str(tmp_path),
        read_only_session_manager=manager.read_only_session_manager,
        get_system_prompt=lambda: "You are a careful assistant.",
    )
    app = dispatcher((export_plugin, "export.html"))
    out = tmp_path / "live.html"
    request = ExportRequest(
        session_file=manager.get_session_file(),
        entries=manager.get_entries(),
        header=manager.header,
        output_path=str(out),
    )
    assert asyncio.run(request_export(app, request, ExtensionContext(host))) == str(out)
    page = Page(out.read_text())
    assert page.find("body")[0]["data-leaf"] == first_answer
    articles = {a["data-id"]: a["class"].split() for a in page.find("article")}
    assert sum("off" in classes for classes in articles.values()) == 2  # the second exchange, hidden
    assert "You are a careful assistant." in page.text and "second answer" in page.text


# ---------------------------------------------------------------------------
# pi --export FILE [OUTPUT]
# ---------------------------------------------------------------------------


def run_pi(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    (home / ".pi" / "agent").mkdir(parents=True, exist_ok=True)
    env = hermetic_environment()
    env.update(
        HOME=str(home), PI_CODING_AGENT_DIR=str(home / ".pi" / "agent"), PIKO_CACHE_DIR=str(home / "cache")
    )
    return subprocess.run(
        [PI, *args],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_export_with_pis_default_name(tmp_path: Path) -> None:
    result = run_pi(tmp_path, "--export", str(RICH))
    assert result.returncode == 0, result.stderr
    # not a terminal: pi's informational output goes to stderr
    assert result.stderr == "Exported to: pi-session-session.html\n" and result.stdout == ""
    assert "Fixture session renamed" in (tmp_path / "pi-session-session.html").read_text()


def test_cli_export_to_a_named_file(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    result = run_pi(tmp_path, "--export", str(RICH), "out/page.html")
    assert result.returncode == 0, result.stderr
    assert result.stderr == "Exported to: out/page.html\n"
    assert (tmp_path / "out" / "page.html").read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--export", "missing.jsonl"], "Error: File not found: missing.jsonl\n"),
        (
            ["--export", str(RICH), "no/such/dir/x.html"],
            "Error: Cannot write no/such/dir/x.html: no such directory",
        ),
        (["--disable-plugin", "export.html", "--export", str(RICH)], f"Error: {NO_EXPORTER}\n"),
    ],
)
def test_cli_export_errors(tmp_path: Path, args: list[str], error: str) -> None:
    result = run_pi(tmp_path, *args)
    assert result.returncode == 1
    assert error in result.stderr
    assert not list(tmp_path.glob("*.html"))


# ---------------------------------------------------------------------------
# RPC export_html, against a real pi --mode rpc and a scripted LLM server
# ---------------------------------------------------------------------------


@pytest.fixture
def rpc_process(tmp_path: Path) -> Any:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rpc"))
    from rpc_client import RpcProcess
    from support.llm_server import LLMServer
    from support.pi_dirs import make_pi_dirs

    started: list[Any] = []

    def start(turns: list[dict[str, Any]], args: list[str]) -> Any:
        server = LLMServer(turns).__enter__()
        home, work = make_pi_dirs(tmp_path / f"run{len(started)}", server)
        process = RpcProcess(home, work, args)
        started.append((process, server))
        return process

    yield start
    for process, server in started:
        process.kill()
        server.__exit__(None, None, None)


def test_rpc_export_html(rpc_process: Any) -> None:
    turns = [
        {
            "blocks": [
                {"text": "Running it."},
                {"tool_call": {"name": "bash", "arguments": {"command": "echo rpc-export"}}},
            ]
        },
        {"blocks": [{"text": "It printed **rpc-export**."}]},
    ]
    process = rpc_process(
        turns, ["--mode", "rpc", "--provider", "mock", "--model", "mock-1", "--tools", "bash"]
    )
    process.request({"id": "p", "type": "prompt", "message": "run echo <now>"})
    process.wait_for(lambda r: r.get("type") == "agent_end", 30)
    target = process.work / "export.html"
    response = process.request({"id": "x", "type": "export_html", "outputPath": str(target)})
    assert response["success"] is True and response["data"] == {"path": str(target)}
    page = Page(target.read_text())
    assert "run echo <now>" in page.text and "echo rpc-export" in page.text
    assert "<strong>rpc-export</strong>" in page.html
    assert page.find("details", class_="system-prompt")  # the running session's prompt is included
    # without outputPath: pi's name for the session file, in the working directory
    state = process.request({"id": "s", "type": "get_state"})["data"]
    response = process.request({"id": "y", "type": "export_html"})
    expected = "pi-session-" + Path(state["sessionFile"]).name.removesuffix(".jsonl") + ".html"
    assert response["data"] == {"path": expected}
    assert (process.work / expected).exists()
    assert process.close() == 0


def test_rpc_export_of_a_session_that_is_not_saved(rpc_process: Any) -> None:
    """``--no-session``: pi refuses ("Cannot export in-memory session"); piko exports what there is."""
    process = rpc_process(
        [{"blocks": [{"text": "kept in memory"}]}],
        ["--mode", "rpc", "--no-session", "--provider", "mock", "--model", "mock-1"],
    )
    process.request({"id": "p", "type": "prompt", "message": "hello"})
    process.wait_for(lambda r: r.get("type") == "agent_end", 30)
    target = process.work / "memory.html"
    response = process.request({"id": "x", "type": "export_html", "outputPath": str(target)})
    assert response["data"] == {"path": str(target)}
    assert "kept in memory" in Page(target.read_text()).text
    assert process.close() == 0
