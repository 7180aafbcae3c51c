"""Registers the ``openai-completions`` provider API (implementation in ``openai_completions_stream``)."""

from __future__ import annotations

from typing import Any

from piko import hookimpl
from piko.platform.registries import ProviderApi


@hookimpl
def piko_register_provider_apis(register: Any) -> None:
    register(
        ProviderApi(name="openai-completions", stream="piko.plugins.providers.openai_completions.wire:stream")
    )
