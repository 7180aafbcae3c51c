"""The helpers provider APIs share, in one import: ``from piko.plugins.providers.common import ...``.

Each lives in the module of its job; this one gathers them for the provider modules and for
plugin authors writing a provider API of their own:

* :mod:`~piko.plugins.providers.replay`: pi's cross-provider replay rules and surrogate removal
  (JSON as JavaScript writes it is :func:`piko.lib.jsonio.dumps`);
* :mod:`~piko.plugins.providers.request_options`: cache retention, max tokens, thinking
  budgets, base URLs, SDK retries, header layers, Copilot headers (the levels a model supports are the kernel's,
  :mod:`piko.models.resolver`);
* :mod:`~piko.plugins.providers.json_repair`: JSON repair and streaming tool arguments;
* :mod:`~piko.plugins.providers.sse`: server-sent events from bytes;
* :mod:`~piko.plugins.providers.provider_errors`: ``ProviderError`` and the SDKs' error wording;
* :mod:`~piko.plugins.providers.http_client`: the shared client, timeouts and retries;
* :mod:`~piko.plugins.providers.stream_loop`: ``AbortGuard``, ``run_stream``, ``stream_message``
  and ``announced``.
"""

from __future__ import annotations

from piko.models.resolver import clamp_thinking_level
from piko.models.resolver import supported_thinking_levels
from piko.plugins.providers.http_client import DEFAULT_MAX_RETRIES
from piko.plugins.providers.http_client import DEFAULT_MAX_RETRY_DELAY_MS
from piko.plugins.providers.http_client import DEFAULT_TIMEOUT_S
from piko.plugins.providers.http_client import RequestSpec
from piko.plugins.providers.http_client import get_client
from piko.plugins.providers.http_client import request_timeout
from piko.plugins.providers.http_client import retry_after_seconds
from piko.plugins.providers.http_client import send_with_retries
from piko.plugins.providers.json_repair import fast_json_loads
from piko.plugins.providers.json_repair import parse_event_json
from piko.plugins.providers.json_repair import parse_json_with_repair
from piko.plugins.providers.json_repair import parse_streaming_json
from piko.plugins.providers.json_repair import repair_json
from piko.plugins.providers.provider_errors import ABORTED_BEFORE_REQUEST
from piko.plugins.providers.provider_errors import ABORTED_MESSAGE
from piko.plugins.providers.provider_errors import ProviderError
from piko.plugins.providers.provider_errors import anthropic_http_error
from piko.plugins.providers.provider_errors import network_error_message
from piko.plugins.providers.provider_errors import openai_http_error
from piko.plugins.providers.provider_errors import sdk_error_message
from piko.plugins.providers.replay import sanitize_surrogates
from piko.plugins.providers.replay import transform_messages
from piko.plugins.providers.request_options import adjust_max_tokens_for_thinking
from piko.plugins.providers.request_options import base_max_tokens
from piko.plugins.providers.request_options import copilot_dynamic_headers
from piko.plugins.providers.request_options import has_copilot_vision_input
from piko.plugins.providers.request_options import layer_headers
from piko.plugins.providers.request_options import resolve_base_url
from piko.plugins.providers.request_options import resolve_cache_retention
from piko.plugins.providers.request_options import without_sdk_retries
from piko.plugins.providers.sse import iter_sse_batches
from piko.plugins.providers.sse import iter_sse_bytes
from piko.plugins.providers.stream_loop import AbortGuard
from piko.plugins.providers.stream_loop import announced
from piko.plugins.providers.stream_loop import run_stream
from piko.plugins.providers.stream_loop import stream_message
from piko.plugins.providers.stream_loop import strip_scratch

__all__ = [
    "ABORTED_BEFORE_REQUEST",
    "ABORTED_MESSAGE",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_MAX_RETRY_DELAY_MS",
    "DEFAULT_TIMEOUT_S",
    "AbortGuard",
    "ProviderError",
    "RequestSpec",
    "adjust_max_tokens_for_thinking",
    "announced",
    "anthropic_http_error",
    "base_max_tokens",
    "clamp_thinking_level",
    "copilot_dynamic_headers",
    "fast_json_loads",
    "get_client",
    "has_copilot_vision_input",
    "iter_sse_batches",
    "iter_sse_bytes",
    "layer_headers",
    "network_error_message",
    "openai_http_error",
    "parse_event_json",
    "parse_json_with_repair",
    "parse_streaming_json",
    "repair_json",
    "request_timeout",
    "resolve_base_url",
    "resolve_cache_retention",
    "retry_after_seconds",
    "run_stream",
    "sanitize_surrogates",
    "sdk_error_message",
    "send_with_retries",
    "stream_message",
    "strip_scratch",
    "supported_thinking_levels",
    "transform_messages",
    "without_sdk_retries",
]
