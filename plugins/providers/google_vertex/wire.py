"""The ``google-vertex`` API: Gemini's ``streamGenerateContent?alt=sse`` on Google Cloud Vertex AI.

The request body and the stream are the Gemini API's (:mod:`..google_generative_ai.wire`); what
differs is where the request goes and how it signs in, as the Google GenAI SDK does it for pi:

* **Application Default Credentials** (no API key, or the ``<authenticated>`` marker the
  environment lookup answers): a project (``GOOGLE_CLOUD_PROJECT``, ``GCLOUD_PROJECT``) and a
  location (``GOOGLE_CLOUD_LOCATION``) are required, the URL is
  ``https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:streamGenerateContent?alt=sse``
  (``global``: ``aiplatform.googleapis.com``; ``us``/``eu``: ``aiplatform.{location}.rep.googleapis.com``;
  ``$GOOGLE_VERTEX_BASE_URL`` replaces the host), and the request carries
  ``Authorization: Bearer`` with a token from :mod:`..google_credentials`;
* **an API key** (``GOOGLE_CLOUD_API_KEY``, auth.json, ``--api-key``): Vertex AI express mode,
  ``https://aiplatform.googleapis.com/v1/publishers/google/models/{model}:...`` with ``x-goog-api-key``.

A model ``baseUrl`` without the catalog's ``{location}`` placeholder (models.json) is used as
the collection root, as pi configures the SDK: ``{baseUrl}[/v1]/publishers/google/models/...``
(``/v1`` is not added when the URL names an API version already, so
``http://host/v1/projects/P/locations/L`` reaches the project path). Project and location may
also come in ``options.extra`` (``project``, ``location``), as pi's stream options take them.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator
from urllib.parse import quote
from urllib.parse import urlsplit

from piko.data.messages import Model
from piko.data.streaming import Context
from piko.data.streaming import StreamEvent
from piko.data.streaming import StreamOptions
from piko.lib.provider_env import provider_getenv
from piko.plugins.providers.common import ProviderError
from piko.plugins.providers.common import RequestSpec
from piko.plugins.providers.common import layer_headers
from piko.plugins.providers.google_generative_ai.wire import ThinkingBudgets
from piko.plugins.providers.google_generative_ai.wire import build_body
from piko.plugins.providers.google_generative_ai.wire import stream_gemini

API = "google-vertex"
API_VERSION = "v1"
BASE_URL_ENV = "GOOGLE_VERTEX_BASE_URL"
CREDENTIALS_MARKER = "gcp-vertex-credentials"
GLOBAL_HOST = "https://aiplatform.googleapis.com"
MULTI_REGIONAL_LOCATIONS = frozenset({"us", "eu"})
NO_PROJECT = (
    "Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT or pass project in options."
)
NO_LOCATION = "Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION or pass location in options."

# pi's Vertex AI budgets: Gemini 2.5 Flash-Lite is budgeted as Flash (the Gemini API's table differs)
VERTEX_BUDGETS: ThinkingBudgets = {
    "2.5-pro": {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768},
    "2.5-flash": {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576},
}
_PLACEHOLDER = re.compile(r"^<[^>]+>$")
_VERSION_PART = re.compile(r"^v\d+(?:beta\d*)?$")


def explicit_api_key(options: StreamOptions) -> str | None:
    """The API key to send, or ``None`` for Application Default Credentials (markers and placeholders)."""
    key = (options.api_key or "").strip()
    if not key or key == CREDENTIALS_MARKER or _PLACEHOLDER.match(key):
        return None
    return key


def resolve_project(options: StreamOptions, provider: str | None = None) -> str:
    """models.json ``project``, else the variables (``provider``'s auth.json ``env`` first)."""
    value = (
        options.extra.get("project")
        or provider_getenv(provider, "GOOGLE_CLOUD_PROJECT")
        or provider_getenv(provider, "GCLOUD_PROJECT")
    )
    if not value:
        raise ProviderError(NO_PROJECT)
    return str(value)


def resolve_location(options: StreamOptions, provider: str | None = None) -> str:
    value = options.extra.get("location") or provider_getenv(provider, "GOOGLE_CLOUD_LOCATION")
    if not value:
        raise ProviderError(NO_LOCATION)
    return str(value)


def custom_base_url(model: Model) -> str | None:
    """A ``baseUrl`` of the user's (the catalog's ``https://{location}-...`` template is not one)."""
    base = (model.base_url or "").strip()
    return None if not base or "{location}" in base else base


def names_api_version(url: str) -> bool:
    return any(_VERSION_PART.match(part) for part in urlsplit(url).path.split("/"))


def model_resource(model_id: str) -> str:
    """``publishers/google/models/{id}`` (an id ``owner/name`` names another publisher's model)."""
    if model_id.startswith(("publishers/", "projects/", "models/")):
        return model_id
    publisher, _, name = model_id.partition("/") if "/" in model_id else ("google", "", model_id)
    return f"publishers/{publisher}/models/{quote(name, safe='.-_~@')}"


def default_host(location: str | None) -> str:
    if location is None or location == "global":
        return GLOBAL_HOST
    if location in MULTI_REGIONAL_LOCATIONS:
        return f"https://aiplatform.{location}.rep.googleapis.com"
    return f"https://{location}-aiplatform.googleapis.com"


def stream_url(model: Model, *, project: str | None, location: str | None) -> str:
    """Where the request goes; ``project``/``location`` are ``None`` in API-key (express) mode."""
    method = f"{model_resource(model.id)}:streamGenerateContent?alt=sse"
    custom = custom_base_url(model)
    if custom is not None:
        version = "" if names_api_version(custom) else f"/{API_VERSION}"
        return f"{custom.rstrip('/')}{version}/{method}"
    base = (os.environ.get(BASE_URL_ENV) or "").strip().rstrip("/") or default_host(location)
    scope = (
        f"/projects/{quote(project, safe='')}/locations/{quote(location, safe='')}"
        if project and location
        else ""
    )
    return f"{base}/{API_VERSION}{scope}/{method}"


async def build_request(model: Model, context: Context, options: StreamOptions) -> RequestSpec:
    """The request, signed in with the API key or an access token of the credentials file."""
    headers = {"content-type": "application/json"}
    api_key = explicit_api_key(options)
    if api_key is not None:
        url = stream_url(model, project=None, location=None)
        headers["x-goog-api-key"] = api_key
    else:
        from piko.plugins.providers import google_credentials

        url = stream_url(
            model,
            project=resolve_project(options, model.provider),
            location=resolve_location(options, model.provider),
        )
        credentials = google_credentials.load_credentials(provider=model.provider)
        headers["authorization"] = f"Bearer {await google_credentials.access_token(credentials)}"
        if credentials.quota_project:
            headers["x-goog-user-project"] = credentials.quota_project
    return RequestSpec(
        url=url,
        headers=layer_headers(headers, model, options),
        body=build_body(model, context, options, budgets=VERTEX_BUDGETS),
    )


def stream(model: Model, context: Context, options: StreamOptions) -> AsyncIterator[StreamEvent]:
    """Stream one assistant message from Gemini on Vertex AI."""
    return stream_gemini(model, context, options, api=API, build_request=build_request)
