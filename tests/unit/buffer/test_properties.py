"""Properties of the buffer under any sequence of operations (hypothesis)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.buffer import (
    BufferConfig,
    BufferSnapshot,
    Focus,
    NewItem,
    OverflowPolicy,
    WorkingMemoryBuffer,
)

from .conftest import Clock, words

TAGS = ("vacation", "work", "family", "urgent")
TEXTS = (
    "trip",
    "hotel near the beach",
    "quarterly report for the team meeting",
    "mom called about the flight budget",
    "deadline moved to friday",
    "urgent: the server is down again and the trip budget is late",
)
MAX_ITEMS, MAX_TOKENS = 5, 30


@st.composite
def new_items(draw: st.DrawFn) -> NewItem:
    return NewItem(
        content=f"{draw(st.sampled_from(TEXTS))} {draw(st.integers(0, 20))}",
        tokens=draw(st.integers(0, 35)),
        priority=draw(st.floats(0, 1)),
        pinned=draw(st.booleans()) and draw(st.booleans()),
        tags=tuple(draw(st.lists(st.sampled_from(TAGS), max_size=2, unique=True))),
    )


operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), new_items(), st.floats(0, 120)),
        st.tuples(st.just("access"), st.integers(0, 9), st.floats(0, 120)),
        st.tuples(st.just("remove"), st.integers(0, 9), st.just(0.0)),
        st.tuples(st.just("pin"), st.integers(0, 9), st.just(0.0)),
        st.tuples(st.just("refresh"), st.lists(new_items(), max_size=4), st.floats(0, 400)),
        st.tuples(st.just("expire"), st.just(None), st.floats(0, 400)),
        st.tuples(st.just("fade"), st.just(None), st.floats(0, 400)),
    ),
    max_size=25,
)
policies = st.sampled_from(list(OverflowPolicy))


@dataclass
class Run:
    """A buffer, its clock, and the pinned items it must still hold.

    A pinned fragment offered by a refresh is protected from eviction for its
    turn, and replaced like any fragment by a later turn that does not bring it;
    items pinned by ``add`` or ``pin`` are the agent's and stay until removed.
    """

    buffer: WorkingMemoryBuffer
    clock: Clock
    pinned: set[str]


def fresh(policy: OverflowPolicy) -> Run:
    clock = Clock()
    config = BufferConfig(
        policy=policy,
        max_items=MAX_ITEMS,
        max_tokens=MAX_TOKENS,
        base_threshold=0.15,
        summary_min_tokens=3,
        fade_seconds=300,
    )
    return Run(WorkingMemoryBuffer(config, count_tokens=words, clock=clock), clock, set())


async def apply(run: Run, op: tuple[str, Any, Any], check: bool = True) -> None:
    kind, arg, dt = op
    run.clock.advance(dt or 0.0)
    buffer, focus = run.buffer, Focus(input_text="trip budget", tags=("vacation",))
    held = [i.item_id for i in buffer.items]
    target = held[arg % len(held)] if held and isinstance(arg, int) else None
    if kind == "add":
        result = await buffer.add(arg, focus=focus)
        assert not any(e.item.pinned for e in result.evicted)
        if result.item is not None and result.item.pinned:
            run.pinned.add(result.item_id)
    elif kind == "refresh":
        report = await buffer.refresh_turn(arg, focus=focus)
        lost = [e for e in report.evicted if e.item.pinned]
        assert all(e.reason.value == "replaced" and e.item.lifetime.value == "turn" for e in lost)
    elif kind == "expire":
        assert not any(e.item.pinned for e in await buffer.expire())
    elif kind == "fade":
        assert not any(e.item.pinned for e in await buffer.fade())
    elif target is not None and kind == "access":
        buffer.access(target)
    elif target is not None and kind == "remove":
        buffer.remove(target)
        run.pinned.discard(target)
    elif target is not None and kind == "pin":
        buffer.pin(target)
        run.pinned.add(target)
    if check:
        assert_bounded(run)


def assert_bounded(run: Run) -> None:
    buffer = run.buffer
    assert len(buffer) <= MAX_ITEMS
    assert buffer.total_tokens <= MAX_TOKENS
    assert buffer.total_tokens == sum(i.tokens for i in buffer.items)
    assert sum(i.is_summary for i in buffer.items) <= 1


def play(policy: OverflowPolicy, ops: list[tuple[str, Any, Any]]) -> Run:
    run = fresh(policy)

    async def main() -> None:
        for op in ops:
            await apply(run, op)

    anyio.run(main)
    return run


@settings(max_examples=60, deadline=None)
@given(policy=policies, ops=operations)
def test_bounds_hold_after_any_sequence(policy: OverflowPolicy, ops: list[Any]) -> None:
    """Never more than max_items items nor max_tokens tokens, nor two summaries, whatever is done."""
    play(policy, ops)


@settings(max_examples=40, deadline=None)
@given(policy=policies, ops=operations)
def test_pinned_items_survive(policy: OverflowPolicy, ops: list[Any]) -> None:
    """Every item pinned and not explicitly removed is still held at the end."""
    run = play(policy, ops)
    assert run.pinned <= {i.item_id for i in run.buffer.items}


@settings(max_examples=40, deadline=None)
@given(policy=policies, ops=operations)
def test_snapshot_then_restore_is_the_identity(policy: OverflowPolicy, ops: list[Any]) -> None:
    """Restoring a snapshot, even through JSON, gives back an equal snapshot."""
    snapshot = play(policy, ops).buffer.snapshot()
    assert WorkingMemoryBuffer.restore(snapshot).snapshot() == snapshot
    through_json = BufferSnapshot.model_validate_json(snapshot.model_dump_json())
    assert WorkingMemoryBuffer.restore(through_json).snapshot() == snapshot


@settings(max_examples=30, deadline=None)
@given(policy=policies, ops=operations)
def test_same_operations_same_clock_same_state(policy: OverflowPolicy, ops: list[Any]) -> None:
    """The buffer is deterministic: replaying the operations on the same clock gives equal state."""
    assert play(policy, ops).buffer.snapshot() == play(policy, ops).buffer.snapshot()
