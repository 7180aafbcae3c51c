"""The fixtures' ``kind: tool`` scenarios: the model calls our port's tool through a real ``pi --mode json``."""

from __future__ import annotations

from typing import Any

import pytest
from ext_conformance_kit import assert_like_capture
from ext_conformance_kit import check_tool_expect
from ext_conformance_kit import only
from ext_conformance_kit import run_tool_scenario
from ext_conformance_kit import scenario

# tool scenarios whose capture shows what the expectation says
AS_CAPTURED = ["scn-hello-001", "scn-todo-001", "scn-with-deps-001", "scn-antigravity-image-gen-001"]


@pytest.mark.parametrize("scenario_id", AS_CAPTURED)
def test_tool_scenario(scenario_id: str, piko_home: Any, llm_server: Any) -> None:
    item = scenario(scenario_id)
    records = run_tool_scenario(piko_home, llm_server, item)
    check_tool_expect(item["expect"], only(records, "tool_execution_end"))
    assert_like_capture(records, item)


@pytest.mark.parametrize("scenario_id", ["scn-minimal-tool-001", "scn-minimal-multi-001"])
def test_base_fixture_tool(scenario_id: str, piko_home: Any, llm_server: Any) -> None:
    """The base fixtures have no capture: their expectation is all there is."""
    item = scenario(scenario_id)
    records = run_tool_scenario(piko_home, llm_server, item)
    check_tool_expect(item["expect"], only(records, "tool_execution_end"))


def test_subagent_rejects_a_call_without_exactly_one_mode(piko_home: Any, llm_server: Any) -> None:
    """scn-subagent-001. Its capture is of a failed load (pi answered ``Tool subagent not found``:
    the TypeScript extension imports ``parseFrontmatter``, which that pi did not export; the
    ts_oracle records the same failure), so only the expectation is checked."""
    item = scenario("scn-subagent-001")
    records = run_tool_scenario(piko_home, llm_server, item)
    end = only(records, "tool_execution_end")
    check_tool_expect(item["expect"], end)
    assert end["result"]["details"] == {"error": True}


def test_antigravity_image_gen_returns_the_streamed_image(piko_home: Any, llm_server: Any) -> None:
    """scn-antigravity-image-gen-002: the image service (a server on 127.0.0.1 in its place)
    streams a note and one image; the result carries both, as the capture shows."""
    import json

    from ext_conformance_kit import golden_of_type
    from ext_conformance_kit import result_text
    from support.token_server import TokenServer

    item = scenario("scn-antigravity-image-gen-002")
    captured = golden_of_type(item, "tool_execution_end")[0]["result"]
    image = next(block for block in captured["content"] if block["type"] == "image")
    note = result_text(captured).partition("Model notes: ")[2]
    parts = [{"text": note}, {"inlineData": {"mimeType": image["mimeType"], "data": image["data"]}}]
    chunk = {"response": {"candidates": [{"content": {"role": "model", "parts": parts}}]}}
    credential = item["setup"]["mock_model_registry"]["google-antigravity"]
    (piko_home.agent_dir / "auth.json").write_text(
        json.dumps({"google-antigravity": {"type": "api_key", "key": credential}})
    )
    service = TokenServer([(200, "text/event-stream", f"data: {json.dumps(chunk)}\n\n")])
    try:
        endpoint = service.url.removesuffix("/v1/oauth/token")
        records = run_tool_scenario(piko_home, llm_server, item, env={"PI_ANTIGRAVITY_ENDPOINT": endpoint})
    finally:
        service.close()
    check_tool_expect(item["expect"], only(records, "tool_execution_end"))
    assert_like_capture(records, item)
    request = service.requests[0]
    assert request["path"] == "/v1internal:streamGenerateContent?alt=sse"
    assert request["headers"]["Authorization"] == "Bearer TOKEN"
    assert request["body"]["project"] == "proj" and request["body"]["model"] == "gemini-3-pro-image"
