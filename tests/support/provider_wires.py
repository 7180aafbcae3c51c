"""Every provider API piko streams, as one table, for the tests that run one case against each wire.

A :class:`Wire` names the API's stream module, its path below the scripted server's base URL and
the model a test streams from; ``wire.stream`` and ``wire.model(server)`` are what a provider's
own test module sets up with :func:`support.stream_runs.stream_fn` and
:func:`support.stream_runs.model_factory`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from typing import NamedTuple

from piko.data.messages import Model
from support.llm_server import LLMServer
from support.stream_runs import model_factory
from support.stream_runs import stream_fn


class Wire(NamedTuple):
    """One provider API as the tests stream it."""

    api: str
    module: str  # below ``piko.plugins.providers``, the module whose ``stream`` it is
    path: str  # the API's path below the server's base URL
    model_id: str
    provider: str = "test"

    @property
    def stream(self) -> Callable[..., Any]:
        return stream_fn(self.module)

    def model(self, server: LLMServer | None, model_id: str | None = None, **fields: Any) -> Model:
        """The test model (``model_id``, else the wire's) of this API at ``path`` on ``server``, on
        a closed port when ``server`` is ``None``; ``fields`` over its defaults."""
        make = model_factory(self.api, self.path, self.model_id, provider=self.provider)
        return make(server, model_id or self.model_id, **fields)


WIRES: dict[str, Wire] = {
    wire.api: wire
    for wire in (
        Wire("openai-completions", "openai_completions.wire", "/v1", "gpt-test"),
        Wire("anthropic-messages", "anthropic_messages.wire", "", "claude-test"),
        Wire("openai-responses", "openai_responses.wire", "/v1", "gpt-test"),
        Wire("azure-openai-responses", "azure_openai_responses.wire", "/openai/v1", "gpt-test"),
        Wire("google-generative-ai", "google_generative_ai.wire", "/v1beta", "gemini-2.5-flash", "google"),
        Wire(
            "mistral-conversations",
            "mistral_conversations.wire",
            "/mistral",
            "mistral-large-latest",
            "mistral",
        ),
        Wire("bedrock-converse-stream", "bedrock_converse.wire", "", "claude-test", "amazon-bedrock"),
    )
}
"""The wires by API name."""
