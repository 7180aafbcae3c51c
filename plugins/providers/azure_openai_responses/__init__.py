"""Registers the ``azure-openai-responses`` provider API (Azure OpenAI's responses API); the stream code loads on first use."""

from __future__ import annotations

from typing import Any

from piko import hookimpl
from piko.platform.registries import ProviderApi


@hookimpl
def piko_register_provider_apis(register: Any) -> None:
    register(
        ProviderApi(
            name="azure-openai-responses",
            stream="piko.plugins.providers.azure_openai_responses.wire:stream",
        )
    )
