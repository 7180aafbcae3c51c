"""Registers the ``google-vertex`` provider API (Gemini on Google Cloud Vertex AI); the stream code loads on first use."""

from __future__ import annotations

from typing import Any

from piko import hookimpl
from piko.platform.registries import ProviderApi


@hookimpl
def piko_register_provider_apis(register: Any) -> None:
    register(ProviderApi(name="google-vertex", stream="piko.plugins.providers.google_vertex.wire:stream"))
