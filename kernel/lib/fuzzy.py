"""Fuzzy matching for model search and completion (pi's scoring: lower is better).

Written here, not taken from a library such as ``rapidfuzz``: the order of the matches is what
users see in ``/model`` and ``--model`` resolution, and it must be pi's, which comes from pi's own
scoring; another metric orders differently.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")
_BOUNDARY = re.compile(r"[\s\-_./:]")
_LETTERS_DIGITS = re.compile(r"^([a-z]+)([0-9]+)$")
_DIGITS_LETTERS = re.compile(r"^([0-9]+)([a-z]+)$")


def _score(query: str, text: str) -> float | None:
    if not query:
        return 0.0
    if len(query) > len(text):
        return None
    qi = 0
    score = 0.0
    last = -1
    run = 0
    for i, ch in enumerate(text):
        if qi >= len(query):
            break
        if ch != query[qi]:
            continue
        if last == i - 1:
            run += 1
            score -= run * 5
        else:
            run = 0
            if last >= 0:
                score += (i - last - 1) * 2
        if i == 0 or _BOUNDARY.match(text[i - 1]):
            score -= 10
        score += i * 0.1
        last = i
        qi += 1
    if qi < len(query):
        return None
    if query == text:
        score -= 100
    return score


def fuzzy_score(query: str, text: str) -> float | None:
    """The match score of ``query`` in ``text`` (None when it does not match)."""
    q, t = query.lower(), text.lower()
    primary = _score(q, t)
    if primary is not None:
        return primary
    m = _LETTERS_DIGITS.match(q) or _DIGITS_LETTERS.match(q)
    if not m:
        return None
    swapped = _score(m.group(2) + m.group(1), t)
    return None if swapped is None else swapped + 5


def fuzzy_filter(items: Sequence[T], query: str, text_of: Callable[[T], str]) -> list[T]:
    """Items matching every space-separated token of ``query``, best first."""
    tokens = query.split()
    if not tokens:
        return list(items)
    scored: list[tuple[float, int, T]] = []
    for index, item in enumerate(items):
        text = text_of(item)
        total = 0.0
        for token in tokens:
            s = fuzzy_score(token, text)
            if s is None:
                break
            total += s
        else:
            scored.append((total, index, item))
    scored.sort(key=lambda row: (row[0], row[1]))
    return [item for _s, _i, item in scored]
