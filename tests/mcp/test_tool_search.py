"""``tool_search``: BM25 ranking as pi 1.6 ranks, its answers, and what it loaded staying on the branch."""

from __future__ import annotations

import json

import pytest
from mcp_support import answer
from mcp_support import call
from mcp_support import stdio_entry
from mcp_support import tool_messages
from mcp_support import tool_names

from piko.plugins.mcp.search import SearchDocument
from piko.plugins.mcp.search import rank
from piko.plugins.mcp.search import tokenize
from piko.plugins.mcp.search import tool_document
from piko.testing.rpc_client import RpcProcess

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("getIssues from the HTTPServer", ["get", "issue", "http", "server"]),
        ("searches boxes classes glass", ["search", "box", "class", "glass"]),
        ("list_mcp_resources", ["list", "mcp", "resource"]),
        ("a the of", []),
        ("Größe café", ["größe", "café"]),
    ],
)
def test_tokenize(text: str, words: list[str]) -> None:
    assert tokenize(text) == words


def test_schema_words_follow_local_refs_once() -> None:
    schema = {
        "type": "object",
        "properties": {"repo": {"$ref": "#/$defs/repo"}, "other": {"$ref": "#/$defs/repo"}},
        "$defs": {"repo": {"description": "Repository owner", "anyOf": [{"description": "slug"}]}},
    }
    document = tool_document("mcp__gh__x", "Do X.", schema)
    assert document.text == "Do X. repo Repository owner slug other"


def docs(*specs: tuple[str, str]) -> list[SearchDocument]:
    return [SearchDocument(name, text, "mcp__srv srv") for name, text in specs]


def test_ranking_rules() -> None:
    documents = docs(
        ("mcp__srv__window", "Manage windows."),
        ("mcp__srv__capture", "Take a screenshot of a window and save it."),
        ("mcp__srv__note", "Window window window window window."),
        ("mcp__srv__app", "Control it."),
        ("mcp__srv__thread_read", "Open something."),
    )
    # covering more query words beats a higher score; a name word beats any number of mentions
    assert rank("screenshot window", documents, 3) == [
        "mcp__srv__capture",
        "mcp__srv__window",
        "mcp__srv__note",
    ]
    # the whole own name in the query wins among tools matching as many words
    assert rank("app control window", documents, 1) == ["mcp__srv__app"]
    # an exact name (whole or after a "__") comes first
    assert rank("thread_read", documents, 1) == ["mcp__srv__thread_read"]
    assert rank("srv__thread_read", documents, 1) == ["mcp__srv__thread_read"]
    # the namespace matches every tool of the server: ties keep the order given
    assert rank("srv", documents, 2) == ["mcp__srv__window", "mcp__srv__capture"]
    assert rank("the of", documents, 5) == [] and rank("zebra", documents, 5) == []


# (query, what pi 1.6.0 loaded for it from the demo server, in its order): recorded by running
# pi 1.6 against tests/mcp/servers/demo_server.py with the same mcp.json
PI16_ANSWERS = [
    ("echo text", ["mcp__demo__echo", "mcp__demo__shout", "mcp__demo__big"]),
    ("seconds progress", ["mcp__demo__slow", "mcp__demo__sleepy"]),
    (
        "tool list",
        [
            "mcp__demo__grow",
            "list_mcp_resources",
            "list_mcp_resource_templates",
            "read_mcp_resource",
            "mcp__demo__echo",
            "mcp__demo__get_thing",
            "mcp__demo__fail",
            "mcp__demo__big",
        ],
    ),
    ("get.thing", ["mcp__demo__get_thing"]),
    ("nothing-matches", ["read_mcp_resource"]),
]


@pytest.mark.parametrize(("query", "loaded"), PI16_ANSWERS, ids=[q for q, _ in PI16_ANSWERS])
def test_tool_search_loads_what_pi_loads(mcp_env, query: str, loaded: list[str]) -> None:
    env = mcp_env([call("tool_search", {"query": query}), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="deferred", description="Demo tools: sleep and pictures")})
    done = env.prompt("go")
    assert done.returncode == 0, done.stderr
    text = tool_messages(env.bodies()[1])[-1]["content"]
    plural = "" if len(loaded) == 1 else "s"
    assert text.startswith(f"Loaded {len(loaded)} tool{plural}. They are available from your next call:\n")
    assert [line.split(":", 1)[0][2:] for line in text.splitlines()[1:]] == loaded
    assert set(loaded) <= set(tool_names(env.bodies()[1]))


def test_tool_search_answers_and_bad_arguments(mcp_env) -> None:
    env = mcp_env(
        [call("tool_search", {"query": "text", "limit": 2}), call("tool_search", {"query": "Errors"}),
         call("tool_search", {"query": "  "}), call("tool_search", {"query": "x", "limit": 0}), answer()]
    )  # fmt: skip
    env.write_mcp({"demo": stdio_entry(exposure="deferred")})
    done = env.prompt("go")
    assert done.returncode == 0, done.stderr
    texts = [tool_messages(b)[-1]["content"] for b in env.bodies()[1:]]
    assert texts[0] == (
        "Loaded 2 tools. They are available from your next call:\n"
        "- mcp__demo__echo: Echo the text back.\n"
        "- mcp__demo__shout: Log the text as a server log message, then return it upper-cased."
    )
    assert texts[1] == "No matching tools found."
    assert "query must not be empty" in texts[2]
    assert "limit must be a positive integer" in texts[3]


def test_loaded_tools_stay_on_their_branch_and_not_on_a_fork(mcp_env) -> None:
    """Loaded on the first turn: declared on the next prompt, not once the session forks before it."""
    env = mcp_env([call("tool_search", {"query": "echo"}), answer(), answer(), answer()])
    env.write_mcp({"demo": stdio_entry(exposure="deferred")})
    rpc = RpcProcess(
        env.home,
        env.work,
        ["--mode", "rpc", "--provider", "mock", "--model", "mock-1"],
        env=env.environment(),
    )
    try:
        rpc.prompt("first")
        rpc.prompt("second")
        messages = rpc.request({"id": "f", "type": "get_fork_messages"})["data"]["messages"]
        first = next(m for m in messages if m["text"] == "first")
        forked = rpc.request({"id": "k", "type": "fork", "entryId": first["entryId"]})
        assert forked["success"], forked
        rpc.prompt("third")
    finally:
        rpc.close()
    bodies = env.bodies()
    assert "mcp__demo__echo" not in tool_names(bodies[0])
    assert "mcp__demo__echo" in tool_names(bodies[2])  # "second", on the branch that loaded it
    assert "mcp__demo__echo" not in tool_names(bodies[3])  # "third", on the fork before the load
    users = [m["content"] for m in bodies[3]["messages"] if m["role"] == "user"]
    assert json.dumps(users).count("first") == 0 and "third" in json.dumps(users)
