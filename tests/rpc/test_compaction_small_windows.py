"""RPC ``compact`` and overflow recovery on a 4k-window model with the default compaction settings."""

from __future__ import annotations

from typing import Any

SESSION_ARGS = ["--mode", "rpc", "--provider", "mock", "--model", "mock-1"]
SMALL_MODEL = {"mock": {"contextWindow": 4096, "maxTokens": 1024}}
OVERFLOW = {
    "status": 400,
    "error_body": {
        "error": {
            "message": "This model's maximum context length is 4096 tokens. However, your messages resulted "
            "in 5000 tokens. Please reduce the length of the messages.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }
    },
}


def answer(text: str, total: int) -> dict[str, Any]:
    return {"blocks": [{"text": text}], "usage": {"input": total - 20, "output": 20}}


def prompt(process: Any, n: int, text: str) -> None:
    process.request({"id": f"p{n}", "type": "prompt", "message": text})
    process.wait_for(lambda r: r.get("type") == "agent_end", 30)


def test_rpc_compact_on_a_4k_model(rpc: Any) -> None:
    turns = [answer(f"answer {i}", total) for i, total in enumerate((900, 1700, 2400))]
    process = rpc([*turns, {"blocks": [{"text": "## Goal\nRPC SMALL SUMMARY"}]}],
                  args=SESSION_ARGS, model_fields=SMALL_MODEL)  # fmt: skip
    for n in range(3):
        prompt(process, n, f"question {n} " + "x" * 2800)
    response = process.request({"id": "c", "type": "compact"})
    assert response["success"] is True, response
    assert response["data"]["summary"].startswith("## Goal\nRPC SMALL SUMMARY")
    summarized = process.server.requests[3]["body"]["messages"][-1]["content"]
    assert "question 0" in str(summarized) and "question 1" not in str(summarized)
    assert process.close() == 0


def test_rpc_overflow_is_compacted_and_retried_on_a_4k_model(rpc: Any) -> None:
    turns = [answer("answer 0", 900), answer("answer 1", 1500), OVERFLOW,
             {"blocks": [{"text": "## Goal\nRECOVERY"}]}, answer("The retried answer.", 1200)]  # fmt: skip
    process = rpc(turns, args=SESSION_ARGS, model_fields=SMALL_MODEL)
    for n in range(2):
        prompt(process, n, f"question {n} " + "x" * 1200)
    process.request({"id": "p2", "type": "prompt", "message": "question 2 " + "x" * 1200})
    end = process.wait_for(lambda r: r.get("type") == "compaction_end", 30)
    assert end["reason"] == "overflow" and end["willRetry"] is True and "errorMessage" not in end
    final = process.wait_for(lambda r: r.get("type") == "agent_end", 30)  # the retried run's
    assert final["messages"][-1]["content"][0]["text"] == "The retried answer."
    assert len(process.server.requests) == 5
    assert process.close() == 0
