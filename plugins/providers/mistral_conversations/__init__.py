"""Registers the ``mistral-conversations`` provider API (Mistral's chat API); the stream code loads on first use."""

from __future__ import annotations

from typing import Any

from piko import hookimpl
from piko.platform.registries import ProviderApi


@hookimpl
def piko_register_provider_apis(register: Any) -> None:
    register(
        ProviderApi(
            name="mistral-conversations", stream="piko.plugins.providers.mistral_conversations.wire:stream"
        )
    )
