"""OpenTelemetry: one turn is twelve spans, the phases children of the turn, placed in time."""

from __future__ import annotations

import anyio
import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from prefrontal import Orchestrator, OrchestratorConfig, Stores
from prefrontal.demo import seed
from prefrontal.phases import PHASE_NAMES
from prefrontal.testing import DelayedStore, FailingStore
from prefrontal.traces.otel import OpenTelemetryObserver
from tests.conftest import fixed_clock
from tests.unit.traces.helpers import demo_turn, request, run


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def spans_by_name(exporter: InMemorySpanExporter) -> dict[str, ReadableSpan]:
    return {s.name: s for s in exporter.get_finished_spans()}


def test_one_turn_is_twelve_spans_with_the_turn_as_parent(
    exporter: InMemorySpanExporter, provider: TracerProvider
) -> None:
    """A turn span and eleven phase spans, each phase's parent the turn span."""
    result = run(lambda: demo_turn([OpenTelemetryObserver(provider)]))
    spans = exporter.get_finished_spans()
    assert len(spans) == 12
    turn = spans_by_name(exporter)["prefrontal.turn"]
    phases = [s for s in spans if s is not turn]
    assert sorted(s.name for s in phases) == sorted(f"prefrontal.{n}" for n in PHASE_NAMES)
    assert turn.context is not None
    for span in phases:
        assert span.parent is not None
        assert span.parent.span_id == turn.context.span_id
        assert span.context is not None
        assert span.context.trace_id == turn.context.trace_id
    assert turn.attributes is not None
    assert turn.attributes["prefrontal.turn.id"] == result.trace.turn_id
    assert turn.attributes["prefrontal.turn.tokens"] == result.bundle.total_tokens
    assert turn.attributes["prefrontal.turn.items"] == len(result.bundle.fragments)
    assert turn.attributes["prefrontal.turn.status"] == "ok"


def test_phase_spans_carry_tokens_items_and_status_and_sit_inside_the_turn(
    exporter: InMemorySpanExporter, provider: TracerProvider
) -> None:
    """Each phase span has its record's counts and lies within the turn span's time."""
    result = run(lambda: demo_turn([OpenTelemetryObserver(provider)]))
    spans = spans_by_name(exporter)
    turn = spans["prefrontal.turn"]
    assert turn.start_time is not None
    assert turn.end_time is not None
    for record in result.trace.phases:
        span = spans[f"prefrontal.{record.name}"]
        assert span.attributes is not None
        assert span.attributes["prefrontal.phase.status"] == record.status.value
        assert span.attributes["prefrontal.phase.items"] == record.items_loaded
        assert span.attributes["prefrontal.phase.tokens"] == record.tokens_loaded
        assert span.start_time is not None
        assert span.end_time is not None
        assert turn.start_time <= span.start_time <= span.end_time <= turn.end_time


def test_the_turn_span_is_a_child_of_the_callers_span(
    exporter: InMemorySpanExporter, provider: TracerProvider
) -> None:
    """A turn started under the application's span nests under it."""
    tracer = provider.get_tracer("app")

    async def go() -> None:
        with tracer.start_as_current_span("handle_request"):
            await demo_turn([OpenTelemetryObserver(provider)])

    run(go)
    spans = spans_by_name(exporter)
    app, turn = spans["handle_request"], spans["prefrontal.turn"]
    assert app.context is not None
    assert turn.parent is not None
    assert turn.parent.span_id == app.context.span_id


def test_a_failed_phase_span_has_an_error_status(
    exporter: InMemorySpanExporter, provider: TracerProvider
) -> None:
    """A store failure marks its phase span as an error with the error as an event."""

    async def go() -> None:
        stores = Stores.in_memory()
        await seed(stores)
        broken = stores.replace(semantic=FailingStore(stores.semantic))
        await demo_turn([OpenTelemetryObserver(provider)], stores=broken)

    run(go)
    span = spans_by_name(exporter)["prefrontal.semantic"]
    assert span.status.status_code is StatusCode.ERROR
    assert [e.name for e in span.events] == ["error"]


def test_a_cancelled_turn_ends_its_span_with_an_error(
    exporter: InMemorySpanExporter, provider: TracerProvider
) -> None:
    """Cancelling ``start_turn`` still ends the turn span, marked cancelled."""

    async def go() -> None:
        stores = Stores.in_memory()
        await seed(stores)
        slow = stores.replace(episodic=DelayedStore(stores.episodic, 5.0))
        config = OrchestratorConfig(deadline_ms=10_000)
        orchestrator = Orchestrator(
            slow, config, clock=fixed_clock, observers=[OpenTelemetryObserver(provider)]
        )
        with anyio.move_on_after(0.05):
            await orchestrator.start_turn(request())

    run(go)
    turn = spans_by_name(exporter)["prefrontal.turn"]
    assert turn.status.status_code is StatusCode.ERROR
    assert turn.status.description == "cancelled"


def test_concurrent_turns_keep_their_phases_apart(
    exporter: InMemorySpanExporter, provider: TracerProvider
) -> None:
    """Two turns at once on one observer: each phase span's parent is its own turn's span."""
    observer = OpenTelemetryObserver(provider)

    async def go() -> None:
        stores = Stores.in_memory()
        await seed(stores)
        orchestrator = Orchestrator(stores, clock=fixed_clock, observers=[observer])
        async with anyio.create_task_group() as tg:
            for session in ("s1", "s2"):
                tg.start_soon(orchestrator.start_turn, request(session_id=session))

    run(go)
    spans = exporter.get_finished_spans()
    assert len(spans) == 24
    turns = {
        s.context.span_id: s.attributes["prefrontal.session.id"]
        for s in spans
        if s.name == "prefrontal.turn" and s.context is not None and s.attributes is not None
    }
    assert sorted(str(v) for v in turns.values()) == ["s1", "s2"]
    for span in spans:
        if span.name != "prefrontal.turn":
            assert span.parent is not None
            assert span.parent.span_id in turns
    per_turn = [sum(1 for s in spans if s.parent and s.parent.span_id == t) for t in turns]
    assert per_turn == [11, 11]
