"""The example plugin under piko.testing's fixtures: ``pip install -e .``, then ``pytest``."""

from __future__ import annotations

COUNT_TURNS = [
    {"blocks": [{"tool_call": {"name": "word_count", "arguments": {"text": "one two three"}}}]},
    {"blocks": [{"text": "It has 3 words."}]},
]


def test_the_model_counts_words_with_the_tool(piko_session, llm_server):
    run = piko_session.run("How many words are in 'one two three'?", turns=COUNT_TURNS)

    [result] = run.tool_results
    assert result.tool_name == "word_count"
    assert result.details == {"words": 3, "lines": 1, "characters": 13}
    assert run.text == "It has 3 words."
    assert run.types[0] == "agent_start" and run.types[-2:] == ["agent_end", "agent_settled"]
    offered = [tool["function"]["name"] for tool in llm_server.requests[0]["body"]["tools"]]
    assert "word_count" in offered
    assert [entry.type for entry in run.entries].count("message") == 4  # user, call, result, answer


def test_the_wordcount_command_notifies(piko_session):
    run = piko_session.run("/wordcount one two")

    assert run.ui.notifications == [("2 words, 1 lines, 7 characters", "info")]
    assert run.messages == []  # a command is not sent to the model


def test_the_tool_over_rpc(piko_rpc, llm_server):
    llm_server.add_turns(COUNT_TURNS)
    pi = piko_rpc()

    records = pi.prompt("How many words are in 'one two three'?")

    [end] = [r for r in records if r["type"] == "tool_execution_end"]
    assert end["toolName"] == "word_count" and end["isError"] is False
    assert end["result"]["content"][0]["text"].startswith("3 words")
    assert pi.close() == 0
