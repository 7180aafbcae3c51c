"""Ranking for ``tool_search``: Okapi BM25 over tool metadata, with pi 1.6's fields and tie rules.

Written here rather than taken from a library: the BM25 packages on PyPI (``rank_bm25``,
``bm25s``) score one bag of words per document and pull in numpy, while pi 1.6 ranks with
three fields (the tool's name, its description and schema text, its server's namespace),
orders by how many query terms a tool covers before the score, and puts an exact name first.
The whole of that is the sixty lines below.

A query term found in a tool's name weighs :data:`NAME_WEIGHT` times its IDF, more than any
number of mentions in the description (whose BM25 part is at most ``k1 + 1`` times it); one
found in the server's name, description or instructions weighs :data:`NAMESPACE_WEIGHT` times
its IDF. Only the description is length-normalised. A tool whose whole own name (the part after
the last ``__``) is in the query gets one more IDF of every query term. Tools are ordered by:
the query being exactly the tool's name, then the number of query terms they match, then score,
then the order they were given in.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

NAME_WEIGHT = 3.0
NAMESPACE_WEIGHT = 0.5
K1 = 1.2
B = 0.75
STOP_WORDS = frozenset("a an and are as at be by for from in is it of on or that the this to with".split())
_ASCII_WORDS = re.compile(r"^[a-z0-9 ]*$")


def _singular(term: str) -> str:
    """A naive English singular, so ``issues`` finds ``issue`` and ``searches`` finds ``search``."""
    if len(term) > 4 and term.endswith("ies"):
        return term[:-3] + "y"
    if len(term) > 4 and term.endswith(("ches", "shes", "sses", "xes", "zes")):
        return term[:-2]
    if len(term) > 3 and term.endswith("s") and not term.endswith("ss"):
        return term[:-1]
    return term


def _word_char(char: str) -> bool:
    return unicodedata.category(char)[0] in "LMN"


def tokenize(text: str) -> list[str]:
    """Words of ``text``: ``camelCase`` and ``snake_case`` split, lower-cased, stop words dropped,
    ASCII words made singular. Text outside ASCII is split at non-letters only (pi also segments
    scripts written without spaces; here such a run stays one word)."""
    text = unicodedata.normalize("NFC", text)
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", text).lower()
    text = "".join(c if _word_char(c) else " " for c in text)
    ascii_only = bool(_ASCII_WORDS.match(text))
    words = [w for w in text.split() if w not in STOP_WORDS]
    if ascii_only:
        return [_singular(w) for w in words]
    return [_singular(w) if w.isascii() and w.isalnum() else w for w in words]


def _local_ref(ref: str, root: Any) -> Any:
    """The subschema a local ``$ref`` (``#/$defs/x``) points at in ``root``, or None."""
    if not ref.startswith("#"):
        return None
    target = root
    for part in ref[1:].split("/")[1:] if ref != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            return None
    return target


def schema_words(schema: Any, root: Any, out: list[str], seen: list[Any]) -> None:
    """Descriptions and property names of ``schema``, recursively; each ``$ref`` target once."""
    if not isinstance(schema, dict):
        return
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = _local_ref(ref, root)
        if isinstance(target, dict) and not any(target is s for s in seen):
            seen.append(target)
            schema_words(target, root, out, seen)
    if isinstance(schema.get("description"), str):
        out.append(schema["description"])
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, value in properties.items():
            out.append(str(name))
            schema_words(value, root, out, seen)
    schema_words(schema.get("items"), root, out, seen)
    for key in ("anyOf", "oneOf", "allOf"):
        variants = schema.get(key)
        if isinstance(variants, list):
            for variant in variants:
                schema_words(variant, root, out, seen)


@dataclass(frozen=True)
class SearchDocument:
    """What a tool is found by: its full name, its text, its server's text (empty for none)."""

    name: str
    text: str
    namespace_text: str = ""


def tool_document(
    name: str, description: str, parameters: Any, namespace: Sequence[str | None] = ()
) -> SearchDocument:
    """The document of a tool: description plus schema words; ``namespace`` is its server's
    namespace name, description and instructions."""
    parts = [description or ""]
    schema_words(parameters, parameters, parts, [parameters])
    return SearchDocument(
        name=name,
        text=" ".join(p for p in parts if p.strip()),
        namespace_text=" ".join(p or "" for p in namespace),
    )


def _normal_name(name: str) -> str:
    return re.sub(r"[^a-z0-9_$]", "_", name.strip().lower())


@dataclass(frozen=True)
class _Indexed:
    name: str
    name_terms: frozenset[str]
    own_terms: frozenset[str]  # of the name after its last "__"
    counts: Counter[str]
    length: int
    namespace_terms: frozenset[str]

    @classmethod
    def of(cls, doc: SearchDocument) -> _Indexed:
        counts = Counter(tokenize(doc.text))
        return cls(
            name=doc.name,
            name_terms=frozenset(tokenize(doc.name)),
            own_terms=frozenset(tokenize(doc.name.split("__")[-1])),
            counts=counts,
            length=sum(counts.values()),
            namespace_terms=frozenset(tokenize(doc.namespace_text)),
        )

    def has(self, term: str) -> bool:
        return term in self.name_terms or term in self.counts or term in self.namespace_terms


def rank(query: str, documents: Sequence[SearchDocument], limit: int) -> list[str]:
    """The names of the best ``limit`` documents for ``query`` (those matching no term left out)."""
    terms = list(dict.fromkeys(tokenize(query)))
    if not terms or not documents or limit <= 0:
        return []
    indexed = [_Indexed.of(doc) for doc in documents]
    average = sum(d.length for d in indexed) / len(indexed) or 1.0
    idf = {}
    for term in terms:
        frequency = sum(1 for d in indexed if d.has(term))
        idf[term] = math.log(1 + (len(indexed) - frequency + 0.5) / (frequency + 0.5))
    own_name_bonus = sum(idf.values())
    exact = _normal_name(query)
    scored: list[tuple[bool, int, float, int, str]] = []
    for position, doc in enumerate(indexed):
        norm = K1 * (1 - B + B * doc.length / average)
        score, covered = 0.0, 0
        for term in terms:
            count = doc.counts.get(term, 0)
            weight = (
                (NAME_WEIGHT if term in doc.name_terms else 0.0)
                + (NAMESPACE_WEIGHT if term in doc.namespace_terms else 0.0)
                + count * (K1 + 1) / (count + norm)
            )
            covered += weight > 0
            score += idf[term] * weight
        if score == 0:
            continue
        if doc.own_terms and doc.own_terms <= set(terms):
            score += own_name_bonus
        normal = _normal_name(doc.name)
        is_exact = normal == exact or normal.endswith("__" + exact)
        scored.append((is_exact, covered, score, -position, doc.name))
    scored.sort(reverse=True)
    return [s[4] for s in scored[:limit]]
