"""Ingestion through the stores' public APIs, and scoring a context against the evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from prefrontal.evaluation.baselines import Bm25Baseline, fill, line, recency
from prefrontal.evaluation.ingest import ingest_notes, ingest_turns, turn_id
from prefrontal.evaluation.locomo import load
from prefrontal.evaluation.scoring import Scored, covered, recall, summarise
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Tenant

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id="listener", user_id="test-1")


async def test_turns_go_in_as_history_and_as_episodic_items(sample_file: Path) -> None:
    """Each turn is a conversation turn and an episodic item under one id, with its metadata."""
    conv = load(sample_file).conversations[0]
    stores = Stores.in_memory()
    coverage = await ingest_turns(stores, conv, TENANT)
    history = await stores.conversation.recent(TENANT, limit=100)
    assert [t.item_id for t in history] == [turn_id("test-1", t.dia_id) for t in conv.turns]
    [item] = await stores.episodic.get(TENANT, [turn_id("test-1", "D1:2")])
    assert item.metadata == {"speaker": "Ben", "date": "3 March 2024", "dia_id": "D1:2"}
    assert item.thread_id == "test-1:session_1" and item.position == 1
    assert coverage[item.item_id] == frozenset({"D1:2"})


async def test_an_observation_covers_its_turn_and_a_summary_none(sample_file: Path) -> None:
    """Notes are semantic items; only an observation stands for a turn."""
    conv = load(sample_file).conversations[0]
    stores = Stores.in_memory()
    coverage = await ingest_notes(stores, conv, TENANT)
    by_kind = {key.split(":")[1]: value for key, value in coverage.items()}
    assert by_kind["observation"]
    assert by_kind["summary"] == frozenset()
    assert sorted(d for v in coverage.values() for d in v) == ["D1:2", "D1:5", "D2:1"]


def test_recall_is_the_share_of_evidence_held() -> None:
    """Half the evidence held is a recall of 0.5; coverage maps item ids to turns."""
    held = covered(["a", "b", "x"], {"a": frozenset({"D1:1"}), "b": frozenset()})
    assert held == {"D1:1"}
    assert recall(("D1:1", "D1:2"), held) == 0.5


def test_summaries_average_per_category_and_overall() -> None:
    """Category means, then the means over categories 1-4 and 1-5 (per question)."""
    scores = [Scored(1, 1.0), Scored(1, 0.0), Scored(4, 1.0), Scored(5, 0.0)]
    summary = summarise(scores)
    assert summary["1"] == 0.5 and summary["4"] == 1.0 and summary["2"] == 0.0
    assert summary["overall_1_4"] == round(2 / 3, 4)
    assert summary["overall_1_5"] == 0.5


def test_baselines_fill_the_budget_in_their_own_order(sample_file: Path) -> None:
    """Recency keeps the latest turns; BM25 the best match; neither exceeds the budget."""
    turns = load(sample_file).conversations[0].turns
    count = len  # one "token" per character keeps the arithmetic visible
    latest = recency(turns, 80, count)
    assert latest[0].dia_id == "D2:4"
    assert len("\n".join(line(t) for t in latest)) <= 80
    best = Bm25Baseline(turns).select("puppy name", 60, count)
    assert best[0].dia_id == "D1:2"
    assert fill(turns, 5, count) == []
