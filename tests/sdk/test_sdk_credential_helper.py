"""Keys from a command (``apiKeyCommand``) are cached with the app that fetched them: a session
made after another one closed runs the command again instead of meeting the old session's key."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from typing import Any

import pytest
from support.sdk_rig import SdkRig

import piko
from piko.plugins.providers import credential_helper
from piko.testing import text_turn

pytestmark = pytest.mark.timeout(60)


def _cached_commands() -> Iterator[Any]:
    """Every key command the plugin holds, whatever it keys them by."""
    for value in list(credential_helper._commands.values()):
        yield from value.values() if isinstance(value, dict) else [value]


def test_two_successive_sessions_do_not_share_a_cached_key(sdk: SdkRig, run: Any) -> None:
    server = sdk.serve([text_turn("one"), text_turn("two")])
    vault = sdk.root / "vault.txt"
    vault.write_text("vault-key-1\n")
    models_file = sdk.agent_dir / "models.json"
    models = json.loads(models_file.read_text())
    provider = models["providers"]["mock"]
    provider.pop("apiKey", None)
    provider["apiKeyCommand"] = {"command": f"cat {vault}", "cacheSeconds": 3600}
    models_file.write_text(json.dumps(models))

    async def one_session(text: str) -> None:
        async with await piko.create_agent_session(cwd=sdk.project, model="mock/mock-1") as session:
            await session.prompt(text)

    run(one_session("first"))
    gc.collect()
    assert [c for c in _cached_commands() if c.provider == "mock"] == []  # nothing outlives the app
    vault.write_text("vault-key-2\n")  # the vault issued a new key; the first one expired
    run(one_session("second"))

    keys = [{k.lower(): v for k, v in r["headers"].items()}["authorization"] for r in server.requests]
    assert keys == ["Bearer vault-key-1", "Bearer vault-key-2"]
