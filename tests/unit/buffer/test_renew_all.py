"""Renewing a run of held fragments in one call does what renewing each in turn does."""

from __future__ import annotations

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.buffer import BufferConfig, BufferEvent, Lifetime, NewItem, WorkingMemoryBuffer

from .conftest import at, item, words

TEXTS = ("a held note", "the payment review is due", "plan the offsite", "hotel by the river")

offers = st.builds(
    lambda n, grown, priority, pinned, lifetime: item(
        TEXTS[n] + (" grown longer" if grown else ""),
        item_id=f"i{n}" if n < 3 else "absent",
        priority=priority,
        pinned=pinned,
        lifetime=lifetime,
    ),
    st.integers(0, 3),
    st.booleans(),
    st.floats(0, 1),
    st.booleans(),
    st.sampled_from(list(Lifetime)),
)


@given(
    offered=st.lists(offers, max_size=8),
    listening=st.booleans(),
    turn_id=st.one_of(st.none(), st.just("turn-2")),
)
@settings(max_examples=80, deadline=None)
def test_renew_all_is_renew_offer_by_offer_up_to_the_first_it_cannot_renew(
    offered: list[NewItem], listening: bool, turn_id: str | None
) -> None:
    """The same results, items, counters and events as one :meth:`renew` call per offer,
    stopping where ``renew`` gives ``None`` (an offer not held, or grown)."""
    config = BufferConfig(max_items=4, max_tokens=40, base_threshold=0.0)
    buffers = [WorkingMemoryBuffer(config, count_tokens=words) for _ in range(2)]
    heard: list[list[BufferEvent]] = [[], []]

    async def run() -> None:
        for buffer, events in zip(buffers, heard, strict=True):
            for n in range(3):
                await buffer.add(item(TEXTS[n], item_id=f"i{n}", tags=("t",)), now=at(0))
            if listening:
                buffer.events.subscribe(events.append)
        batched, single = buffers
        got = batched.renew_all([(o.resolved_id(), o) for o in offered], now=at(5), turn_id=turn_id)
        want = []
        for offer in offered:
            result = single.renew(offer, now=at(5), turn_id=turn_id)
            if result is None:
                break
            want.append(result)
        assert got == want
        assert batched.snapshot() == single.snapshot()
        assert heard[0] == heard[1]
        assert len(heard[0]) == (len(want) if listening else 0)

    anyio.run(run)
