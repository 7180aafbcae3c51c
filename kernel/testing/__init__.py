"""piko.testing: test a piko plugin with pytest (fixtures, a scripted LLM server, an RPC client).

Installing piko registers the pytest plugin :mod:`piko.testing.plugin` (entry point ``pytest11``),
whose fixtures any test may take:

``piko_home``
    an isolated configuration (``HOME``, ``PI_CODING_AGENT_DIR``, ``PIKO_CACHE_DIR`` in ``tmp_path``,
    no keys or piko settings from the environment): a :class:`~piko.testing.home.PikoHome`.
``llm_server``
    a scripted LLM server on 127.0.0.1 speaking the providers' streaming formats: a started
    :class:`~piko.testing.llm_server.LLMServer`.
``piko_session``
    runs prompts in process with the plugin under test and returns the events, messages and
    session entries: a :class:`~piko.testing.session.PikoSession`.
``piko_rpc``
    starts ``pi --mode rpc`` as a subprocess against the server: a function returning a
    :class:`~piko.testing.rpc_client.RpcProcess`.

Nothing is imported until a test asks for a fixture, so the plugin costs pytest's start-up next
to nothing (``-p no:piko`` switches it off). The names below are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from piko import _import_on_first_use

if TYPE_CHECKING:
    from piko.testing.home import MOCK_MODEL as MOCK_MODEL
    from piko.testing.home import MOCK_PROVIDER as MOCK_PROVIDER
    from piko.testing.home import PikoHome as PikoHome
    from piko.testing.home import mock_provider as mock_provider
    from piko.testing.home import mock_providers as mock_providers
    from piko.testing.llm_server import LLMServer as LLMServer
    from piko.testing.llm_server import TurnContext as TurnContext
    from piko.testing.llm_server import WireFormat as WireFormat
    from piko.testing.llm_server import register_format as register_format
    from piko.testing.llm_server import text_turn as text_turn
    from piko.testing.llm_server import tool_turn as tool_turn
    from piko.testing.rpc_client import RpcProcess as RpcProcess
    from piko.testing.rpc_client import agent_environment as agent_environment
    from piko.testing.rpc_client import credential_variable as credential_variable
    from piko.testing.rpc_client import hermetic_environment as hermetic_environment
    from piko.testing.rpc_client import pi_command as pi_command
    from piko.testing.session import PikoSession as PikoSession
    from piko.testing.session import RecordingUI as RecordingUI
    from piko.testing.session import SessionRun as SessionRun

_EXPORTS: dict[str, str] = {
    "PikoHome": "piko.testing.home",
    "MOCK_PROVIDER": "piko.testing.home",
    "MOCK_MODEL": "piko.testing.home",
    "mock_provider": "piko.testing.home",
    "mock_providers": "piko.testing.home",
    "LLMServer": "piko.testing.llm_server",
    "TurnContext": "piko.testing.llm_server",
    "WireFormat": "piko.testing.llm_server",
    "register_format": "piko.testing.llm_server",
    "text_turn": "piko.testing.llm_server",
    "tool_turn": "piko.testing.llm_server",
    "RpcProcess": "piko.testing.rpc_client",
    "agent_environment": "piko.testing.rpc_client",
    "credential_variable": "piko.testing.rpc_client",
    "hermetic_environment": "piko.testing.rpc_client",
    "pi_command": "piko.testing.rpc_client",
    "PikoSession": "piko.testing.session",
    "RecordingUI": "piko.testing.session",
    "SessionRun": "piko.testing.session",
}

__all__ = list(_EXPORTS)


if not TYPE_CHECKING:
    __getattr__ = _import_on_first_use(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return sorted(__all__)
