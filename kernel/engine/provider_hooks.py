"""Each provider request: its options (credentials, thinking, cache, retry settings) and the extension hooks on its payload and response."""

from __future__ import annotations

import asyncio
from typing import Any

from piko.data.events import AfterProviderResponseEvent
from piko.data.events import BeforeProviderHeadersEvent
from piko.data.events import BeforeProviderRequestEvent
from piko.data.messages import Model
from piko.data.streaming import StreamOptions
from piko.engine.extension_reach import ExtensionReach
from piko.extensions.service_tiers import request_tier


class ProviderRequests(ExtensionReach):
    """Makes the :class:`StreamOptions` of every model call, for the session's current
    ``model()``, ``thinking_level()``, ``session_id()`` and ``cwd()`` (from its ``services``).

    The key and headers are resolved before each request (an OAuth token may need refreshing, a
    ``!command`` value may change), off the event loop since both may block. Extensions see the
    payload (``before_provider_request``, which may replace it) and the response status and
    headers (``after_provider_response``) through the dispatcher, with ``ctx`` and the run's
    abort ``signal()``. ``last_request`` is the model and options of the latest request of the
    session shown (``None`` before its first, and again after a switch to another session).
    """

    last_request: tuple[Model, StreamOptions] | None = None

    async def options(self, signal: Any) -> StreamOptions:
        """The options of the next request (aborted by ``signal``); raises without credentials."""
        services, registry = self._services, self._services.registry
        model = services.model()
        if model is None:
            raise RuntimeError("No model selected")
        auth = await asyncio.to_thread(registry.request_auth, model)
        if not auth.ok:
            raise RuntimeError(auth.error or f"No API key for {model.provider}")
        thinking_level = services.thinking_level()
        budgets = services.settings.get("thinkingBudgets") or None
        options = StreamOptions(
            api_key=auth.api_key,
            headers=dict(auth.headers or {}),
            signal=signal,
            reasoning=None if thinking_level == "off" else thinking_level,
            thinking_budgets=dict(budgets) if isinstance(budgets, dict) else None,
            session_id=services.session_id(),
            cwd=services.cwd(),
            on_payload=self.on_payload,
            on_response=self.on_response,
        )
        pm = services.pm
        if pm is not None:
            from piko.platform.ordering import merged_answers

            extra = merged_answers(
                pm, "piko_provider_request_headers", model=model, session_id=options.session_id
            )
            options.headers.update({str(k): str(v) for k, v in extra.items()})
        await self._headers_hook(options, model)
        retention = services.settings.get("cacheRetention")
        if isinstance(retention, str):
            options.cache_retention = retention
        apply_provider_retry_settings(services.settings, options)
        tier = request_tier(getattr(getattr(registry, "app", None), "service_tiers", None) or {}, model)
        if tier is not None:
            options.extra["service_tier"] = tier
        self.last_request = (model, options)
        return options

    def cache_warming_reason(self, mode: str) -> str:
        """Why no prompt cache is kept warm, in pi 1.6's words (piko never warms one), for the
        ``cacheWarming`` ``mode``: warming off, no request yet, a reasoning Anthropic request (a
        replay would change its cache key), prompt caching turned off, or else no cache lifetime
        (piko's models declare none)."""
        if mode == "off":
            return "cache warming disabled"
        if self.last_request is None:
            return "waiting for first request"
        model, options = self.last_request
        if options.reasoning and model.api == "anthropic-messages":
            return "request cannot be replayed safely"
        if (options.cache_retention or "short") == "none":
            return "request disabled prompt caching"
        return "cache lifetime unavailable"

    async def _headers_hook(self, options: StreamOptions, model: Model) -> None:
        """``before_provider_headers``: handlers change ``event.headers`` in place, once per request
        (retries reuse them); a key set to None is removed."""
        if not self._dispatcher.has_handlers("before_provider_headers"):
            return
        event = BeforeProviderHeadersEvent(headers=dict(options.headers), model=model)
        await self._fire("before_provider_headers", event)
        options.headers = {str(k): str(v) for k, v in event.headers.items() if v is not None}

    async def on_payload(self, payload: Any, model: Model) -> Any:
        """The payload an extension put in place of ``payload`` (None: send it as it is)."""
        if not self._dispatcher.has_handlers("before_provider_request"):
            return None
        return await self._fire("before_provider_request", BeforeProviderRequestEvent(payload=payload))

    async def on_response(self, status: int, headers: dict[str, str], model: Model) -> None:
        if self._dispatcher.has_handlers("after_provider_response"):
            await self._fire(
                "after_provider_response",
                AfterProviderResponseEvent(status=status, headers=dict(headers)),
                signal=None,
            )


def apply_provider_retry_settings(settings: Any, options: StreamOptions) -> None:
    """``retry.provider`` into ``options``: the request timeout, the provider's own retries and the
    longest server-asked wait (0 = no limit). Session requests and summaries both get them."""
    provider = settings.get("retry.provider")
    if not isinstance(provider, dict):
        return
    timeout = provider.get("timeoutMs")
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
        options.timeout_s = timeout / 1000
    retries = provider.get("maxRetries")
    if isinstance(retries, int) and not isinstance(retries, bool) and retries >= 0:
        options.extra["max_retries"] = retries
    longest = provider.get("maxRetryDelayMs")
    if isinstance(longest, int | float) and not isinstance(longest, bool) and longest >= 0:
        options.extra["max_retry_delay_ms"] = longest if longest > 0 else 2**53
