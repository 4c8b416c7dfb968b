"""Phase 10's refresh: this turn's fragments replace the last turn's; the agent's items stay."""

from __future__ import annotations

import pytest

from prefrontal.buffer import EvictionReason, Focus, ItemSource, Lifetime, OverflowPolicy

from .conftest import at, item, make_buffer

pytestmark = pytest.mark.anyio
FOCUS = Focus(input_text="plan the vacation")


async def test_fragments_of_the_last_turn_are_replaced() -> None:
    """A fragment the new turn does not bring again leaves with reason replaced."""
    buffer = make_buffer()
    await buffer.refresh_turn([item("old memory", item_id="m1")], focus=FOCUS, now=at(0))
    report = await buffer.refresh_turn([item("new memory", item_id="m2")], focus=FOCUS, now=at(9))
    assert [i.item_id for i in report.items] == ["m2"]
    assert [(e.item_id, e.reason) for e in report.evicted] == [("m1", EvictionReason.REPLACED)]


async def test_a_fragment_already_held_is_refreshed_not_added_twice() -> None:
    """The same fragment in two turns is one item, touched twice."""
    buffer = make_buffer()
    await buffer.refresh_turn([item("shared memory", item_id="m")], focus=FOCUS, now=at(0))
    report = await buffer.refresh_turn([item("shared memory", item_id="m")], focus=FOCUS, now=at(5))
    assert [r.item_id for r in report.refreshed] == ["m"]
    assert report.admitted == ()
    assert len(buffer) == 1
    held = buffer.get("m")
    assert held is not None
    assert held.access_count == 2
    assert held.last_accessed_at == at(5)


async def test_the_turn_is_named_in_the_provenance_of_what_it_admits_or_refreshes() -> None:
    """Offers name no turn; the refresh stamps its own on each item, new or held again,
    and leaves the offers as they were (one offer serves a fragment every turn). Without a
    turn, the item takes the offer's provenance as it is."""
    buffer = make_buffer()
    kept, shown = item("shared memory", item_id="m"), item("first turn only", item_id="f")
    await buffer.refresh_turn([kept, shown], focus=FOCUS, now=at(0), turn_id="turn-1")
    assert {i.item_id: i.provenance.turn_id for i in buffer.items} == {
        "m": "turn-1",
        "f": "turn-1",
    }
    fresh = item("second turn only", item_id="s")
    await buffer.refresh_turn([kept, fresh], focus=FOCUS, now=at(5), turn_id="turn-2")
    assert {i.item_id: i.provenance.turn_id for i in buffer.items} == {
        "m": "turn-2",
        "s": "turn-2",
    }
    assert kept.provenance.turn_id is None and fresh.provenance.turn_id is None
    await buffer.refresh_turn([kept], focus=FOCUS, now=at(9))
    held = buffer.get("m")
    assert held is not None and held.provenance == kept.provenance  # no turn: the offer's own


async def test_renew_refreshes_a_held_offer_in_place_as_add_does_and_nothing_else() -> None:
    """Renewing a held item is what adding it again does; an offer not held, or larger than
    the item held, is left to :meth:`add` (``None``, nothing changed)."""
    renewing, adding = make_buffer(), make_buffer()
    for buffer in (renewing, adding):
        await buffer.add(item("a held note", item_id="n", tags=("t",)), now=at(0))
    again = item("a held note", item_id="n", priority=0.9)
    renewed = renewing.renew(again, now=at(5), turn_id="turn-2")
    added = await adding.add(again, now=at(5), turn_id="turn-2")
    assert renewed == added
    assert renewing.snapshot() == adding.snapshot()
    before = renewing.snapshot()
    assert renewing.renew(item("not held", item_id="x"), now=at(6)) is None
    assert renewing.renew(item("a held note grown longer", item_id="n"), now=at(6)) is None
    assert renewing.snapshot() == before


async def test_duplicate_fragments_within_a_turn_count_once() -> None:
    """A fragment offered twice in one turn is admitted once."""
    buffer = make_buffer()
    report = await buffer.refresh_turn([item("same"), item("same")], focus=FOCUS, now=at(0))
    assert len(report.admitted) == 1
    assert len(buffer) == 1


async def test_the_agents_own_items_survive_the_refresh() -> None:
    """Tool results and notes the agent added stay across turns."""
    buffer = make_buffer()
    await buffer.add(item("tool said 42", item_id="tool", source=ItemSource.EXTERNAL), now=at(0))
    await buffer.refresh_turn([item("fragment", item_id="f")], focus=FOCUS, now=at(1))
    report = await buffer.refresh_turn([item("other", item_id="g")], focus=FOCUS, now=at(2))
    assert {i.item_id for i in report.items} == {"tool", "g"}
    tool = buffer.get("tool")
    assert tool is not None
    assert tool.lifetime is Lifetime.SESSION


