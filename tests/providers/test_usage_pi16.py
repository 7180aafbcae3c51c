"""pi 1.6's usage fields from each provider's wire: ``usage.reasoning`` (the reasoning part of
``output``) and ``usage.cost.totalFromProvider`` (OpenRouter's billed cost against the catalog
estimate), streamed from the scripted server on 127.0.0.1; and how two usages add up."""

from __future__ import annotations

from typing import Any

import pytest
from support.llm_server import LLMServer
from support.provider_wires import WIRES
from support.provider_wires import Wire
from support.stream_runs import collect
from support.stream_runs import context
from support.stream_runs import model
from support.streams import final

from piko.data.messages import Cost
from piko.data.messages import Usage
from piko.data.messages import combine_usage
from piko.data.wire import to_wire

USAGE = {"input": 40, "output": 30, "reasoning": 12}
BLOCKS = [{"text": "ok"}]

# each provider whose wire says how many tokens were reasoning
REASONING_WIRES = [
    WIRES[api]
    for api in ("openai-completions", "openai-responses", "google-generative-ai", "anthropic-messages")
]


def _answer(wire: Wire, turn: dict[str, Any], **fields: Any) -> Any:
    with LLMServer([turn]) as server:
        return final(collect(wire.stream, wire.model(server, **fields), context(tools=False)))


@pytest.mark.parametrize("wire", REASONING_WIRES, ids=lambda wire: wire.api)
def test_reasoning_tokens_are_read_as_part_of_output(wire: Wire) -> None:
    message = _answer(wire, {"blocks": BLOCKS, "usage": USAGE})
    usage = message.usage
    assert (usage.output, usage.reasoning) == (30, 12)  # already in output, as the wire counts it
    assert usage.cost.total_from_provider is False  # estimated from the catalog's prices
    written = to_wire(usage)
    assert list(written) == ["input", "output", "cacheRead", "cacheWrite", "reasoning", "totalTokens", "cost"]
    assert list(written["cost"])[-2:] == ["total", "totalFromProvider"]


def test_a_wire_without_a_reasoning_count() -> None:
    """pi 1.6 writes ``reasoning: 0`` where OpenAI's usage has no count; Anthropic's usage without
    ``thinking_tokens`` leaves the field out, as pi 1.6's does."""
    plain = {"blocks": BLOCKS, "usage": {"input": 40, "output": 30}}
    assert _answer(REASONING_WIRES[0], plain).usage.reasoning == 0
    assert _answer(REASONING_WIRES[3], plain).usage.reasoning is None
    assert "reasoning" not in to_wire(_answer(REASONING_WIRES[3], plain).usage)


OPENROUTER = {"provider": "openrouter", "cost": model("x", "").cost}


@pytest.mark.parametrize(
    ("extra", "total"),
    [
        ({"cost": 0.0042, "is_byok": False}, 0.0042),
        ({"cost": 0.001, "is_byok": True, "cost_details": {"upstream_inference_cost": 0.02}}, 0.021),
        ({"cost": 0.001, "is_byok": True, "cost_details": {"upstream_inference_cost": None,
          "upstream_inference_prompt_cost": 0.01, "upstream_inference_completions_cost": 0.005}}, 0.016),
    ],
)  # fmt: skip
@pytest.mark.parametrize("wire", [REASONING_WIRES[0], REASONING_WIRES[3]], ids=lambda wire: wire.api)
def test_openrouter_billed_cost_replaces_the_estimate(
    wire: Wire, extra: dict[str, Any], total: float
) -> None:
    message = _answer(wire, {"blocks": BLOCKS, "usage_extra": extra}, **OPENROUTER)
    cost = message.usage.cost
    assert cost.total == pytest.approx(total) and cost.total_from_provider is True
    assert cost.input == 3 / 1_000_000 * message.usage.input  # the parts stay catalog estimates


@pytest.mark.parametrize(
    "extra",
    [{}, {"cost": -1, "is_byok": False}, {"cost": 0.1}, {"cost": 0.1, "is_byok": True},
     {"cost": 0.1, "is_byok": True, "cost_details": {"upstream_inference_cost": None}},
     {"cost": 0.1, "is_byok": True, "cost_details": {"upstream_inference_prompt_cost": 0.1,
      "upstream_inference_completions_cost": 0.1}}],
)  # fmt: skip
def test_incomplete_openrouter_accounting_keeps_the_estimate(extra: dict[str, Any]) -> None:
    message = _answer(REASONING_WIRES[0], {"blocks": BLOCKS, "usage_extra": extra}, **OPENROUTER)
    cost = message.usage.cost
    assert cost.total_from_provider is False
    assert cost.total == cost.input + cost.output + cost.cache_read + cost.cache_write


def test_a_cost_field_from_another_provider_is_not_taken_as_billed() -> None:
    message = _answer(REASONING_WIRES[0], {"blocks": BLOCKS, "usage_extra": {"cost": 9, "is_byok": False}})
    assert message.usage.cost.total_from_provider is False and message.usage.cost.total < 1


def _usage(reasoning: int | None, billed: bool | None) -> Usage:
    return Usage(input=1, output=10, reasoning=reasoning, total_tokens=11,
                 cost=Cost(input=0.5, output=1, total=1.5, total_from_provider=billed))  # fmt: skip


def test_combined_usage_keeps_reasoning_and_is_billed_only_when_every_part_is() -> None:
    both = combine_usage(_usage(3, True), _usage(None, True))
    assert (both.input, both.output, both.reasoning, both.total_tokens) == (2, 20, 3, 22)
    assert (both.cost.total, both.cost.total_from_provider) == (3, True)
    assert combine_usage(_usage(None, True), _usage(None, False)).reasoning is None
    assert combine_usage(_usage(1, True), _usage(2, False)).cost.total_from_provider is False
    assert (
        combine_usage(_usage(1, True), _usage(2, None)).cost.total_from_provider is False
    )  # None: an estimate
