"""A recalled memory's fragment, made for phases 5 and 6, equals the validated one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import cast

from hypothesis import given
from hypothesis import strategies as st

from prefrontal.bundle.fragments import Fragment, Section
from prefrontal.phases.fragments import _validated
from prefrontal.phases.origins import memory_line
from prefrontal.phases.recall import MemoryFragments, memory_heading
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
