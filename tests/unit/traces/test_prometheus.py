"""Prometheus: turns, phases, tokens, drops and buffer changes, read back from the registry."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

pytest.importorskip("prometheus_client")

from prometheus_client import CollectorRegistry

from prefrontal import Stores, TurnResult
from prefrontal.demo import seed
from prefrontal.testing import FailingStore
from prefrontal.traces.models import PhaseRecord, PhaseStatus
from prefrontal.traces.prometheus import PrometheusObserver, reason_label
from tests.unit.traces.helpers import demo_turn, run


class Turn:
    turn_id = "t1"
    parent_turn_id = None
    agent_id = "atlas"
    user_id = "maya"
    session_id = "s1"
    started_at = datetime(2026, 11, 20, tzinfo=UTC)


def value(registry: CollectorRegistry, name: str, **labels: str) -> float:
    found = registry.get_sample_value(f"prefrontal_{name}", labels)
    return 0.0 if found is None else found


def two_turns(observer: PrometheusObserver) -> tuple[TurnResult, TurnResult]:
    async def go() -> tuple[TurnResult, TurnResult]:
        ok = await demo_turn([observer])
        stores = Stores.in_memory()
        await seed(stores)
        broken = stores.replace(semantic=FailingStore(stores.semantic))
        degraded = await demo_turn([observer], stores=broken)
        return ok, degraded

    return run(go)


def test_turns_and_phases_are_counted_by_status() -> None:
    """Each turn counts under its status, each phase under its name and status."""
    registry = CollectorRegistry()
    two_turns(PrometheusObserver(registry))
    assert value(registry, "turns_total", status="ok") == 1
    assert value(registry, "turns_total", status="degraded") == 1
    assert value(registry, "turn_duration_seconds_count") == 2
    assert value(registry, "phases_total", phase="semantic", status="failed") == 1
    assert value(registry, "phases_total", phase="semantic", status="ok") == 1
    assert value(registry, "phase_duration_seconds_count", phase="episodic") == 2


def test_tokens_per_section_as_allocated_and_used() -> None:
    """Section histograms sum the tokens each section was given and used."""
    registry = CollectorRegistry()
    ok, degraded = two_turns(PrometheusObserver(registry))
    for section in ("consciousness", "episodic"):
        used = sum(s.used for t in (ok, degraded) for s in t.trace.sections if s.section == section)
        assert value(registry, "section_tokens_sum", section=section, kind="used") == used
    context = ok.bundle.total_tokens + degraded.bundle.total_tokens
    assert value(registry, "context_tokens_sum") == context
    assert value(registry, "section_tokens_sum", section="semantic", kind="allocated") == sum(
        s.allocated for s in ok.trace.sections if s.section == "semantic"
    )


def test_dropped_fragments_are_counted_with_bounded_reasons() -> None:
    """A small budget drops fragments; the counter's reasons carry no item ids."""
    registry = CollectorRegistry()
    result = run(lambda: demo_turn([PrometheusObserver(registry)], token_budget=300))
    assert result.trace.dropped
    samples = [
        s
        for m in registry.collect()
        if m.name == "prefrontal_dropped"
        for s in m.samples
        if s.name.endswith("_total")
    ]
    assert sum(s.value for s in samples) == len(result.trace.dropped)
    assert {s.labels["reason"] for s in samples} <= {
        "duplicate",
        "over budget",
        "trimmed",
        "trimmed to fit the rendered total",
    }


def test_working_memory_items_admissions_evictions_and_coherence() -> None:
    """Phase 10's record feeds the buffer metrics, including what the buffer reports."""
    registry = CollectorRegistry()
    observer = PrometheusObserver(registry)
    record = PhaseRecord(
        name="working_memory_init",
        index=10,
        status=PhaseStatus.OK,
        started_ms=10.0,
        duration_ms=1.5,
        budget_ms=50.0,
        items_loaded=12,
        detail={"admitted": 5, "evicted": {"faded": 2, "capacity": 1}, "coherence": 0.64},
    )
    observer.phase_ended(Turn(), record)
    assert value(registry, "working_memory_items_sum") == 12
    assert value(registry, "working_memory_admissions_total") == 5
    assert value(registry, "working_memory_evictions_total", reason="faded") == 2
    assert value(registry, "working_memory_evictions_total", reason="capacity") == 1
    assert value(registry, "session_coherence_sum") == pytest.approx(0.64)
    assert value(registry, "session_coherence_bucket", le="0.7") == 1


def test_cancelled_turns_are_counted() -> None:
    """``turn_cancelled`` counts a cancelled turn."""
    registry = CollectorRegistry()
    PrometheusObserver(registry).turn_cancelled(Turn())
    assert value(registry, "turns_cancelled_total") == 1


def test_reason_label_cuts_item_ids() -> None:
    """Reasons become labels without the ids that would make them unbounded."""
    assert reason_label("duplicate of ep-03") == "duplicate"
    assert reason_label("over budget") == "over budget"
    assert reason_label("") == "unknown"


def test_memory_recalls_count_searches_and_buffer_reuse() -> None:
    """A session's first turn searches; the next, on the same topic, reuses the buffer."""
    registry = CollectorRegistry()
    observer = PrometheusObserver(registry)

    async def go() -> None:
        stores = Stores.in_memory()
        await seed(stores)
        for _ in range(2):
            await demo_turn([observer], stores=stores)

    run(go)
    for phase in ("episodic", "semantic"):
        assert value(registry, "memory_recalls_total", phase=phase, mode="search") == 1
        assert value(registry, "memory_recalls_total", phase=phase, mode="reuse") == 1
    assert value(registry, "memory_recalls_total", phase="finalize", mode="search") == 0
