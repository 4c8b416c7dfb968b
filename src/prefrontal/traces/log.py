"""``LogObserver``: turns as structlog events, one per phase and one per turn.

Every event is bound to the turn, agent, user and session ids, and goes to
the logger named ``prefrontal.turns``::

    orchestrator = Orchestrator(stores, observers=[LogObserver()])

Events: ``turn_started`` (debug), ``phase_ended`` (info; warning when the
phase did not end ``ok``), ``turn_ended`` (info; warning when degraded),
``turn_cancelled`` (warning). Content (the user's input, the fragments'
text) is logged only with ``log_content=True``; ids, counts, timings and
statuses always are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import structlog

from prefrontal.traces.models import PhaseRecord, PhaseStatus, TurnStatus, TurnTrace
from prefrontal.traces.observe import TurnIdentity

if TYPE_CHECKING:
    from prefrontal.bundle.models import ContextBundle

LOGGER_NAME = "prefrontal.turns"


def bound(logger: Any, turn: TurnIdentity | TurnTrace) -> Any:
    """``logger`` bound to the ids of ``turn``."""
    return logger.bind(
        turn_id=turn.turn_id,
        parent_turn_id=turn.parent_turn_id,
        agent_id=turn.agent_id,
        user_id=turn.user_id,
        session_id=turn.session_id,
    )


def phase_fields(record: PhaseRecord) -> dict[str, Any]:
    """What a ``phase_ended`` event says about the phase (never content)."""
    return {
        "phase": record.name,
        "index": record.index,
        "status": record.status.value,
        "started_ms": record.started_ms,
        "duration_ms": record.duration_ms,
        "budget_ms": record.budget_ms,
        "items_loaded": record.items_loaded,
        "tokens_loaded": record.tokens_loaded,
        "items_dropped": record.items_dropped,
        "tokens_dropped": record.tokens_dropped,
        "attempts": record.attempts,
        "warnings": list(record.warnings),
        "errors": [f"{e.type}: {e.message}" for e in record.errors],
    }


def turn_fields(trace: TurnTrace) -> dict[str, Any]:
    """What a ``turn_ended`` event says about the turn (never content)."""
    return {
        "status": trace.status.value,
        "duration_ms": trace.duration_ms,
        "total_tokens": trace.total_tokens,
        "total_budget": trace.total_budget,
        "sections": {s.section: s.used for s in trace.sections},
        "dropped": len(trace.dropped),
        "warnings": len(trace.warnings),
        "errors": [f"{e.type}: {e.message}" for e in trace.errors],
        "ready_for_router": trace.ready_for_router,
        "checksum": trace.checksum,
    }


def fragment_fields(bundle: ContextBundle) -> list[dict[str, Any]]:
    """The fragments with their text, for ``log_content=True``."""
    return [
        {
            "section": f.section.value,
            "store": f.provenance.store,
            "item_ids": list(f.provenance.item_ids),
            "tokens": f.tokens,
            "text": f.text,
        }
        for f in bundle.fragments
    ]


class LogObserver:
    """Logs every turn through structlog (see the module's docstring)."""

    def __init__(self, logger: Any = None, *, log_content: bool = False) -> None:
        self.logger = logger if logger is not None else structlog.get_logger(LOGGER_NAME)
        self.log_content = log_content

    def turn_started(self, turn: TurnIdentity, user_input: str) -> None:
        content = {"user_input": user_input} if self.log_content else {}
        bound(self.logger, turn).debug("turn_started", **content)

    def phase_ended(self, turn: TurnIdentity, record: PhaseRecord) -> None:
        log = bound(self.logger, turn)
        emit = log.info if record.status is PhaseStatus.OK else log.warning
        emit("phase_ended", **phase_fields(record))

    def turn_ended(self, trace: TurnTrace, bundle: ContextBundle) -> None:
        log = bound(self.logger, trace)
        emit = log.info if trace.status is TurnStatus.OK else log.warning
        content = {"fragments": fragment_fields(bundle)} if self.log_content else {}
        emit("turn_ended", **turn_fields(trace), **content)

    def turn_cancelled(self, turn: TurnIdentity) -> None:
        bound(self.logger, turn).warning("turn_cancelled")
