"""The built-in model catalog (plugin ``providers.catalog``): pi's providers and models from data/models.json.

The JSON (see ``data/README.md`` for its provenance and schema) is read only when the model
registry is first needed, never at import. Every provider is registered, whether or not a
plugin for its wire API is installed (another plugin may bring it). A provider's ``base_url``
and ``api`` are those of its first model, which pi uses as the defaults of custom models added
to a built-in provider in ``models.json``. The raw provider data (``defaultBaseUrl``, ``apis``,
``envKeys``, ``oauth``, ``extraEnv``: Azure, Cloudflare, Bedrock and Vertex settings read from
the environment) is in ``ProviderConfig.extra`` and :func:`provider_entry`.

Start-up needs only the providers, not their 1,000-odd models: a summary of each provider (its
entry without the models, its first model's ``baseUrl`` and ``api``) is kept in piko's cache
folder, keyed by the catalog file's path, size, inode and modification time, so a start reads
that small file and the catalog itself is parsed when a provider's models are first needed. Any
change to the catalog file (or ``PIKO_MODELS_CATALOG`` naming another) rebuilds the summary;
``PIKO_NO_CACHE=1`` parses the catalog every time.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from piko import hookimpl

CATALOG_PATH = Path(__file__).resolve().parent / "data" / "models.json"
# A company (or a test) can ship its own catalog file in the same schema.
CATALOG_ENV = "PIKO_MODELS_CATALOG"
_MODEL_FIELDS = frozenset(
    {"id", "name", "api", "provider", "baseUrl", "reasoning", "input", "cost", "contextWindow", "maxTokens",
     "headers", "compat", "thinkingLevelMap"}
)  # fmt: skip
_COST_FIELDS = frozenset({"input", "output", "cacheRead", "cacheWrite"})


def read_catalog(path: str | None = None) -> dict[str, Any]:
    """The parsed catalog: ``path``, else ``$PIKO_MODELS_CATALOG``, else the shipped file."""
    return _read_catalog(path or os.environ.get(CATALOG_ENV) or str(CATALOG_PATH))


@functools.lru_cache(maxsize=4)
def _read_catalog(path: str) -> dict[str, Any]:
    """The parsed catalog file (read once per path)."""
    from piko.lib.jsonio import read_json_file

    data = read_json_file(path)
    if not isinstance(data, dict) or not isinstance(data.get("providers"), dict):
        raise ValueError(f"{path}: not a model catalog (no 'providers' object)")
    return data


def provider_entry(name: str) -> dict[str, Any] | None:
    """The catalog's data about one provider, without its models (``None`` if unknown)."""
    summary = _summaries(_catalog_path()).get(name)
    return None if summary is None else dict(summary["entry"])


def provider_names() -> list[str]:
    """The ids of every catalog provider, in catalog order."""
    return list(_summaries(_catalog_path()))


SUMMARY_VERSION = 2  # 2: the shared {version, key, payload} document of piko.config.cache


def _catalog_path() -> str:
    return os.environ.get(CATALOG_ENV) or str(CATALOG_PATH)


