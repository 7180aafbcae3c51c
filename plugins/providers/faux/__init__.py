"""The ``faux`` provider plugin: offline scripted replies (``pi --provider faux``); registration only.

The stream and the scripting functions live in :mod:`piko.plugins.providers.faux.wire`,
imported on first use (``set_responses``, ``append_responses`` ... are re-exported here). faux
is *explicit only*: it never shows in ``--list-models`` or becomes the default model; name it
with ``--provider faux`` (no key needed).
"""

from __future__ import annotations

from typing import Any

from piko import hookimpl
from piko.data.messages import Model
from piko.platform.registries import ProviderApi
from piko.platform.registries import ProviderConfig

API = "faux"
PROVIDER = "faux"
MODEL_ID = "faux-1"
STREAM = "piko.plugins.providers.faux.wire:stream"


@hookimpl
def piko_register_provider_apis(register: Any) -> None:
    register(ProviderApi(name=API, stream=STREAM))


@hookimpl
def piko_register_providers(register: Any) -> None:
    model = Model(
        id=MODEL_ID,
        name="Faux Model",
        api=API,
        provider=PROVIDER,
        base_url="http://localhost:0",
        input=["text", "image"],
        context_window=128000,
        max_tokens=16384,
    )
    register(
        ProviderConfig(
            name=PROVIDER, api=API, models=[model], stream_simple=STREAM, extra={"explicitOnly": True}
        )
    )


_STREAM_API = frozenset(
    {
        "stream",
        "set_responses",
        "append_responses",
        "pending_count",
        "call_count",
        "configure",
        "reset",
        "faux_model",
    }
)


def __getattr__(name: str) -> Any:
    if name not in _STREAM_API:  # pluggy probes module attributes; only these load the stream module
        raise AttributeError(name)
    from piko.plugins.providers.faux import wire as faux_stream

    return getattr(faux_stream, name)
