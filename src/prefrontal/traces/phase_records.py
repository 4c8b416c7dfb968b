"""A phase's trace record built from values its caller already holds checked.

Every turn records each of its eleven phases, and ``end_turn`` each of its
steps, as a :class:`~prefrontal.traces.models.PhaseRecord`. Validating one
walks its ``detail`` and checks every field again (about 5 µs a record, against
2 µs assembled). :func:`phase_record` assembles it instead
(:func:`prefrontal.trusted.assemble`) from the runner's own values: a
name, an index, a status, times in ms, counts, warnings, errors and a
detail mapping. It converts what validation would convert (a budget or
time given as an ``int`` becomes a ``float``, the warnings a tuple, the
detail a dictionary of its own), so the record is equal to, and serializes
exactly as, ``PhaseRecord(...)`` given the same arguments
(``tests/unit/traces/test_phase_records.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from prefrontal.traces.models import ErrorRecord, PhaseRecord, PhaseStatus
from prefrontal.trusted import assemble


def phase_record(  # noqa: PLR0913
    *,
    name: str,
    index: int,
    status: PhaseStatus,
    started_ms: float,
    duration_ms: float,
    budget_ms: float,
    items_loaded: int = 0,
    tokens_loaded: int = 0,
    items_dropped: int = 0,
    tokens_dropped: int = 0,
    attempts: int = 1,
    warnings: Iterable[str] = (),
    errors: tuple[ErrorRecord, ...] = (),
    detail: Mapping[str, object] | None = None,
) -> PhaseRecord:
    """``PhaseRecord(**arguments)``, unchecked: every argument must be one its field accepts
    (``status`` a :class:`PhaseStatus`, ``errors`` a tuple of records, ``detail`` keyed by
    strings)."""
    return assemble(
        PhaseRecord,
        {
            "name": name,
            "index": int(index),
            "status": status,
            "started_ms": float(started_ms),
            "duration_ms": float(duration_ms),
            "budget_ms": float(budget_ms),
            "items_loaded": int(items_loaded),
            "tokens_loaded": int(tokens_loaded),
            "items_dropped": int(items_dropped),
            "tokens_dropped": int(tokens_dropped),
            "attempts": int(attempts),
            "warnings": tuple(warnings),
            "errors": tuple(errors),
            "detail": {} if detail is None else dict(detail),
        },
    )
