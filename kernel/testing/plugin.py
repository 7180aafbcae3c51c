"""The pytest plugin of piko.testing (entry point ``pytest11``): the fixtures, nothing else.

pytest imports this module at start-up wherever piko is installed, so it imports only pytest:
what a fixture needs is imported when a test first takes it. ``pytest -p no:piko`` leaves it out.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from contextlib import ExitStack
from typing import TYPE_CHECKING
from typing import Any

import pytest

if TYPE_CHECKING:
    from piko.testing.home import PikoHome
    from piko.testing.llm_server import LLMServer
    from piko.testing.rpc_client import RpcProcess
    from piko.testing.session import PikoSession


@pytest.fixture
def piko_home(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> PikoHome:
    """An isolated piko configuration in ``tmp_path``, applied to this process.

    ``HOME``, ``PI_CODING_AGENT_DIR`` (``HOME/.pi/agent``), ``PIKO_CACHE_DIR`` and the XDG caches
    point into ``tmp_path``; API keys, tokens, cloud accounts and ``PI_*``/``PIKO_*`` variables are
    removed from the environment. Returns a :class:`~piko.testing.home.PikoHome`
    (``agent_dir``, ``project``, ``write_models``, ``write_settings``, ``pi(...)``...).
    """
    from piko.testing.home import PikoHome

    return PikoHome(tmp_path / "piko").isolate(monkeypatch)


@pytest.fixture
def llm_server() -> Iterator[LLMServer]:
    """A scripted LLM server on 127.0.0.1, started, with no turns yet (``add_turns([...])``).

    It answers OpenAI chat completions (``/v1/chat/completions``), Anthropic messages
    (``/v1/messages``), OpenAI responses, Google and Mistral in their streaming formats; each
    request takes the next turn (``{"blocks": [{"text": ...}, {"tool_call": {...}}]}``) and is
    recorded in ``requests``. Returns a :class:`~piko.testing.llm_server.LLMServer`.
    """
    from piko.testing.llm_server import LLMServer

    with LLMServer() as server:
        yield server


@pytest.fixture
def piko_session(piko_home: PikoHome, llm_server: LLMServer) -> PikoSession:
    """Runs prompts in this process with the plugin under test against ``llm_server``.

    ``piko_session.run("prompt", turns=[...], extensions=[path], plugins={"name": "module"})``
    returns a :class:`~piko.testing.session.SessionRun` (``events``, ``messages``, ``entries``,
    ``text``, ``tool_results``, ``extension_errors``, ``ui``). The model is ``mock/mock-1``
    (OpenAI chat completions); ``model="mock-anthropic/mock-claude"`` speaks Anthropic's format.
    """
    from piko.testing.session import PikoSession

    return PikoSession(piko_home, llm_server)


@pytest.fixture
def piko_rpc(piko_home: PikoHome, llm_server: LLMServer) -> Iterator[Callable[..., RpcProcess]]:
    """Starts ``pi --mode rpc`` as a subprocess in ``piko_home`` against ``llm_server``.

    ``piko_rpc(*args, env=None)`` returns a running :class:`~piko.testing.rpc_client.RpcProcess`
    (``request``, ``prompt``, ``wait_for``, ``records``, ``close``); ``args`` come after
    ``--mode rpc --no-session --provider mock --model mock-1`` (``"-e", "ext.py"``). Every process
    still running at the end of the test is killed.
    """
    from piko.testing.rpc_client import RpcProcess

    piko_home.use_llm_server(llm_server)
    with ExitStack() as running:

        def start(*args: str, env: dict[str, str] | None = None) -> RpcProcess:
            base = ["--mode", "rpc", "--no-session", "--provider", "mock", "--model", "mock-1"]
            process = RpcProcess(
                piko_home.agent_dir, piko_home.project, [*base, *args], piko_home.environment(env)
            )
            return running.enter_context(process)

        yield start
