"""Battery: ``tool_search``'s BM25 ranker over random tool sets and queries, and odd input.

Cases:

* **ranking invariants**: random tools (names, descriptions, schemas with ``$ref`` cycles) and
  random queries; the answer must hold at most ``limit`` distinct names of given tools, put a
  tool whose name is the whole query first, list no tool that shares no word with the query,
  and come out the same twice.
* **odd queries**: empty, stop words only, punctuation, very long, non-ASCII and control
  characters must give an answer (possibly empty), never an exception.
"""

from __future__ import annotations

import random
import string

import pytest
from battery import Battery
from battery import tries

from piko.plugins.mcp.search import SearchDocument
from piko.plugins.mcp.search import rank
from piko.plugins.mcp.search import tokenize
from piko.plugins.mcp.search import tool_document

WORDS = "issue search file read write list repo branch commit user window screen text image log".split()


def _tools(rng: random.Random) -> list[SearchDocument]:
    count = rng.randint(1, 40)
    docs = []
    for i in range(count):
        own = "_".join(rng.sample(WORDS, rng.randint(1, 2))) + f"{i}"
        schema = {
            "type": "object",
            "properties": {w: {"type": "string", "description": " ".join(rng.sample(WORDS, 3))} for w in rng.sample(WORDS, 2)},
            "$defs": {"loop": {"$ref": "#/$defs/loop", "description": "self"}},
            "items": {"$ref": "#/$defs/loop"},
        }  # fmt: skip
        description = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))
        server = rng.choice(["gh", "fs", "dev-radius"])
        docs.append(
            tool_document(f"mcp__{server}__{own}", description, schema, (f"mcp__{server}", server, None))
        )
    return docs


def _ranking(battery: Battery, count: int, seed: int) -> None:
    tally = battery.case("mcp2: tool_search ranking invariants")
    tally.tries = count
    rng = random.Random(seed)
    for attempt in range(count):
        docs = _tools(rng)
        names = [d.name for d in docs]
        exact = rng.choice(docs).name
        query = exact if attempt % 4 == 0 else " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        limit = rng.randint(1, 10)
        try:
            first = rank(query, docs, limit)
            again = rank(query, docs, limit)
        except Exception as error:  # a crash is a failure, not an error of the test
            tally.fail(f"{query!r}: {type(error).__name__}: {error}")
            continue
        terms = set(tokenize(query))
        if first != again:
            tally.fail(f"{query!r}: two answers {first} / {again}")
        elif len(first) > limit or len(set(first)) != len(first) or not set(first) <= set(names):
            tally.fail(f"{query!r}: bad answer {first} (limit {limit})")
        elif query == exact and (not first or first[0] != exact):
            tally.fail(f"exact name {exact!r} not first: {first}")
        else:
            by_name = {d.name: d for d in docs}
            for name in first:
                doc = by_name[name]
                words = set(tokenize(doc.name)) | set(tokenize(doc.text)) | set(tokenize(doc.namespace_text))
                if not words & terms:
                    tally.fail(f"{query!r}: {name} shares no word with the query")
                    break


def _odd_queries(battery: Battery, count: int, seed: int) -> None:
    tally = battery.case("mcp2: tool_search odd queries")
    tally.tries = count
    rng = random.Random(seed)
    fixed = [
        "",
        "   ",
        "the of and",
        "!!!",
        "x" * 20000,
        "日本語 検索",
        "\x00\x1b[31m",
        "mcp____",
        "__",
        "é" * 50,
    ]
    docs = _tools(rng)
    for attempt in range(count):
        if attempt < len(fixed):
            query = fixed[attempt]
        else:
            query = "".join(rng.choice(string.printable + "éß日") for _ in range(rng.randint(0, 60)))
        try:
            answer = rank(query, docs, 8)
        except Exception as error:
            tally.fail(f"{query[:40]!r}: {type(error).__name__}: {error}")
            continue
        if len(answer) > 8:
            tally.fail(f"{query[:40]!r}: {len(answer)} answers")


@pytest.mark.parametrize("slow", [pytest.param(False), pytest.param(True, marks=pytest.mark.slow)])
def test_mcp2_tool_search_battery(battery: Battery, slow: bool) -> None:
    _ranking(battery, tries(200, 5000, slow=slow), seed=17)
    _odd_queries(battery, tries(40, 2000, slow=slow), seed=171)
