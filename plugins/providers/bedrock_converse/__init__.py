"""Registers the ``bedrock-converse-stream`` provider API (Amazon Bedrock's ConverseStream API); the stream code loads on first use."""

from __future__ import annotations

from typing import Any

from piko import hookimpl
from piko.platform.registries import ProviderApi


@hookimpl
def piko_register_provider_apis(register: Any) -> None:
    register(
        ProviderApi(
            name="bedrock-converse-stream", stream="piko.plugins.providers.bedrock_converse.wire:stream"
        )
    )
