"""A phase record assembled unchecked is the record validation gives, to the byte.

:func:`prefrontal.traces.phase_records.phase_record` builds the runner's and
``end_turn``'s records without validating them; these tests hold it to
``PhaseRecord(...)`` with the same arguments: equal, and serialized alike
(a budget given as an ``int``, warnings as a list, a nested detail).
"""

from __future__ import annotations

from typing import Any

import pytest

from prefrontal.traces.models import ErrorRecord, PhaseRecord, PhaseStatus
from prefrontal.traces.phase_records import phase_record

CASES: list[dict[str, Any]] = [
    {
        "name": "episodic",
        "index": 3,
        "status": PhaseStatus.OK,
        "started_ms": 1.234,
        "duration_ms": 0.5,
        "budget_ms": 50,
    },
    {
        "name": "working_memory_init",
        "index": 10,
        "status": PhaseStatus.DEGRADED,
        "started_ms": 0,
        "duration_ms": 61.25,
        "budget_ms": 50.0,
        "items_loaded": 40,
        "tokens_loaded": 1_200,
        "items_dropped": 2,
        "tokens_dropped": 80,
        "attempts": 2,
        "warnings": ["took 61.3 ms, over its 50 ms budget"],
        "errors": (ErrorRecord(type="TimeoutError", message="slow", store="episodic"),),
        "detail": {
            "admitted": 3,
            "refused": [{"item_id": "m-1", "reason": "no room"}],
            "evicted": {"faded": 1},
            "themes": ["trip", "passport"],
            "coherence": 0.4321,
            "links": [],
        },
    },
    {
        "name": "exchange",
        "index": 1,
        "status": PhaseStatus.FAILED,
        "started_ms": 12.5,
        "duration_ms": 3,
        "budget_ms": 100.0,
        "warnings": (),
        "detail": {},
    },
]


@pytest.mark.parametrize("fields", CASES)
def test_an_assembled_record_is_the_validated_one(fields: dict[str, Any]) -> None:
    validated = PhaseRecord(**fields)
    assembled = phase_record(**fields)
    assert assembled == validated
    assert assembled.model_dump_json() == validated.model_dump_json()
    assert assembled.model_fields_set == set(PhaseRecord.model_fields)  # as assemble sets them
    assert PhaseRecord.model_validate_json(assembled.model_dump_json()) == assembled


def test_the_detail_is_a_copy_of_its_own() -> None:
    detail: dict[str, object] = {"items": 1}
    record = phase_record(
        name="x",
        index=1,
        status=PhaseStatus.OK,
        started_ms=0.0,
        duration_ms=0.0,
        budget_ms=1.0,
        detail=detail,
    )
    detail["items"] = 2
    assert record.detail == {"items": 1}
