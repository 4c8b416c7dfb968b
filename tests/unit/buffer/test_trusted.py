"""Models the buffer assembles unchecked are the models validation would give.

The buffer builds its hot-path models from values already checked
(:mod:`prefrontal.trusted`); these tests hold it to that: every
such model validates again to an equal one, and the helpers refuse a
mapping that leaves a field out or names one the model does not have.
"""

from __future__ import annotations

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.buffer import (
    BufferConfig,
    BufferItem,
    Focus,
    NewItem,
    WorkingMemoryBuffer,
    building,
)
from prefrontal.buffer.models import ItemProvenance, Lifetime, SalienceFactors
from prefrontal.buffer.salience import measure, salience_factors
from prefrontal.buffer.themes import SessionLink, SessionProfile, link_sessions
from prefrontal.trusted import assemble, assembler, changed, evolve

from .conftest import T0, Clock, at, words

TEXTS = ("trip to lisbon", "quarterly budget report", "urgent deadline friday", "the hotel")
LABELS = ("Lisbon", "budget", "urgent", "family")


def test_assemble_refuses_a_missing_or_an_unknown_field() -> None:
    fields = ItemProvenance().model_dump()
    assert assemble(ItemProvenance, dict(fields)) == ItemProvenance()
    del fields["turn_id"]
    with pytest.raises(TypeError, match=r"missing \['turn_id'\]"):
        assemble(ItemProvenance, dict(fields))
    with pytest.raises(TypeError, match=r"unknown \['colour'\]"):
        assemble(ItemProvenance, {**fields, "turn_id": None, "colour": "red"})


def test_an_assembler_checks_its_field_names_once_and_assembles_as_assemble_does() -> None:
    fields = ItemProvenance().model_dump()
    build = assembler(ItemProvenance, tuple(fields))
    assert build(dict(fields)) == assemble(ItemProvenance, dict(fields)) == ItemProvenance()
    built, assembled = build(dict(fields)), assemble(ItemProvenance, dict(fields))
    assert built.model_fields_set == assembled.model_fields_set == set(fields)
    with pytest.raises(TypeError, match=r"missing \['turn_id'\]"):
        assembler(ItemProvenance, tuple(name for name in fields if name != "turn_id"))
    with pytest.raises(TypeError, match=r"unknown \['colour'\]"):
        assembler(ItemProvenance, (*fields, "colour"))
    with pytest.raises(TypeError, match="missing"):
        assembler(ItemProvenance, (*fields, next(iter(fields))))  # a name twice, none missing


def _held() -> BufferItem:
    """A held item of the defaults (a ``system`` one, accessed once at ``T0``)."""
    return BufferItem(
        item_id="a",
        content="trip",
        source="system",
        tokens=1,
        priority=0.5,
        salience=0.2,
        added_at=T0,
        last_accessed_at=T0,
    )


def test_evolve_is_model_copy_and_refuses_an_unknown_field() -> None:
    item = _held()
    changes = {"last_accessed_at": at(60), "access_count": 2}
    copied = evolve(item, changes)
    assert copied == item.model_copy(update=changes)
    assert copied.model_fields_set == item.model_copy(update=changes).model_fields_set
    assert item.access_count == 1  # the original is untouched
    with pytest.raises(TypeError, match="unknown fields"):
        evolve(item, {"acess_count": 2})


def test_changed_is_evolve_with_the_named_fields_set() -> None:
    item = _held()
    names = frozenset({"access_count", "pinned"})
    fields = {**item.__dict__, "access_count": 2, "pinned": True}
    copied = changed(item, fields, names)
    expected = evolve(item, {"access_count": 2, "pinned": True})
    assert copied == expected
    assert copied.model_fields_set == expected.model_fields_set
    assert item.access_count == 1  # the original is untouched


@st.composite
def offers(draw: st.DrawFn) -> NewItem:
    return NewItem(
        content=draw(st.sampled_from(TEXTS)),
        tokens=draw(st.integers(1, 8)),
        priority=draw(st.floats(0, 1)),
        urgency=draw(st.floats(0, 1)),
        relevance=draw(st.none() | st.floats(0, 1)),
        confidence=draw(st.floats(0, 1)),
        tags=tuple(draw(st.lists(st.sampled_from(LABELS), max_size=2, unique=True))),
        entities=tuple(draw(st.lists(st.sampled_from(LABELS), max_size=2, unique=True))),
        occurred_at=draw(st.none() | st.integers(-(10**6), 10**8).map(at)),
        pinned=draw(st.booleans()),
    )


