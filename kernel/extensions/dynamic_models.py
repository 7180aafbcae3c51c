"""``fetchDynamicModels`` of an extension's provider: run once when the provider's models are
first needed, bounded to 15 s, its rows read like ``models`` entries (a bad row is dropped)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
from collections.abc import Callable
from typing import Any

FETCH_TIMEOUT_S = 15.0
"""How long a fetch may take (omp's ``RUNTIME_DYNAMIC_MODEL_FETCH_TIMEOUT_MS``)."""


def dynamic_models_factory(
    provider: str, fetch: Callable[[], Any], static: list[Any], warn: Callable[[str], None]
) -> Callable[[], list[Any]]:
    """A ``models_factory``: ``static`` models, then the rows ``fetch()`` (sync or async) returns.
    A fetch that fails or overruns is one warning and gives no rows; the static models stay."""

    def build() -> list[Any]:
        rows = _fetch_rows(provider, fetch, warn)
        return [*static, *_models_of(provider, rows, warn)]

    return build


def _fetch_rows(provider: str, fetch: Callable[[], Any], warn: Callable[[str], None]) -> list[Any]:
    def call() -> Any:
        result = fetch()
        if inspect.isawaitable(result):
            return asyncio.run(_awaited(result))
        return result

    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=f"piko-models-{provider}")
    try:
        rows = pool.submit(call).result(timeout=FETCH_TIMEOUT_S)
    except concurrent.futures.TimeoutError:
        warn(
            f"provider '{provider}': fetchDynamicModels took longer than {FETCH_TIMEOUT_S:g} s; no dynamic models"
        )
        return []
    except Exception as exc:
        warn(f"provider '{provider}': fetchDynamicModels failed: {type(exc).__name__}: {exc}")
        return []
    finally:
        pool.shutdown(wait=False)  # a hung fetch keeps its thread, not the caller
    if not isinstance(rows, list | tuple):
        warn(f"provider '{provider}': fetchDynamicModels returned a {type(rows).__name__}, not a list")
        return []
    return list(rows)


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _models_of(provider: str, rows: list[Any], warn: Callable[[str], None]) -> list[Any]:
    from piko.data.messages import Model
    from piko.data.wire import camel
    from piko.data.wire import model_from_wire

    models: list[Any] = []
    for index, row in enumerate(rows):
        try:
            if isinstance(row, Model):
                model = row
            elif isinstance(row, dict) and isinstance(row.get("id"), str) and row["id"]:
                model = model_from_wire({camel(k) if "_" in k else k: v for k, v in row.items()})
            else:
                raise ValueError('it needs an "id" string')
        except Exception as exc:
            warn(f"provider '{provider}': fetchDynamicModels row {index} dropped: {exc}")
            continue
        models.append(model)
    return models
