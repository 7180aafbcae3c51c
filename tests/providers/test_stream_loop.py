"""How a decoder hands on each piece's events (``announced``), failures included."""

from __future__ import annotations

import pytest

from piko.data.streaming import StreamEvent
from piko.plugins.providers.common import ProviderError
from piko.plugins.providers.common import announced


def feed(kinds: list[str], fail: bool, out: list[StreamEvent]) -> None:
    out.extend(StreamEvent(type=kind) for kind in kinds)
    if fail:
        raise ProviderError("broke")


def test_the_events_of_a_piece_come_as_one_list_and_none_come_for_an_empty_piece() -> None:
    assert [[e.type for e in batch] for batch in announced(feed, ["text_start", "text_delta"], False)] == [
        ["text_start", "text_delta"]
    ]
    assert list(announced(feed, [], False)) == []


def test_the_events_before_a_failure_are_handed_on_then_the_failure_goes_on() -> None:
    batches = announced(feed, ["text_delta"], True)
    assert [e.type for e in next(batches)] == ["text_delta"]
    with pytest.raises(ProviderError, match="broke"):
        next(batches)
    with pytest.raises(ProviderError, match="broke"):
        list(announced(feed, [], True))
