"""The ``azure-openai-responses`` API: OpenAI's responses protocol on an Azure OpenAI resource.

The base URL comes from ``AZURE_OPENAI_BASE_URL``, else ``AZURE_OPENAI_RESOURCE_NAME``, else the
model's; ``AZURE_OPENAI_API_VERSION`` (default ``v1``) is the ``api-version`` query;
``AZURE_OPENAI_DEPLOYMENT_NAME_MAP`` (``model=deployment,...``) names the deployment sent as
``model``; the key goes in the ``api-key`` header.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit
from urllib.parse import urlunsplit

from piko.data.messages import Model
from piko.data.streaming import Context
from piko.data.streaming import StreamEvent
from piko.data.streaming import StreamOptions
from piko.lib.provider_env import provider_getenv
from piko.plugins.providers.common import ProviderError
from piko.plugins.providers.common import RequestSpec
from piko.plugins.providers.common import base_max_tokens
from piko.plugins.providers.common import stream_message
from piko.plugins.providers.openai_responses.wire import convert_messages
from piko.plugins.providers.openai_responses.wire import convert_tools
from piko.plugins.providers.openai_responses.wire import decode
from piko.plugins.providers.openai_responses.wire import openai_error_message
from piko.plugins.providers.openai_responses.wire import reasoning_effort
from piko.plugins.providers.openai_responses.wire import reasoning_params
from piko.plugins.providers.openai_responses.wire import request_headers

DEFAULT_API_VERSION = "v1"
AZURE_TOOL_CALL_PROVIDERS = frozenset({"openai", "openai-codex", "opencode", "azure-openai-responses"})


def parse_deployment_map(value: str | None) -> dict[str, str]:
    """``model=deployment`` pairs separated by commas; malformed entries are skipped."""
    out: dict[str, str] = {}
    for entry in (value or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        model_id, _, deployment = entry.partition("=")
        if model_id.strip() and deployment.strip():
            out[model_id.strip()] = deployment.strip()
    return out


def deployment_name(model: Model, options: StreamOptions) -> str:
    explicit = options.extra.get("azure_deployment_name")
    if explicit:
        return str(explicit)
    return (
        parse_deployment_map(provider_getenv(model.provider, "AZURE_OPENAI_DEPLOYMENT_NAME_MAP")).get(
            model.id
        )
        or model.id
    )


def normalize_base_url(base_url: str) -> str:
    """An Azure host without a path gets ``/openai/v1``; any other URL is kept (minus a final /)."""
    trimmed = base_url.strip().rstrip("/")
    parts = urlsplit(trimmed)
    if not parts.scheme or not parts.netloc:
        raise ProviderError(f"Invalid Azure OpenAI base URL: {base_url}")
    host = (parts.hostname or "").lower()
    path = parts.path.rstrip("/")
    if host.endswith((".openai.azure.com", ".cognitiveservices.azure.com")) and path in ("", "/openai"):
        return urlunsplit((parts.scheme, parts.netloc, "/openai/v1", "", ""))
    return trimmed


def resolve_config(model: Model, options: StreamOptions) -> tuple[str, str]:
    """``(base_url, api_version)`` in pi's order of sources."""
    api_version = (
        options.extra.get("azure_api_version")
        or provider_getenv(model.provider, "AZURE_OPENAI_API_VERSION")
        or DEFAULT_API_VERSION
    )
    base_url = (options.extra.get("azure_base_url") or "").strip() or (
        provider_getenv(model.provider, "AZURE_OPENAI_BASE_URL") or ""
    ).strip()
    resource = options.extra.get("azure_resource_name") or provider_getenv(
        model.provider, "AZURE_OPENAI_RESOURCE_NAME"
    )
    if not base_url and resource:
        base_url = f"https://{resource}.openai.azure.com/openai/v1"
    if not base_url and model.base_url:
        base_url = model.base_url
    if not base_url:
        raise ProviderError(
            "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME, "
            "or pass azureBaseUrl, azureResourceName, or model.baseUrl."
        )
    return normalize_base_url(base_url), str(api_version)


def build_params(model: Model, context: Context, options: StreamOptions, deployment: str) -> dict[str, Any]:
    """The request body pi sends to Azure (no ``store``; the cache key is the session id)."""
    params: dict[str, Any] = {
        "model": deployment,
        "input": convert_messages(model, context, AZURE_TOOL_CALL_PROVIDERS),
        "stream": True,
    }
    if options.session_id:
        params["prompt_cache_key"] = options.session_id
    max_tokens = base_max_tokens(model, options)
    if max_tokens:
        params["max_output_tokens"] = max_tokens
    if options.temperature is not None:
        params["temperature"] = options.temperature
    if context.tools:
        params["tools"] = convert_tools(context.tools)
    params.update(
        reasoning_params(model, reasoning_effort(model, options), options.extra.get("reasoning_summary"))
    )
    return params


def build_request(model: Model, context: Context, options: StreamOptions) -> RequestSpec:
    api_key = options.api_key or provider_getenv(model.provider, "AZURE_OPENAI_API_KEY")
    if not api_key:
        raise ProviderError(f"No API key for provider: {model.provider}")
    base_url, api_version = resolve_config(model, options)
    return RequestSpec(
        url=f"{base_url}/responses?api-version={api_version}",
        headers=request_headers(model, options, {"api-key": api_key}),
        body=build_params(model, context, options, deployment_name(model, options)),
    )


def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[StreamEvent]:
    """Stream one assistant message from an Azure OpenAI responses deployment."""
    return stream_message(
        model,
        context,
        options,
        build_request,
        decode,
        api="azure-openai-responses",
        format_error=openai_error_message,
    )
