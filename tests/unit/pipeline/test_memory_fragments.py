"""A recalled memory's fragment, made for phases 5 and 6, equals the validated one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefrontal.bundle.fragments import Fragment, Section
from prefrontal.phases.fragments import _validated
from prefrontal.phases.origins import memory_line
from prefrontal.phases.recall import MemoryFragments, memory_heading, six_places
from prefrontal.phases.state import TurnState
from prefrontal.stores.long_term import MemoryItem
from prefrontal.stores.tenancy import Scope

AT = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)


class Counting:
    """What the fragments use of a turn: its token count (one per character here)."""

    def __init__(self) -> None:
        self.counter = self

    def count(self, text: str) -> int:
        return len(text)


TURN = cast(TurnState, Counting())
LABELS = st.none() | st.sampled_from(["sam", "end_turn", "user", "tool", "<b>", ""])


@st.composite
def memories(draw: st.DrawFn) -> MemoryItem:
    """A memory with or without a date, a place in a thread, a speaker, source and author."""
    metadata = {
        key: value
        for key, value in (
            ("speaker", draw(LABELS)),
            ("source", draw(LABELS)),
            ("author", draw(LABELS)),
        )
        if value is not None
    }
    created = AT - timedelta(minutes=draw(st.integers(0, 10_000)))
    occurred = draw(st.none() | st.just(created - timedelta(days=draw(st.integers(0, 900)))))
    return MemoryItem(
        item_id=draw(st.sampled_from(["m1", "m-2", "x"])),
        agent_id="agent",
        user_id=draw(st.sampled_from(["user", "other"])),
        scope=draw(st.sampled_from(list(Scope))),
        content=draw(st.text(min_size=1, max_size=40)),
        created_at=created,
        occurred_at=occurred,
        position=draw(st.none() | st.integers(-5, 500)),
        metadata=metadata,
    )


def validated(item: MemoryItem, score: float, rank: int, section: Section) -> Fragment:
    """The fragment of ``item`` made the straightforward way: every field validated."""
    when = item.occurred_at or item.created_at
    return _validated(
        TURN,
        section,
        memory_line(item),
        section.value,
        (item.item_id,),
        section.value,
        rank,
        when.timestamp() + (item.position or 0) * 1e-3,
        round(score, 6),
        item.created_at,
        None,
        None,
        memory_heading(item),
        None,
        False,
    )


@given(
    item=memories(),
    score=st.floats(-10.0, 10.0, allow_nan=False),
    rank=st.integers(0, 300),
    section=st.sampled_from([Section.EPISODIC, Section.SEMANTIC]),
)
def test_a_made_memory_fragment_equals_the_validated_one_and_dumps_alike(
    item: MemoryItem, score: float, rank: int, section: Section
) -> None:
    made = MemoryFragments(TURN, section, section.value)(item, score, rank)
    checked = validated(item, score, rank, section)
    assert made == checked
    assert made.model_dump_json() == checked.model_dump_json()
    assert Fragment.model_validate(made.model_dump()) == made


@given(
    st.floats() | st.floats(-3.0, 3.0) | st.integers(-3_000_000, 3_000_000).map(lambda n: n / 1e6)
)
def test_six_places_is_round_to_six_places_to_the_bit(score: float) -> None:
    """Every float: the value and its repr (sign of zero, NaN) as ``float(round(score, 6))``."""
    assert repr(six_places(score)) == repr(float(round(score, 6)))


@pytest.mark.parametrize(
    "score",
    [5e-7, -5e-7, 2.5e-6, 1.0000005, 0.1234565, 1e-7, -1e-7, 0.0, -0.0, 999.9999995, 1e10],
)
def test_six_places_at_halves_zeros_and_large_scores(score: float) -> None:
    """Near a half, at zero and past a billion millionths: what round gives."""
    assert repr(six_places(score)) == repr(float(round(score, 6)))
    half = score + 0.5e-6
    assert repr(six_places(half)) == repr(float(round(half, 6)))
