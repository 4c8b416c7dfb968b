"""Admission control: salience, threshold under pressure, and the reasons given."""

from __future__ import annotations

import pytest

from prefrontal.buffer import BufferConfig, Focus, Outcome, SalienceFactors
from prefrontal.buffer.salience import admission_score, salience, threshold

from .conftest import at, item, make_buffer

pytestmark = pytest.mark.anyio


def test_salience_uses_the_default_weights() -> None:
    """Salience is 0.4 relevance + 0.2 urgency + 0.2 recency + 0.2 attention."""
    factors = SalienceFactors(relevance=1.0, urgency=0.5, recency=0.25, attention=0.0)
    assert salience(factors, BufferConfig()) == pytest.approx(0.4 + 0.1 + 0.05)


def test_admission_score_is_modulated_by_task_and_coherence() -> None:
    """Score = salience x (1 + 0.3 task relevance + 0.2 coherence)."""
    factors = SalienceFactors(relevance=1.0, task_relevance=1.0, coherence=0.5)
    assert admission_score(factors, BufferConfig()) == pytest.approx(0.4 * 1.4)


def test_threshold_rises_with_utilisation() -> None:
    """The threshold is base x (1 + 0.5 x utilisation), clamped to utilisation 0..1."""
    config = BufferConfig(base_threshold=0.2)
    assert threshold(0.0, config) == pytest.approx(0.2)
    assert threshold(1.0, config) == pytest.approx(0.3)
    assert threshold(5.0, config) == pytest.approx(0.3)


def test_weights_must_add_up_to_one() -> None:
    """A config whose salience weights do not sum to one is refused at construction."""
    with pytest.raises(ValueError, match="add up to 1"):
        BufferConfig.model_validate({"weights": {"relevance": 0.9}})


async def test_relevant_item_is_admitted_with_reasons() -> None:
    """An item matching the input is admitted, and the decision names its strong factors."""
    buffer = make_buffer(base_threshold=0.2)
    focus = Focus(input_text="plan the family vacation", tags=("vacation",))
    result = await buffer.add(item("Vacation planning with mom", tags=("vacation",)), focus=focus)
    assert result.outcome is Outcome.ADMITTED
    assert result.decision is not None
    assert result.decision.score >= result.decision.threshold
    assert "high_relevance" in result.decision.reasons
    assert "high_attention" in result.decision.reasons
    assert result.decision.reasons[-1] == "above_threshold"


async def test_irrelevant_item_is_refused_below_threshold() -> None:
    """An item with no relevance, urgency or attention is refused once the bar rises."""
    buffer = make_buffer(base_threshold=0.25)
    result = await buffer.add(item("quarterly tax forms"), focus=Focus(input_text="vacation"))
    assert result.outcome is Outcome.REFUSED
    assert result.reason.startswith("below_threshold")
    assert result.decision is not None
    assert result.decision.reasons[-1] == "below_threshold"
    assert len(buffer) == 0


async def test_fuller_buffer_demands_more() -> None:
    """The same item admitted into an empty buffer is refused by a nearly full one."""
    weak = item("quarterly tax forms")
    empty = make_buffer(base_threshold=0.2, max_items=4)
    assert (await empty.add(weak)).outcome is Outcome.ADMITTED
    full = make_buffer(base_threshold=0.2, max_items=4)
    for n in range(3):
        await full.add(item(f"note {n}", pinned=True))
    result = await full.add(weak)
    assert result.outcome is Outcome.REFUSED
    assert result.decision is not None
    assert result.decision.threshold > 0.2


async def test_pinned_item_is_admitted_whatever_its_score() -> None:
    """A pinned item passes admission and says so."""
    buffer = make_buffer(base_threshold=0.9)
    result = await buffer.add(item("core identity", pinned=True))
    assert result.outcome is Outcome.ADMITTED
    assert result.decision is not None
    assert result.decision.reasons[0] == "pinned"
    assert result.decision.reasons[-1] == "below_threshold_admitted_pinned"


async def test_urgent_tags_raise_urgency() -> None:
    """An item tagged urgent gets urgency 1.0."""
    buffer = make_buffer()
    result = await buffer.add(item("server on fire", tags=("urgent",)))
    assert result.decision is not None
    assert result.decision.factors.urgency == 1.0


async def test_old_items_have_lower_recency() -> None:
    """Recency halves every half-life (24 h by default) of the item's own time."""
    buffer = make_buffer()
    result = await buffer.add(item("last week's call", occurred_at=at(-86_400)), now=at(0))
    assert result.decision is not None
    assert result.decision.factors.recency == pytest.approx(0.5)


async def test_item_larger_than_the_buffer_is_refused_and_never_stored() -> None:
    """An item with more tokens than max_tokens is refused with a reason."""
    buffer = make_buffer(max_tokens=10)
    result = await buffer.add(item("word " * 11, pinned=True))
    assert result.outcome is Outcome.REFUSED
    assert result.reason.startswith("too_large: 11 tokens > max_tokens 10")
    assert len(buffer) == 0
    assert buffer.total_tokens == 0
    assert buffer.counters.refused == 1


async def test_no_room_beside_pinned_items_is_a_refusal() -> None:
    """When only pinned items could make room, the new item is refused, not forced in."""
    buffer = make_buffer(max_tokens=10)
    await buffer.add(item("a b c d e f g h", pinned=True))
    result = await buffer.add(item("x y z"))
    assert result.outcome is Outcome.REFUSED
    assert result.reason.startswith("no_room")
    assert buffer.total_tokens == 8


async def test_token_count_comes_from_the_counter_when_not_given() -> None:
    """An item without a token count is counted with the buffer's counter."""
    buffer = make_buffer()
    result = await buffer.add(item("one two three", tokens=None))
    assert result.tokens == 3


def test_the_mechanism_refuses_any_insertion_over_the_bounds() -> None:
    """Holding.put raises rather than ever exceed the bounds: the policy must make room first."""
    from prefrontal.buffer.holding import Holding
    from prefrontal.buffer.models import BufferItem, ItemSource
    from prefrontal.errors import WorkingMemoryError

    from .conftest import T0

    holding = Holding(BufferConfig(max_items=1, max_tokens=5))

    def held(item_id: str, tokens: int) -> BufferItem:
        return BufferItem(
            item_id=item_id,
            content="x",
            source=ItemSource.SYSTEM,
            tokens=tokens,
            priority=0.5,
            salience=0.5,
            added_at=T0,
            last_accessed_at=T0,
        )

    with pytest.raises(WorkingMemoryError, match="exceed"):
        holding.put(held("big", 6))
    holding.put(held("a", 5))
    with pytest.raises(WorkingMemoryError, match="exceed"):
        holding.put(held("b", 0))
    with pytest.raises(WorkingMemoryError, match="already held"):
        holding.put(held("a", 1))
    assert (len(holding.items), holding.tokens) == (1, 5)