def _summarize(catalog: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per provider: its entry without the models, its first model's ``baseUrl`` and ``api``, and
    how many models it has."""
    summaries = {}
    for name, entry in catalog["providers"].items():
        raw_models = entry.get("models") or []
        first = raw_models[0] if raw_models else {}
        summaries[name] = {
            "entry": {k: v for k, v in entry.items() if k != "models"},
            "first": {"baseUrl": first.get("baseUrl"), "api": first.get("api")},
            "models": len(raw_models),
        }
    return summaries


def _identity(path: str) -> list[Any]:
    """What tells one version of the catalog file from another (``OSError`` when it is missing)."""
    st = os.stat(path)
    return [os.path.realpath(path), st.st_size, st.st_ino, st.st_mtime_ns]


@functools.lru_cache(maxsize=4)
def _summaries(path: str) -> dict[str, dict[str, Any]]:
    """The providers of the catalog at ``path``, from the cached summary while the file is unchanged."""
    import zlib

    from piko.config import cache
    from piko.config.paths import cache_dir

    identity = _identity(path)
    cache_file = (
        cache_dir()
        / f"catalog-providers-{zlib.crc32(identity[0].encode('utf-8', 'surrogateescape')):08x}.json"
    )
    cached = cache.read(cache_file, SUMMARY_VERSION, identity)
    if isinstance(cached, dict):
        return cached
    summaries = _summarize(_read_catalog(path))
    cache.write(cache_file, SUMMARY_VERSION, identity, summaries)
    return summaries


def _catalog_models(path: str, provider: str) -> list[Any]:
    """The models of one provider of the catalog at ``path`` (the catalog parsed on first use)."""
    entry = _read_catalog(path)["providers"].get(provider) or {}  # changed since start-up: as it is now
    return build_models(provider, entry.get("models") or [])


def build_model(provider: str, data: dict[str, Any]) -> Any:
    """A :class:`piko.data.messages.Model` from one catalog entry (unknown fields kept in ``extra``)."""
    from piko.data.messages import Model
    from piko.data.messages import ModelCost

    cost = data.get("cost") or {}
    model_cost = ModelCost(
        input=cost.get("input", 0),
        output=cost.get("output", 0),
        cache_read=cost.get("cacheRead", 0),
        cache_write=cost.get("cacheWrite", 0),
    )
    if len(cost) > 4 or not _COST_FIELDS.issuperset(cost):
        model_cost.extra = {k: v for k, v in cost.items() if k not in _COST_FIELDS}  # e.g. "tiers"
    model = Model(
        id=data["id"],
        name=data.get("name") or data["id"],
        api=data.get("api", ""),
        provider=provider,
        base_url=data.get("baseUrl") or "",
        reasoning=bool(data.get("reasoning", False)),
        thinking_level_map=data.get("thinkingLevelMap"),
        input=list(data.get("input") or ["text"]),
        cost=model_cost,
        context_window=int(data.get("contextWindow", 128000)),
        max_tokens=int(data.get("maxTokens", 16384)),
        headers=data.get("headers"),
        compat=data.get("compat"),
    )
    if not _MODEL_FIELDS.issuperset(data):
        model.extra = {k: v for k, v in data.items() if k not in _MODEL_FIELDS}
    return model


def build_models(provider: str, raw_models: list[dict[str, Any]]) -> list[Any]:
    """The models of one catalog provider (the cyclic collector paused: many objects, no garbage)."""
    import gc

    enabled = gc.isenabled()
    gc.disable()
    try:
        return [build_model(provider, m) for m in raw_models]
    finally:
        if enabled:
            gc.enable()


def provider_configs(catalog: dict[str, Any] | None = None) -> list[Any]:
    """One :class:`piko.models.registry.ProviderConfig` per catalog provider; each builds its models
    when the registry first needs them (``models_factory``)."""
    from piko.platform.registries import ProviderConfig

    path = _catalog_path()
    summaries = _summaries(path) if catalog is None else _summarize(catalog)
    configs = []
    for name, summary in summaries.items():
        entry, first = summary["entry"], summary["first"]
        if not summary["models"]:
            models_factory = None
        elif catalog is None:
            models_factory = functools.partial(_catalog_models, path, name)
        else:
            models_factory = functools.partial(build_models, name, catalog["providers"][name]["models"])
        configs.append(
            ProviderConfig(
                name=name,
                base_url=first.get("baseUrl") or entry.get("defaultBaseUrl") or "",
                api=first.get("api") or next(iter(entry.get("apis") or []), ""),
                env_keys=list(entry.get("envKeys") or []),
                models_factory=models_factory,
                display_name=entry.get("name") or name,
                extra={k: v for k, v in entry.items() if k != "name"},
            )
        )
    return configs


@hookimpl(tryfirst=True)
def piko_register_providers(register: Any) -> None:
    """Register every catalog provider (first, so that models.json and plugins can override)."""
    for config in provider_configs():
        register(config)