async def test_a_turn_fragment_never_evicts_another_of_the_same_turn() -> None:
    """When room runs out, the weakest fragments of the turn are refused, not swapped."""
    buffer = make_buffer(OverflowPolicy.FIFO, max_items=2, base_threshold=0.0)
    fragments = [item(f"vacation fragment {n}", item_id=f"f{n}") for n in range(3)]
    report = await buffer.refresh_turn(fragments, focus=FOCUS, now=at(0))
    assert len(report.admitted) == 2
    assert len(report.refused) == 1
    assert report.refused[0].reason.startswith("no_room")
    assert not any(e.reason is EvictionReason.POLICY for e in report.evicted)


async def test_refresh_offers_the_most_salient_fragments_first() -> None:
    """With room for one, the fragment most relevant to the input wins."""
    buffer = make_buffer(max_items=1)
    fragments = [item("tax forms", item_id="tax"), item("vacation plan", item_id="trip")]
    report = await buffer.refresh_turn(fragments, focus=FOCUS, now=at(0))
    assert [r.item_id for r in report.admitted] == ["trip"]


async def test_a_fragment_never_evicts_a_note_only_the_buffer_holds() -> None:
    """A turn's fragment (a copy) never displaces the agent's own notes: it is refused."""
    buffer = make_buffer(OverflowPolicy.PRIORITY, max_items=2)
    await buffer.add(item("minor note", item_id="note", priority=0.1), now=at(0))
    await buffer.add(item("key note", item_id="key", priority=0.9), now=at(0))
    report = await buffer.refresh_turn(
        [item("vacation fragment", item_id="f", priority=0.5)], focus=FOCUS, now=at(1)
    )
    assert not report.evicted
    assert [r.reason.split(":")[0] for r in report.refused] == ["no_room"]
    assert {i.item_id for i in report.items} == {"note", "key"}


async def test_report_carries_themes_coherence_and_totals() -> None:
    """The report gives the session's dominant themes, coherence and totals."""
    buffer = make_buffer()
    fragments = [
        item("Booked flights to Lisbon", item_id="a", tags=("vacation",), entities=("Lisbon",)),
        item("Hotel in Lisbon near the river", item_id="b", tags=("vacation",)),
    ]
    report = await buffer.refresh_turn(fragments, focus=FOCUS, now=at(0))
    assert report.themes[0] == "vacation"
    assert "lisbon" in report.themes
    assert 0.0 <= report.coherence.score <= 1.0
    assert report.coherence.thematic == 1.0
    assert report.total_tokens == sum(i.tokens for i in report.items)
    assert report.total_items == 2
    assert buffer.counters.turns == 1


async def test_items_idle_since_the_last_turn_fade_at_refresh() -> None:
    """An agent item untouched for the fade-out time leaves at the next refresh."""
    buffer = make_buffer(fade_seconds=300)
    await buffer.add(item("old tool output", item_id="t"), now=at(0))
    report = await buffer.refresh_turn([], focus=FOCUS, now=at(301))
    assert [(e.item_id, e.reason) for e in report.evicted] == [("t", EvictionReason.FADED)]


async def test_offers_past_a_buffer_full_of_this_turns_items_are_refused_alike() -> None:
    """Once every slot holds a pinned item or one placed this turn, each later offer is
    refused for room with the same counts in its reason, and takes no insertion number."""
    buffer = make_buffer(OverflowPolicy.COMPOSITE, max_items=3, base_threshold=0.0)
    fragments = [item(f"vacation fragment {n}", item_id=f"f{n}") for n in range(7)]
    fragments.append(item("identity", item_id="pin", pinned=True))
    report = await buffer.refresh_turn(fragments, focus=FOCUS, now=at(0))
    assert report.admitted[0].item_id == "pin"
    assert len(report.admitted) == 3
    assert len(report.refused) == 5
    held = sum(i.tokens for i in buffer.items)
    for refusal in report.refused:
        assert refusal.reason == (
            f"no_room: {refusal.tokens} tokens do not fit beside 3 pinned or protected items "
            f"of {held} tokens (max_tokens {buffer.config.max_tokens}, max_items 3)"
        )
        assert refusal.decision is not None
        assert refusal.decision.admitted
    assert buffer.snapshot().next_seq == 3
    assert buffer.counters.refused == 5


async def test_a_buffer_full_of_kept_items_takes_offers_again_once_it_grows() -> None:
    """A buffer whose every slot holds a pinned item refuses an offer without looking for
    victims; reconfigured to more slots (nothing evicted, nothing else changed), it admits
    the same offer."""
    buffer = make_buffer(OverflowPolicy.COMPOSITE, max_items=2)
    for n in range(2):
        await buffer.add(item(f"kept {n}", item_id=f"k{n}", pinned=True), now=at(0))
    refused = await buffer.add(item("one more", item_id="m"), now=at(1))
    assert refused.reason.startswith("no_room")
    assert await buffer.reconfigure(buffer.config.model_copy(update={"max_items": 3})) == ()
    admitted = await buffer.add(item("one more", item_id="m"), now=at(2))
    assert admitted.outcome.value == "admitted"
    assert len(buffer) == 3
