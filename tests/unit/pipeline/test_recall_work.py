"""Phases 5 and 6 judge and render each candidate once: tenancy screened by one lookup per
type, a memory's line remembered across its copies, the rerank as ``rerank_score`` scores."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from prefrontal.phases import recall
from prefrontal.phases.origins import memory_line
from prefrontal.retrieval.settings import RerankWeights
from prefrontal.stores import tenancy
from prefrontal.stores.long_term import MemoryItem, ScoredMemory
from prefrontal.stores.tenancy import Scope, Tenant, may_see, seen_by
from prefrontal.traces.models import PhaseStatus
from tests.conftest import FIXED_NOW

ALICE = Tenant(agent_id="agent", user_id="alice")


def item(number: int, agent: str = "agent", user: str = "alice", **fields: Any) -> MemoryItem:
    return MemoryItem(
        item_id=f"m-{number}",
        agent_id=agent,
        user_id=user,
        content=f"the payment review {number}",
        created_at=FIXED_NOW - timedelta(days=number),
        **fields,
    )


def mixed() -> list[object]:
    """Items and hits of every owner the screen tells apart, and values naming no owner."""
    owners = [
        ("agent", "alice", Scope.PRIVATE),
        ("agent", "bob", Scope.PRIVATE),
        ("agent", "bob", Scope.SHARED),
        ("other", "alice", Scope.SHARED),
    ]
    items = [item(n, agent, user, scope=scope) for n, (agent, user, scope) in enumerate(owners)]
    hits = [ScoredMemory(item=i, score=1.0) for i in items]
    return [*items, *hits, 3, None, "text", PhaseStatus.OK, *reversed(items)]


def test_seen_by_keeps_what_may_see_keeps_in_order() -> None:
    """The list screen keeps exactly the values ``may_see`` judges visible, in their order."""
    values = mixed()
    assert seen_by(values, ALICE) == [v for v in values if may_see(v, ALICE)]
    bob = Tenant(agent_id="agent", user_id="bob")
    assert seen_by(values, bob) == [v for v in values if may_see(v, bob)]


def test_a_store_answer_is_screened_with_one_lookup_per_run_of_a_type(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sixty hits of one type cost two screen lookups (the hit's type and its item's), not
    one or more per hit."""
    lookups: list[type] = []
    original = tenancy.screen_for

    def counted(cls: type) -> tenancy.Screen:
        lookups.append(cls)
        return original(cls)

    monkeypatch.setattr(tenancy, "screen_for", counted)
    hits = [ScoredMemory(item=item(n), score=1.0) for n in range(60)]
    assert seen_by(hits, ALICE) == hits
    assert lookups == [ScoredMemory, MemoryItem]


def test_a_copy_with_a_new_recall_count_renders_the_very_same_line() -> None:
    """The line of a memory is worked out once for its content and origin: a copy of the item
    (as recording a recall makes) gives the same string object."""
    first = item(1, metadata={"speaker": "Maya", "source": "import"})
    copy = first.model_copy(update={"recall_count": 4})
    assert memory_line(copy) is memory_line(first)
    assert memory_line(first).startswith("(from import) Maya: ")


def test_metadata_values_equal_as_keys_still_render_apart() -> None:
    """``1`` and ``True`` are one key to a cache: each still renders as itself."""
    one = item(1, metadata={"speaker": 1})
    true = item(1, metadata={"speaker": True})
    assert memory_line(one).startswith("1: ")
    assert memory_line(true).startswith("True: ")


def test_the_rerank_order_scores_as_rerank_score_does() -> None:
    """Each candidate's rerank score is ``rerank_score`` of its relevance over the best, to the
    bit, best first and ties by item id."""
    weights = RerankWeights()
    candidates = [
        (relevance, item(n, importance=importance, recall_count=count))
        for n, (relevance, importance, count) in enumerate(
            [(3.0, 0.5, 0), (1.5, 0.9, 2), (3.0, 0.5, 0), (0.25, 0.1, 7), (2.2, 0.3, 1)]
        )
    ]
    order = recall._rerank_order(candidates, FIXED_NOW, weights)
    expected = sorted(
        (
            (recall.rerank_score(r / 3.0, i, FIXED_NOW, weights), index)
            for index, (r, i) in enumerate(candidates)
        ),
        key=lambda pair: (-pair[0], candidates[pair[1]][1].item_id),
    )
    assert order == expected
