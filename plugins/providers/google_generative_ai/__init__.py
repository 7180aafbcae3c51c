"""Registers the ``google-generative-ai`` provider API (Google's Gemini API (generativelanguage)); the stream code loads on first use."""

from __future__ import annotations

from typing import Any

from piko import hookimpl
from piko.platform.registries import ProviderApi


@hookimpl
def piko_register_provider_apis(register: Any) -> None:
    register(
        ProviderApi(
            name="google-generative-ai", stream="piko.plugins.providers.google_generative_ai.wire:stream"
        )
    )
