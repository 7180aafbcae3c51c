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
MODEL_NAME = "Faux Model"
BASE_URL = "http://localhost:0"
STREAM = "piko.plugins.providers.faux.wire:stream"


def faux_model() -> Model:
    """The ``faux/faux-1`` model, as registered and as the tests stream with."""
    return Model(
        id=MODEL_ID,
        name=MODEL_NAME,
        api=API,
        provider=PROVIDER,
        base_url=BASE_URL,
        input=["text", "image"],
        context_window=128000,
        max_tokens=16384,
    )


@hookimpl
def piko_register_provider_apis(register: Any) -> None:
    register(ProviderApi(name=API, stream=STREAM))


@hookimpl
def piko_register_providers(register: Any) -> None:
    register(
        ProviderConfig(
            name=PROVIDER, api=API, models=[faux_model()], stream_simple=STREAM, extra={"explicitOnly": True}
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
    }
)


def __getattr__(name: str) -> Any:
    if name not in _STREAM_API:  # pluggy probes module attributes; only these load the stream module
        raise AttributeError(name)
    from piko.plugins.providers.faux import wire as faux_stream

    return getattr(faux_stream, name)
