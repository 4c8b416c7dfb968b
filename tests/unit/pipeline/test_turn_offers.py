"""Phase 10's offers: a memory's offer is read as fields, its item made only when needed, and
the buffer decides exactly as it does on the items themselves."""

from __future__ import annotations

from datetime import timedelta

import pytest

from prefrontal.buffer import BufferConfig, Focus, NewItem, WorkingMemoryBuffer
from prefrontal.bundle.models import Fragment, Provenance, Section
from prefrontal.phases.session import MemoryOffer, offer, turn_offer
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
SCORES = (None, -0.5, 0.0, 0.42, 1.0, 3.0, float("inf"))
WORDS = ("payment review friday", "Lena signs off", "Lisbon offsite hotel", "quarterly report")


def memory(section: Section, n: int, score: float | None) -> Fragment:
    provenance = Provenance(store=section.value, item_ids=(f"m{n}",), phase="p", score=score)
    text = f"{WORDS[n % len(WORDS)]} number {n}"
    return Fragment(section=section, text=text, tokens=4 + n % 5, provenance=provenance)


@pytest.mark.parametrize("section", list(Section))
@pytest.mark.parametrize("score", SCORES)
@pytest.mark.parametrize("turn_id", [None, "turn-2"])
def test_a_turn_offer_reads_as_the_offer_and_makes_it(
    section: Section, score: float | None, turn_id: str | None
) -> None:
    """Every field of a turn's offer is the field of :func:`offer`'s item, which it makes."""
    fragment = memory(section, 1, score)
    expected = offer(fragment, turn_id)
    offered = turn_offer(fragment, turn_id)
    lazy = isinstance(offered, MemoryOffer)
    assert lazy is (section in (Section.EPISODIC, Section.SEMANTIC) and score is not None)
    for name in NewItem.model_fields:
        assert getattr(offered, name) == getattr(expected, name), name
    assert offered.resolved_id() == expected.resolved_id()
    made = offered.made()
    assert made == expected
    assert made.model_fields_set == expected.model_fields_set
    assert offered.made() is made  # made once
    assert NewItem.model_validate(made.model_dump()) == made


async def test_the_buffer_decides_on_turn_offers_as_on_the_items() -> None:
    """Three turns of mixed fragments (one larger than the buffer) through a small buffer:
    the same reports (every admission, renewal, refusal with its reason and decision,
    eviction) and the same state, whether it is offered the items or the turn's offers."""
    config = BufferConfig(max_items=6, max_tokens=60)
    eager, lazy = WorkingMemoryBuffer(config), WorkingMemoryBuffer(config)
    sections = (Section.EPISODIC, Section.SEMANTIC, Section.CONVERSATION, Section.FRONTAL_CORTEX)
    for turn in range(3):
        numbers = range(2 * turn, 2 * turn + 14)  # each turn drops two memories, brings two
        fragments = [
            memory(sections[n % len(sections)], n, SCORES[(n + turn) % len(SCORES)])
            for n in numbers
        ]
        fragments.append(  # larger than the whole buffer: refused by add, its item made
            memory(Section.EPISODIC, 99, 0.9).model_copy(update={"tokens": 100})
        )
        focus = Focus(input_text="who signs the payment review?", task="Lisbon offsite")
        at, turn_id = FIXED_NOW + timedelta(minutes=turn), f"turn-{turn}"
        expected = await eager.refresh_turn(
            [offer(f, turn_id) for f in fragments], focus=focus, now=at, turn_id=turn_id
        )
        got = await lazy.refresh_turn(
            [turn_offer(f, turn_id) for f in fragments], focus=focus, now=at, turn_id=turn_id
        )
        assert got == expected
        assert [r.reason for r in got.refused] == [r.reason for r in expected.refused]
        assert [r.decision for r in got.refused] == [r.decision for r in expected.refused]
        assert lazy.snapshot() == eager.snapshot()
        assert got.admitted and got.refused and (turn == 0 or got.refreshed)
        assert any(r.reason.startswith("too_large") for r in got.refused)
