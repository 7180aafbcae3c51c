"""The edit tool's text work: line endings, BOM, fuzzy matching, applying edits and pi's numbered diff."""

from __future__ import annotations

import itertools
import re
import unicodedata
from typing import Any

from attrs import define

from piko.lib.text import JS_WHITESPACE
from piko.lib.text import normalize_newlines

__all__ = [
    "EditError",
    "apply_edits",
    "detect_line_ending",
    "diff_lines",
    "fuzzy_find",
    "generate_diff",
    "normalize_for_fuzzy_match",
    "restore_line_endings",
    "strip_bom",
]


class EditError(ValueError):
    """An edit that cannot be applied; the message is pi's."""


# ---------------------------------------------------------------------------
# Line endings and BOM
# ---------------------------------------------------------------------------


def detect_line_ending(text: str) -> str:
    """``"\\r\\n"`` when the first line break of ``text`` is CRLF, else ``"\\n"``."""
    lf = text.find("\n")
    if lf == -1:
        return "\n"
    crlf = text.find("\r\n")
    if crlf == -1:
        return "\n"
    return "\r\n" if crlf < lf else "\n"


def restore_line_endings(text: str, ending: str) -> str:
    return text.replace("\n", "\r\n") if ending == "\r\n" else text


def strip_bom(text: str) -> tuple[str, str]:
    """``(bom, rest)``: the UTF-8 byte order mark (decoded) if ``text`` starts with one."""
    return ("\ufeff", text[1:]) if text.startswith("\ufeff") else ("", text)


# ---------------------------------------------------------------------------
# Fuzzy matching
# ---------------------------------------------------------------------------

_FUZZY_TABLE = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys(
            "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
        ),
    }
)


_ASCII_TRAILING_SPACE = re.compile(r"[\t\v\f\r ](?:\n|\Z)")


def normalize_for_fuzzy_match(text: str) -> str:
    """NFKC, trailing whitespace stripped per line, smart quotes, dashes and odd spaces made ASCII."""
    ascii_only = text.isascii()  # NFKC and the table leave ASCII alone
    if ascii_only and not _ASCII_TRAILING_SPACE.search(text):
        return text
    if not ascii_only:
        text = unicodedata.normalize("NFKC", text)
    text = "\n".join([line.rstrip(JS_WHITESPACE) for line in text.split("\n")])
    return text if ascii_only else text.translate(_FUZZY_TABLE)


@define(frozen=True)
class Match:
    """Where ``old_text`` was found; ``content`` is the text the index refers to."""

    found: bool
    index: int
    length: int
    fuzzy: bool
    content: str


def fuzzy_find(content: str, old_text: str) -> Match:
    """Exact match first; otherwise a match in the fuzzy-normalized forms of both texts."""
    index = content.find(old_text)
    if index != -1:
        return Match(True, index, len(old_text), False, content)
    fuzzy_content = normalize_for_fuzzy_match(content)
    fuzzy_old = normalize_for_fuzzy_match(old_text)
    index = fuzzy_content.find(fuzzy_old)
    if index == -1:
        return Match(False, -1, 0, False, content)
    return Match(True, index, len(fuzzy_old), True, fuzzy_content)


# ---------------------------------------------------------------------------
# Applying edits
# ---------------------------------------------------------------------------


def _not_found(path: str, i: int, total: int) -> EditError:
    if total == 1:
        return EditError(
            f"Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines."
        )
    return EditError(
        f"Could not find edits[{i}] in {path}. The oldText must match exactly including all whitespace and newlines."
    )


def _duplicate(path: str, i: int, total: int, occurrences: int) -> EditError:
    if total == 1:
        return EditError(
            f"Found {occurrences} occurrences of the text in {path}. The text must be unique. "
            "Please provide more context to make it unique."
        )
    return EditError(
        f"Found {occurrences} occurrences of edits[{i}] in {path}. Each oldText must be unique. "
        "Please provide more context to make it unique."
    )


def _empty(path: str, i: int, total: int) -> EditError:
    if total == 1:
        return EditError(f"oldText must not be empty in {path}.")
    return EditError(f"edits[{i}].oldText must not be empty in {path}.")