focuses = st.builds(
    Focus,
    input_text=st.sampled_from(TEXTS),
    tags=st.lists(st.sampled_from(LABELS), max_size=3, unique=True).map(tuple),
    task=st.sampled_from(("", *TEXTS)),
    intensity=st.floats(0, 1),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(offers(), min_size=1, max_size=12), focuses, st.integers(0, 10**5))
def test_assembled_factors_and_items_validate_again_to_themselves(
    offered: list[NewItem], focus: Focus, seconds: int
) -> None:
    """Salience factors in ``[0, 1]``, admitted and refreshed items as validation makes them."""
    config = BufferConfig(max_items=6, max_tokens=30)
    against = measure(focus, ("budget", "lisbon"))
    for offer in offered:
        factors = salience_factors(offer, against, at(seconds), config)
        assert SalienceFactors.model_validate(factors.model_dump()) == factors
    buffer = WorkingMemoryBuffer(config, count_tokens=words, clock=Clock(at(seconds)))

    async def offer_all() -> None:
        for n, offer in enumerate(offered):
            await buffer.add(offer, focus=focus, now=at(seconds + n))
        await buffer.refresh_turn(offered, focus=focus, now=at(seconds + len(offered)))

    anyio.run(offer_all)
    for item in buffer.items:
        assert BufferItem.model_validate(item.model_dump()) == item
    snapshot = buffer.snapshot()
    assert type(snapshot).model_validate_json(snapshot.model_dump_json()) == snapshot


profiles = st.builds(
    SessionProfile,
    session_id=st.sampled_from(("a", "b", "c")),
    themes=st.lists(st.sampled_from(LABELS), max_size=3, unique=True).map(tuple),
    entities=st.lists(st.sampled_from(LABELS), max_size=3, unique=True).map(tuple),
    updated_at=st.integers(-(10**5), 10**5).map(at),
)


@settings(max_examples=200, deadline=None)
@given(profiles, st.lists(profiles, max_size=6), st.integers(0, 10**5))
def test_assembled_session_links_validate_again_to_themselves(
    current: SessionProfile, others: list[SessionProfile], seconds: int
) -> None:
    """A link's similarity in ``[0, 1]`` and its gap of at least 0, as validation makes them."""
    for link in link_sessions(current, others, at(seconds)):
        assert SessionLink.model_validate(link.model_dump()) == link


@settings(max_examples=200, deadline=None)
@given(
    offers(),
    offers(),
    st.sampled_from(list(Lifetime)),
    st.sampled_from(list(Lifetime)),
    st.booleans(),
    st.none() | st.sampled_from(("t1", "t2")),
    st.none() | st.sampled_from(("t1", "t2")),
)
def test_a_refreshed_item_is_the_model_copy_of_its_rule(
    first: NewItem,
    again: NewItem,
    held_lifetime: Lifetime,
    offered_lifetime: Lifetime,
    held_pinned: bool,
    stamped_turn: str | None,
    turn_id: str | None,
) -> None:
    """:func:`~prefrontal.buffer.building.refreshed` gives what ``model_copy`` gives for its
    rule (pins and sessions stick, empty labels keep the held ones), set fields included."""
    provenance = ItemProvenance(store="episodic", item_ids=("m",), turn_id=stamped_turn)
    held = BufferItem(
        item_id="a",
        content=first.content,
        source=first.source,
        tokens=first.tokens or 1,
        priority=first.priority,
        salience=0.3,
        tags=first.tags,
        entities=first.entities,
        added_at=T0,
        last_accessed_at=T0,
        pinned=held_pinned,
        lifetime=held_lifetime,
    )
    offer = again.model_copy(update={"lifetime": offered_lifetime, "provenance": provenance})
    got = building.refreshed(held, offer, 5, at(60), turn_id)
    session = Lifetime.SESSION in (held_lifetime, offered_lifetime)
    expected = held.model_copy(
        update={
            "last_accessed_at": at(60),
            "access_count": 2,
            "content": offer.content,
            "tokens": 5,
            "priority": offer.priority,
            "confidence": offer.confidence,
            "tags": offer.tags or held.tags,
            "entities": offer.entities or held.entities,
            "pinned": held_pinned or offer.pinned,
            "lifetime": Lifetime.SESSION if session else Lifetime.TURN,
            "provenance": provenance
            if turn_id is None
            else provenance.model_copy(update={"turn_id": turn_id}),
        }
    )
    assert got == expected
    assert got.model_fields_set == expected.model_fields_set
    assert BufferItem.model_validate(got.model_dump()) == got
