"""The memory rerank: relevance first, age only scales it, weights checked when made."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefrontal.errors import ConfigurationError
from prefrontal.phases.recall import rerank, rerank_score
from prefrontal.retrieval.settings import RerankWeights
from prefrontal.stores.long_term import MemoryItem, MemoryKind, ScoredMemory

NOW = datetime(2024, 6, 1, 12, tzinfo=UTC)
WEIGHTS = RerankWeights()


def memory(item_id: str, age_days: float) -> MemoryItem:
    """An episodic memory of the test's user that happened ``age_days`` before ``NOW``."""
    when = NOW - timedelta(days=age_days)
    return MemoryItem(
        item_id=item_id,
        agent_id="agent",
        user_id="user",
        kind=MemoryKind.EVENT,
        content=f"memory {item_id}",
        occurred_at=when,
        created_at=when,
    )


def hit(item_id: str, age_days: float, score: float) -> ScoredMemory:
    return ScoredMemory(item=memory(item_id, age_days), score=score)


def test_equal_matches_come_newest_first() -> None:
    """Of two equally relevant memories, the newer ranks first."""
    ranked = rerank([hit("old", 200, 2.0), hit("new", 1, 2.0)], NOW, WEIGHTS)
    assert [h.item.item_id for h in ranked] == ["new", "old"]


def test_a_clearly_stronger_old_match_beats_a_new_weaker_one() -> None:
    """A match from a year ago that is 20% more relevant outranks yesterday's weaker one."""
    ranked = rerank([hit("new", 1, 0.8), hit("old", 365, 1.0)], NOW, WEIGHTS)
    assert [h.item.item_id for h in ranked] == ["old", "new"]


def test_scores_are_relative_to_the_best_hit() -> None:
    """Scaling every hit's score by the same factor leaves the rerank scores unchanged."""
    hits = [hit("a", 3, 4.0), hit("b", 40, 1.0)]
    scaled = [h.model_copy(update={"score": h.score * 10}) for h in hits]
    assert [h.score for h in rerank(hits, NOW, WEIGHTS)] == pytest.approx(
        [h.score for h in rerank(scaled, NOW, WEIGHTS)]
    )


@given(
    relevance=st.floats(0.0, 1.0),
    ages=st.tuples(st.floats(0, 3_650), st.floats(0, 3_650)),
)
def test_what_recency_adds_is_proportional_to_relevance(
    relevance: float, ages: tuple[float, float]
) -> None:
    """Age moves a score by at most the recency share of its relevance term: nothing at relevance 0."""
    young, old = (memory(str(i), age) for i, age in enumerate(sorted(ages)))
    gap = rerank_score(relevance, young, NOW, WEIGHTS) - rerank_score(relevance, old, NOW, WEIGHTS)
    assert 0.0 <= gap <= WEIGHTS.relevance * WEIGHTS.recency * relevance + 1e-12


@given(
    stronger=st.floats(0.05, 1.0),
    ratio=st.floats(0.0, 0.999),
    ages=st.tuples(st.floats(0, 3_650), st.floats(0, 3_650)),
)
def test_a_recent_match_never_passes_one_more_relevant_by_more_than_the_recency_share(
    stronger: float, ratio: float, ages: tuple[float, float]
) -> None:
    """Whatever their ages, a hit more than 1/(1-recency) times as relevant as another ranks above it."""
    weaker = stronger * ratio * (1.0 - WEIGHTS.recency)
    strong, weak = memory("strong", ages[0]), memory("weak", ages[1])
    assert rerank_score(stronger, strong, NOW, WEIGHTS) > rerank_score(weaker, weak, NOW, WEIGHTS)


@pytest.mark.parametrize(
    "weights",
    [{"recency": 1.5}, {"recency": -0.1}, {"relevance": -1.0}, {"novelty": -0.01}],
)
def test_weights_out_of_range_are_refused(weights: dict[str, float]) -> None:
    """A recency share outside 0-1, or a negative weight, is a configuration error."""
    with pytest.raises(ConfigurationError):
        RerankWeights(**weights)


@given(
    found=st.lists(
        st.tuples(
            st.floats(0.0, 5.0),
            st.floats(-30, 3_650),  # a negative age: an item from after the turn's start
            st.booleans(),
            st.integers(0, 2_000),
            st.floats(0.0, 1.0),
        ),
        max_size=12,
    ),
    recency=st.floats(0.0, 1.0),
)
def test_the_rerank_gives_each_hit_its_rerank_score_exactly(
    found: list[tuple[float, float, bool, int, float]], recency: float
) -> None:
    """The rerank's inlined arithmetic is :func:`rerank_score` of the relevance over the best,
    to the last bit, and orders by score then item id."""
    weights = RerankWeights(recency=recency)
    hits = []
    for n, (relevance, age, dated, recalled, importance) in enumerate(found):
        item = memory(f"m{n % 5}", age).model_copy(
            update={
                "recall_count": recalled,
                "importance": importance,
                "occurred_at": NOW - timedelta(days=age) if dated else None,
            }
        )
        hits.append(ScoredMemory(item=item, score=relevance))
    best = max((h.score for h in hits), default=0.0) or 1.0
    expected = sorted(
        (-rerank_score(h.score / best, h.item, NOW, weights), h.item.item_id, n)
        for n, h in enumerate(hits)
    )
    reranked = rerank(hits, NOW, weights)
    assert [(h.score, h.item) for h in reranked] == [
        (-score, hits[n].item) for score, _, n in expected
    ]


def test_equal_scores_rank_by_item_id_then_as_given() -> None:
    """A tie is ordered by the ids, and equal ids keep the order they came in."""
    hits = [hit("b", 3, 0.5), hit("a", 3, 0.5), hit("c", 1, 0.9), hit("a", 3, 0.5)]
    hits[3] = hits[3].model_copy(update={"item": hits[3].item.model_copy(update={"content": "2"})})
    ranked = rerank(hits, NOW, WEIGHTS)
    assert [h.item.item_id for h in ranked] == ["c", "a", "a", "b"]
    assert [h.item.content for h in ranked[1:3]] == ["memory a", "2"]
