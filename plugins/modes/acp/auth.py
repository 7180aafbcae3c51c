"""ACP authentication methods from piko's providers: an environment-variable method for each
provider that has a key variable and no credential yet (``pi login``, ``auth.json``,
``models.json`` and the environment all count as one)."""

from __future__ import annotations

from typing import Any

from acp import schema

PREFIX = "env:"


def method_id(provider: str) -> str:
    return PREFIX + provider


def provider_of(registry: Any, method: str) -> str | None:
    """The provider an ``env:<provider>`` method names, when piko knows its key variable."""
    if not method.startswith(PREFIX):
        return None
    provider = method[len(PREFIX) :]
    return provider if provider in registry.model_providers() and registry.key_variable(provider) else None


def auth_methods(registry: Any) -> list[Any]:
    """One ``env_var`` method per provider that still needs a key."""
    methods = []
    for provider in registry.model_providers():
        variable = registry.key_variable(provider)
        if not variable or registry.has_auth(provider):
            continue
        name = registry.display_name(provider)
        methods.append(
            schema.EnvVarAuthMethod(
                type="env_var",
                id=method_id(provider),
                name=f"{name} API key",
                description=f"Start piko with {variable} set (or run `pi login` once)",
                vars=[schema.AuthEnvVar(name=variable, label=f"{name} API key")],
            )
        )
    return methods