def _no_change(path: str, total: int) -> EditError:
    if total == 1:
        return EditError(
            f"No changes made to {path}. The replacement produced identical content. "
            "This might indicate an issue with special characters or the text not existing as expected."
        )
    return EditError(f"No changes made to {path}. The replacements produced identical content.")


def apply_edits(content: str, edits: list[dict[str, Any]], path: str) -> tuple[str, str]:
    """Apply ``edits`` (``oldText``/``newText``) to LF-normalized ``content``: ``(base, new)``.

    Every edit is matched against the same original; if any needs fuzzy matching, all of them
    work in the fuzzy-normalized text (so ``base`` is that text). Matches must be unique and
    must not overlap, and the result must differ from ``base``.
    """
    pairs = [(normalize_newlines(e["oldText"]), normalize_newlines(e["newText"])) for e in edits]
    total = len(pairs)
    for i, (old, _new) in enumerate(pairs):
        if not old:
            raise _empty(path, i, total)
    fuzzy = any(fuzzy_find(content, old).fuzzy for old, _new in pairs)
    base = normalize_for_fuzzy_match(content) if fuzzy else content
    # Uniqueness is always counted in the fuzzy-normalized text, even for exact matches
    # (normalizing is idempotent, so a fuzzy base is already that text).
    counted_in = base if fuzzy else normalize_for_fuzzy_match(base)
    matched: list[tuple[int, int, int, str]] = []  # (index, length, edit number, new text)
    for i, (old, new) in enumerate(pairs):
        match = fuzzy_find(base, old)
        if not match.found:
            raise _not_found(path, i, total)
        occurrences = counted_in.count(normalize_for_fuzzy_match(old))
        if occurrences > 1:
            raise _duplicate(path, i, total, occurrences)
        matched.append((match.index, match.length, i, new))
    matched.sort(key=lambda m: m[0])
    for previous, current in itertools.pairwise(matched):
        if previous[0] + previous[1] > current[0]:
            raise EditError(
                f"edits[{previous[2]}] and edits[{current[2]}] overlap in {path}. "
                "Merge them into one edit or target disjoint regions."
            )
    pieces: list[str] = []
    position = 0
    for index, length, _i, new in matched:
        pieces.append(base[position:index])
        pieces.append(new)
        position = index + length
    pieces.append(base[position:])
    result = "".join(pieces)
    if result == base:
        raise _no_change(path, total)
    return base, result


# ---------------------------------------------------------------------------
# Line diff (the Myers algorithm as the ``diff`` package runs it, so ties resolve the same way)
# ---------------------------------------------------------------------------

# Diagonal steps allowed before giving up on a minimal diff (a pathological rewrite of a huge
# file); the fallback reports the changed middle as one removed and one added block.
MAX_DIFF_STEPS = 2_000_000  # about 1.5 s of Python in the worst case


def _tokenize(text: str) -> list[str]:
    """Lines with their trailing newline; no empty tokens."""
    pieces = text.split("\n")
    last = pieces.pop()
    tokens = [piece + "\n" for piece in pieces]
    if last:
        tokens.append(last)
    return tokens


@define(frozen=True)
class Part:
    """One run of the diff: unchanged, added or removed lines (``value`` joins them)."""

    value: str
    added: bool
    removed: bool
    count: int


# A component of a path is (count, added, removed, previous component); a path is
# (position in the old tokens, last component). Plain tuples: this loop is the hot spot.
_Comp = tuple[int, bool, bool, Any]


def diff_lines(old: str, new: str, max_steps: int = MAX_DIFF_STEPS) -> list[Part]:
    """A minimal line diff of ``old`` and ``new``, with the ``diff`` package's tie-breaking.

    The lines both texts start with are set aside first: the algorithm's first move takes
    exactly them, so the result is the same, without turning them into tokens.
    """
    cut = old.rfind("\n", 0, _common_prefix_length(old, new)) + 1
    old_tokens = _tokenize(old[cut:] if cut else old)
    new_tokens = _tokenize(new[cut:] if cut else new)
    finished, last = _myers(old_tokens, new_tokens, max_steps)
    if finished:
        parts = _build_parts(last, old_tokens, new_tokens)
    else:
        parts = _prefix_suffix_diff(old_tokens, new_tokens)
    if cut:
        head = Part(old[:cut], False, False, old.count("\n", 0, cut))
        if parts and not parts[0].added and not parts[0].removed:
            head = Part(head.value + parts[0].value, False, False, head.count + parts[0].count)
            parts = parts[1:]
        parts.insert(0, head)
    return parts


