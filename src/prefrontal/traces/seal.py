"""Sealing a trace: the phase records in order, and the status, warnings and errors they add up to.

Pure functions: the last phase seals the trace it writes, and the
orchestrator seals one only when that phase could not (it timed out or
crashed before writing).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from prefrontal.traces.models import ErrorRecord, PhaseRecord, PhaseStatus, TurnStatus

__all__ = ["FAILED", "Sealing", "degraded", "error_record", "sealing"]

FAILED = (PhaseStatus.FAILED, PhaseStatus.TIMEOUT, PhaseStatus.CANCELLED)
"""A phase that ended so makes the turn degraded."""
MAX_MESSAGE = 2_000


@dataclass(frozen=True, slots=True)
class Sealing:
    """What a turn's phase records add up to: the fields of its trace that they decide."""

    phases: tuple[PhaseRecord, ...]
    """The records in phase order."""
    status: TurnStatus
    warnings: tuple[str, ...]
    """Each record's warnings, prefixed with its phase's name, in phase order."""
    errors: tuple[ErrorRecord, ...]


def sealing(records: Iterable[PhaseRecord]) -> Sealing:
    """The records in phase order, and the turn's status, warnings and errors they add up to."""
    ordered = tuple(sorted(records, key=lambda r: r.index))
    return Sealing(
        phases=ordered,
        status=TurnStatus.DEGRADED if degraded(ordered) else TurnStatus.OK,
        warnings=tuple(f"{r.name}: {w}" for r in ordered for w in r.warnings),
        errors=tuple(e for r in ordered for e in r.errors),
    )


def degraded(records: Iterable[PhaseRecord]) -> bool:
    """True when a phase failed, timed out or was cancelled."""
    return any(r.status in FAILED for r in records)


def error_record(error: BaseException, attempts: int = 1) -> ErrorRecord:
    """What the trace says of an error: the first real one inside any exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    message = str(error) or type(error).__name__
    return ErrorRecord(
        type=type(error).__name__,
        message=message[:MAX_MESSAGE],
        store=getattr(error, "store", None),
        attempts=attempts,
    )
