"""``OpenTelemetryObserver``: a span per turn and per phase (extra: ``prefrontal[otel]``).

Spans go through the standard OpenTelemetry API, so any SDK set-up and
exporter works::

    from prefrontal.traces.otel import OpenTelemetryObserver

    orchestrator = Orchestrator(stores, observers=[OpenTelemetryObserver()])

The turn span (``prefrontal.turn``) is a child of whatever span is current
when ``start_turn`` is called; each phase span (``prefrontal.<phase>``) is a
child of the turn span, placed on the time axis where the phase ran, so
concurrent phases overlap in the trace viewer. Failed and timed-out phases
and cancelled turns get an error status; a degraded turn does not (it
still produced context): its ``prefrontal.turn.status`` attribute says so.
Attributes carry ids, counts, tokens and statuses, never content.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

try:
    from opentelemetry import trace
    from opentelemetry.trace import Span, Status, StatusCode, TracerProvider
    from opentelemetry.util.types import AttributeValue
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "prefrontal.traces.otel needs OpenTelemetry: pip install 'prefrontal[otel]'"
    ) from error

from prefrontal.traces.models import PhaseRecord, PhaseStatus, TurnTrace
from prefrontal.traces.observe import TurnIdentity

if TYPE_CHECKING:
    from prefrontal.bundle.models import ContextBundle

TRACER_NAME = "prefrontal"
TURN_SPAN = "prefrontal.turn"
ERROR_STATUSES = (PhaseStatus.FAILED, PhaseStatus.TIMEOUT, PhaseStatus.CANCELLED)
Attributes = dict[str, AttributeValue]


@dataclass(frozen=True, slots=True)
class _OpenTurn:
    span: Span
    start_ns: int


def _version() -> str:
    try:
        return version("prefrontal")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


def _ns(ms: float) -> int:
    return int(ms * 1_000_000)


def turn_attributes(turn: TurnIdentity) -> Attributes:
    """The ids a turn span starts with."""
    attributes: Attributes = {
        "prefrontal.turn.id": turn.turn_id,
        "prefrontal.agent.id": turn.agent_id,
        "prefrontal.user.id": turn.user_id,
        "prefrontal.session.id": turn.session_id,
    }
    if turn.parent_turn_id is not None:
        attributes["prefrontal.turn.parent_id"] = turn.parent_turn_id
    return attributes


def outcome_attributes(trace: TurnTrace, bundle: ContextBundle) -> Attributes:
    """What a turn span says when the turn ends."""
    return {
        "prefrontal.turn.status": trace.status.value,
        "prefrontal.turn.tokens": trace.total_tokens,
        "prefrontal.turn.budget": trace.total_budget,
        "prefrontal.turn.items": len(bundle.fragments),
        "prefrontal.turn.dropped": len(trace.dropped),
        "prefrontal.turn.warnings": len(trace.warnings),
        "prefrontal.turn.ready_for_router": trace.ready_for_router,
    }


def phase_attributes(record: PhaseRecord) -> Attributes:
    """What a phase span says: status, counts, tokens, timing."""
    return {
        "prefrontal.phase.name": record.name,
        "prefrontal.phase.index": record.index,
        "prefrontal.phase.status": record.status.value,
        "prefrontal.phase.items": record.items_loaded,
        "prefrontal.phase.tokens": record.tokens_loaded,
        "prefrontal.phase.items_dropped": record.items_dropped,
        "prefrontal.phase.tokens_dropped": record.tokens_dropped,
        "prefrontal.phase.attempts": record.attempts,
        "prefrontal.phase.budget_ms": record.budget_ms,
        "prefrontal.phase.over_budget": record.over_budget,
    }


class OpenTelemetryObserver:
    """Emits a span per turn and per phase (see the module's docstring).

    ``tracer_provider`` defaults to the global one.
    """

    def __init__(self, tracer_provider: TracerProvider | None = None) -> None:
        self.tracer = trace.get_tracer(TRACER_NAME, _version(), tracer_provider)
        self._open: dict[str, _OpenTurn] = {}

    def turn_started(self, turn: TurnIdentity, user_input: str) -> None:
        start = time.time_ns()
        span = self.tracer.start_span(TURN_SPAN, start_time=start, attributes=turn_attributes(turn))
        self._open[turn.turn_id] = _OpenTurn(span, start)

    def phase_ended(self, turn: TurnIdentity, record: PhaseRecord) -> None:
        parent = self._open.get(turn.turn_id)
        if parent is None:
            return
        start = parent.start_ns + _ns(record.started_ms)
        span = self.tracer.start_span(
            f"prefrontal.{record.name}",
            context=trace.set_span_in_context(parent.span),
            start_time=start,
            attributes=phase_attributes(record),
        )
        for warning in record.warnings:
            span.add_event("warning", {"message": warning}, timestamp=start)
        for error in record.errors:
            span.add_event("error", {"error.type": error.type, "error.message": error.message})
        if record.status in ERROR_STATUSES:
            span.set_status(Status(StatusCode.ERROR, record.status.value))
        span.end(end_time=start + _ns(record.duration_ms))

    def turn_ended(self, trace: TurnTrace, bundle: ContextBundle) -> None:
        opened = self._open.pop(trace.turn_id, None)
        if opened is None:
            return
        opened.span.set_attributes(outcome_attributes(trace, bundle))
        opened.span.end()

    def turn_cancelled(self, turn: TurnIdentity) -> None:
        opened = self._open.pop(turn.turn_id, None)
        if opened is None:
            return
        opened.span.set_status(Status(StatusCode.ERROR, "cancelled"))
        opened.span.end()