def _common_prefix_length(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share (blocks compared in C)."""
    limit = min(len(a), len(b))
    low = 0
    block = 1 << 16
    while low < limit:
        high = min(low + block, limit)
        if a[low:high] == b[low:high]:
            low = high
            continue
        while high - low > 1:  # the first difference is in [low, high)
            middle = (low + high) // 2
            if a[low:middle] == b[low:middle]:
                low = middle
            else:
                high = middle
        return low
    return limit


def _myers(old_tokens: list[str], new_tokens: list[str], max_steps: int) -> tuple[bool, _Comp | None]:
    """``(True, last component of a shortest edit path)``, or ``(False, None)`` when ``max_steps`` ran out."""
    old_len, new_len = len(old_tokens), len(new_tokens)

    def extend(old_pos: int, last: _Comp | None, diagonal: int) -> tuple[int, int, _Comp | None]:
        new_pos = old_pos - diagonal
        start = old_pos
        while (
            new_pos + 1 < new_len
            and old_pos + 1 < old_len
            and old_tokens[old_pos + 1] == new_tokens[new_pos + 1]
        ):
            new_pos += 1
            old_pos += 1
        if old_pos != start:
            last = (old_pos - start, False, False, last)
        return old_pos, new_pos, last

    old_pos, new_pos, last = extend(-1, None, 0)
    if old_pos + 1 >= old_len and new_pos + 1 >= new_len:
        return True, last
    best: dict[int, tuple[int, _Comp | None] | None] = {0: (old_pos, last)}
    min_diagonal = -(old_len + new_len + 1)
    max_diagonal = old_len + new_len + 1
    steps = 0
    for edit_length in range(1, old_len + new_len + 1):
        diagonal = max(min_diagonal, -edit_length)
        # The bounds move while the loop runs (a path reaching an edge narrows them).
        while diagonal <= min(max_diagonal, edit_length):
            steps += 1
            if steps > max_steps:
                return False, None
            remove_path = best.get(diagonal - 1)
            add_path = best.get(diagonal + 1)
            if remove_path is not None:
                best[diagonal - 1] = None
            can_add = add_path is not None and 0 <= add_path[0] - diagonal < new_len
            can_remove = remove_path is not None and remove_path[0] + 1 < old_len
            if not can_add and not can_remove:
                best[diagonal] = None
                diagonal += 2
                continue
            # Branch from the path that got further in the old text (an insertion on a tie).
            if add_path is not None and (not can_remove or (can_add and remove_path[0] < add_path[0])):  # type: ignore[index]
                base_pos, base_last, added, removed, step = add_path[0], add_path[1], True, False, 0
            else:
                assert remove_path is not None
                base_pos, base_last, added, removed, step = remove_path[0], remove_path[1], False, True, 1
            if base_last is not None and base_last[1] == added and base_last[2] == removed:
                base_last = (base_last[0] + 1, added, removed, base_last[3])
            else:
                base_last = (1, added, removed, base_last)
            old_pos, new_pos, last = extend(base_pos + step, base_last, diagonal)
            if old_pos + 1 >= old_len and new_pos + 1 >= new_len:
                return True, last
            best[diagonal] = (old_pos, last)
            if old_pos + 1 >= old_len:
                max_diagonal = min(max_diagonal, diagonal - 1)
            if new_pos + 1 >= new_len:
                min_diagonal = max(min_diagonal, diagonal + 1)
            diagonal += 2
    return False, None


def _build_parts(last: _Comp | None, old_tokens: list[str], new_tokens: list[str]) -> list[Part]:
    components: list[_Comp] = []
    while last is not None:
        components.append(last)
        last = last[3]
    components.reverse()
    parts: list[Part] = []
    old_pos = new_pos = 0
    for count, added, removed, _previous in components:
        if removed:
            parts.append(Part("".join(old_tokens[old_pos : old_pos + count]), False, True, count))
            old_pos += count
        else:
            parts.append(Part("".join(new_tokens[new_pos : new_pos + count]), added, False, count))
            new_pos += count
            if not added:
                old_pos += count
    return parts


def _prefix_suffix_diff(old_tokens: list[str], new_tokens: list[str]) -> list[Part]:
    prefix = 0
    limit = min(len(old_tokens), len(new_tokens))
    while prefix < limit and old_tokens[prefix] == new_tokens[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < limit - prefix
        and old_tokens[len(old_tokens) - 1 - suffix] == new_tokens[len(new_tokens) - 1 - suffix]
    ):
        suffix += 1
    parts: list[Part] = []

    def add(tokens: list[str], added: bool, removed: bool) -> None:
        if tokens:
            parts.append(Part("".join(tokens), added, removed, len(tokens)))

    add(old_tokens[:prefix], False, False)
    add(old_tokens[prefix : len(old_tokens) - suffix], False, True)
    add(new_tokens[prefix : len(new_tokens) - suffix], True, False)
    add(old_tokens[len(old_tokens) - suffix :], False, False)
    return parts


# ---------------------------------------------------------------------------
# pi's numbered diff
# ---------------------------------------------------------------------------


def generate_diff(old: str, new: str, context_lines: int = 4) -> tuple[str, int | None]:
    """pi's diff text (``-12 old``/``+12 new``/`` 12 same``, ``...`` for skipped runs) and the
    first changed line (numbered in the new text)."""
    parts = diff_lines(old, new)
    out: list[str] = []
    width = len(str(max(old.count("\n"), new.count("\n")) + 1))
    blank = " " * width
    old_no = new_no = 1
    last_was_change = False
    first_changed: int | None = None

    def context(line: str) -> None:
        nonlocal old_no, new_no
        out.append(f" {old_no:>{width}} {line}")
        old_no += 1
        new_no += 1

    def skip(count: int) -> None:
        nonlocal old_no, new_no
        out.append(f" {blank} ...")
        old_no += count
        new_no += count

    for i, part in enumerate(parts):
        if part.added or part.removed:
            lines = _lines(part.value)
            if first_changed is None:
                first_changed = new_no
            for line in lines:
                if part.added:
                    out.append(f"+{new_no:>{width}} {line}")
                    new_no += 1
                else:
                    out.append(f"-{old_no:>{width}} {line}")
                    old_no += 1
            last_was_change = True
            continue
        # Unchanged lines: only a few around changes are shown (never split a long run whole).
        count = part.count
        next_is_change = i < len(parts) - 1 and (parts[i + 1].added or parts[i + 1].removed)
        if last_was_change and next_is_change:
            if count <= context_lines * 2:
                for line in _lines(part.value):
                    context(line)
            else:
                for line in _first_lines(part.value, context_lines):
                    context(line)
                skip(count - 2 * context_lines)
                for line in _last_lines(part.value, context_lines):
                    context(line)
        elif last_was_change:
            for line in _first_lines(part.value, min(count, context_lines)):
                context(line)
            if count > context_lines:
                skip(count - context_lines)
        elif next_is_change:
            skipped = max(0, count - context_lines)
            if skipped > 0:
                skip(skipped)
            for line in _last_lines(part.value, count - skipped):
                context(line)
        else:
            old_no += count
            new_no += count
        last_was_change = False
    return "\n".join(out), first_changed


def _lines(value: str) -> list[str]:
    """The lines of a run (its final newline ends the last line, it does not start another)."""
    return (value[:-1] if value.endswith("\n") else value).split("\n")


def _first_lines(value: str, count: int) -> list[str]:
    return value.split("\n", count)[:count] if count else []


def _last_lines(value: str, count: int) -> list[str]:
    if not count:
        return []
    body = value[:-1] if value.endswith("\n") else value
    return body.rsplit("\n", count)[-count:]
