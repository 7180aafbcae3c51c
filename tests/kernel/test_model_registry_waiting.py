"""Providers registered with ``models_factory``: models built on first need, in their eager place."""

from __future__ import annotations

from typing import Any

from piko.data.messages import Model
from piko.models.registry import ModelRegistry
from piko.platform.registries import ProviderConfig


class _App:
    pm = None
    policy = None


def _factory(provider: str, ids: list[str], built: list[str]) -> Any:
    def build() -> list[Model]:
        built.append(provider)
        return [Model(id=i, provider=provider) for i in ids]

    return build


def _registry(built: list[str]) -> ModelRegistry:
    registry = ModelRegistry(_App())
    registry._loaded = True  # filled by hand below, no plugin hooks
    registry.add_provider(
        ProviderConfig(name="a", api="api-a", models_factory=_factory("a", ["a1", "a2"], built))
    )
    registry.add_provider(ProviderConfig(name="b", api="api-b", models_factory=_factory("b", ["b1"], built)))
    registry.add_provider(ProviderConfig(name="c", api="api-c", models=[Model(id="c1")]))
    return registry


def _keys(models: list[Model]) -> list[str]:
    return [m.key for m in models]


def test_only_the_provider_asked_for_is_built() -> None:
    built: list[str] = []
    registry = _registry(built)
    assert registry.model_providers() == ["a", "b", "c"] and built == []
    assert registry.find("b", "b1") is not None and built == ["b"]
    assert registry.find("b", "b1").api == "api-b"  # type: ignore[union-attr]
    assert _keys(registry.models_of("b")) == ["b/b1"] and built == ["b"]
    assert registry.find("c", "c1") is not None and built == ["b"]


def test_all_models_keep_the_order_of_registration() -> None:
    built: list[str] = []
    registry = _registry(built)
    registry.find("b", "b1")  # built out of order
    assert _keys(registry.all_models()) == ["a/a1", "a/a2", "b/b1", "c/c1"]
    assert built == ["b", "a"]


def test_a_later_registration_merges_into_a_waiting_provider() -> None:
    built: list[str] = []
    registry = _registry(built)
    # as models.json does for a built-in provider: a new model, an override, a new base URL
    registry.add_provider(
        ProviderConfig(
            name="a",
            base_url="http://127.0.0.1:1/v1",
            models=[Model(id="a3")],
            model_overrides={"a1": {"contextWindow": 5}},
        )
    )
    assert built == ["a"]
    models = {m.id: m for m in registry.models_of("a")}
    assert list(models) == ["a1", "a2", "a3"]
    assert models["a1"].context_window == 5
    assert {m.base_url for m in models.values()} == {"http://127.0.0.1:1/v1"}
    # pi appends models new to a built-in provider after everything registered before them
    assert _keys(registry.all_models()) == ["a/a1", "a/a2", "b/b1", "c/c1", "a/a3"]


def test_removing_a_waiting_provider_never_builds_it() -> None:
    built: list[str] = []
    registry = _registry(built)
    registry.remove_provider("a")
    assert _keys(registry.all_models()) == ["b/b1", "c/c1"]
    assert built == ["b"]


class _NoStoredKeys:
    """A plugin manager whose ``piko_resolve_api_key`` finds nothing (keys come from the configs)."""

    class hook:  # pluggy names it so
        @staticmethod
        def piko_resolve_api_key(**_kwargs: Any) -> None:
            return None


def test_available_models_build_only_the_providers_with_credentials(monkeypatch: Any) -> None:
    built: list[str] = []
    app = _App()
    app.pm = _NoStoredKeys()  # type: ignore[assignment]
    registry = ModelRegistry(app)
    registry._loaded = True
    registry.add_provider(ProviderConfig(name="a", models_factory=_factory("a", ["a1", "a2"], built)))
    registry.add_provider(ProviderConfig(name="b", api_key="kb", models_factory=_factory("b", ["b1"], built)))
    registry.add_provider(ProviderConfig(name="c", api_key="kc", models=[Model(id="c1")]))
    registry.add_provider(
        ProviderConfig(name="d", env_keys=["D_TEST_KEY"], models_factory=_factory("d", ["d1"], built))
    )
    monkeypatch.delenv("D_TEST_KEY", raising=False)
    assert _keys(registry.available_models()) == ["b/b1", "c/c1"]
    assert built == ["b"]  # a and d have no key: their models were not built
    monkeypatch.setenv("D_TEST_KEY", "kd")
    assert _keys(registry.available_models()) == ["b/b1", "c/c1", "d/d1"] and built == ["b", "d"]
    assert _keys(registry.all_models()) == ["a/a1", "a/a2", "b/b1", "c/c1", "d/d1"]
    assert registry.has_auth("d") and not registry.has_auth("a")
