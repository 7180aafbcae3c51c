"""Sort keys approximating JavaScript's ``localeCompare`` (ICU root collation): the order pi's
``ls`` lists names in and ``--list-models`` lists providers and models in.

Primary differences decide first (punctuation before digits before letters, accents ignored),
then accents, then case and the exact characters. ASCII follows ICU exactly; other scripts keep code
point order after the Latin letters.

Not PyICU, which would be exact: it publishes no wheels (``pip download PyICU --only-binary=:all:``
finds none, 2026-12-02), so installing piko would need the ICU C library and a compiler, for what
is only the order of two listings.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

__all__ = ["locale_key"]

# ICU root order of the printable ASCII characters (lower case), from Node's localeCompare.
_ASCII_ORDER = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"
_RANK = {c: i for i, c in enumerate(_ASCII_ORDER)}
_SPACE = _RANK[" "]
_DOLLAR = _RANK["$"]
_ZERO = _RANK["0"]
_A = _RANK["a"]
_AFTER_Z = len(_ASCII_ORDER)

# Letters that sort as two letters, or as a letter with a secondary difference.
_EXPANSIONS = {"æ": "ae", "œ": "oe", "ß": "ss", "ĳ": "ij", "ﬁ": "fi", "ﬂ": "fl"}
_VARIANTS = {"ø": ("o", 40), "đ": ("d", 40), "ł": ("l", 40), "ħ": ("h", 40), "ı": ("i", 41)}
# ICU's secondary order of common combining marks.
_MARKS = {
    c: i
    for i, c in enumerate("\u0301\u0300\u0306\u0302\u030c\u030a\u0308\u030b\u0303\u0307\u0327\u0328\u0304")
}


@lru_cache(maxsize=4096)
def _char_weights(char: str) -> tuple[tuple[float, ...], tuple[int, ...]]:
    """Primary weights and secondary weights of one (decomposed) character."""
    if char in _RANK:
        return (_RANK[char],), (0,)
    if char in _EXPANSIONS:
        return tuple(_RANK[c] for c in _EXPANSIONS[char]), (0,) * len(_EXPANSIONS[char])
    if char in _VARIANTS:
        base, secondary = _VARIANTS[char]
        return (_RANK[base] + (0.5 if char == "ı" else 0),), (secondary,)
    if ord(char) < 0x20:
        return (-1.0 + ord(char) / 64,), (0,)
    category = unicodedata.category(char)
    if category == "Zs":
        return (_SPACE,), (0,)
    if category == "Nd":
        return (_ZERO + unicodedata.digit(char, 0),), (0,)
    if category == "Sc":
        return (_DOLLAR - 0.5 + ord(char) / 0x110000 / 4,), (0,)
    if category[0] in "PS":
        return (_DOLLAR - 1 + ord(char) / 0x110000 / 4,), (0,)
    return (_AFTER_Z + ord(char),), (0,)


def locale_key(text: str) -> tuple[tuple[float, ...], tuple[int, ...], tuple[tuple[int, int], ...]]:
    """A key for ``sorted``: primary weights (case ignored), then accent weights, then case
    (lower before upper, as ICU's tertiary level), then code points."""
    primary: list[float] = []
    secondary: list[int] = []
    for char in unicodedata.normalize("NFD", text.lower()):
        if unicodedata.combining(char):
            secondary.append(100 + _MARKS.get(char, 50 + ord(char) % 1000))
            continue
        weights, accents = _char_weights(char)
        primary.extend(weights)
        secondary.extend(accents)
    return tuple(primary), tuple(secondary), tuple((1 if c.isupper() else 0, ord(c)) for c in text)
