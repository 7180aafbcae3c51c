"""Registers the ``anthropic-messages`` provider API (implementation in ``anthropic_messages_stream``)."""

from __future__ import annotations

from typing import Any

from piko import hookimpl
from piko.platform.registries import ProviderApi


@hookimpl
def piko_register_provider_apis(register: Any) -> None:
    register(
        ProviderApi(name="anthropic-messages", stream="piko.plugins.providers.anthropic_messages.wire:stream")
    )
