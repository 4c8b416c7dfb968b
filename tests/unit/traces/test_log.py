"""Structured logs: one event per phase and per turn, bound to ids, content only when asked."""

from __future__ import annotations

import io
import json
from collections.abc import MutableMapping
from typing import Any

import pytest
from structlog.testing import capture_logs

import prefrontal.logging
from prefrontal import Stores
from prefrontal.demo import SAMPLE_INPUT, seed
from prefrontal.testing import FailingStore
from prefrontal.traces.log import LogObserver
from tests.unit.traces.helpers import demo_turn, run

IDS = ("turn_id", "agent_id", "user_id", "session_id")


def logged(observer: LogObserver) -> list[MutableMapping[str, Any]]:
    with capture_logs() as logs:
        run(lambda: demo_turn([observer]))
    return [e for e in logs if e["event"] != "observer_failed"]


def test_one_event_per_phase_and_one_per_turn_all_bound_to_the_ids() -> None:
    """Eleven ``phase_ended`` events and one ``turn_ended``, each with the turn's ids."""
    events = logged(LogObserver())
    names = [e["event"] for e in events]
    assert names.count("phase_ended") == 11
    assert names.count("turn_ended") == 1
    turn_ids = {e["turn_id"] for e in events}
    assert len(turn_ids) == 1
    for event in events:
        assert all(event[key] for key in IDS)
    ended = next(e for e in events if e["event"] == "turn_ended")
    assert ended["status"] == "ok"
    assert ended["total_tokens"] > 0


def test_content_is_not_logged_by_default() -> None:
    """Without ``log_content`` neither the user's input nor fragment text is logged."""
    text = repr(logged(LogObserver()))
    assert SAMPLE_INPUT not in text
    assert "fragments" not in text
    assert "payment provider" not in text.lower()


def test_content_is_logged_when_asked_for() -> None:
    """With ``log_content=True`` the input and each fragment's text are logged."""
    events = logged(LogObserver(log_content=True))
    started = next(e for e in events if e["event"] == "turn_started")
    assert started["user_input"] == SAMPLE_INPUT
    ended = next(e for e in events if e["event"] == "turn_ended")
    fragments = ended["fragments"]
    assert isinstance(fragments, list)
    assert fragments
    assert all(f["text"] for f in fragments)


def test_configure_json_writes_one_json_object_per_event() -> None:
    """``configure(json=True)`` renders each event as a JSON line with level and timestamp."""
    out = io.StringIO()
    prefrontal.logging.configure(json=True, stream=out)
    run(lambda: demo_turn([LogObserver()]))
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["event"] for line in lines].count("phase_ended") == 11
    assert lines[-1]["event"] == "turn_ended"
    assert {"level", "timestamp", "turn_id", "session_id"} <= set(lines[-1])


def test_configure_console_is_readable_and_filters_by_level() -> None:
    """Console lines are plain text (no colours off a terminal); ``level`` filters."""
    out = io.StringIO()
    prefrontal.logging.configure(json=False, level="warning", stream=out)
    run(lambda: demo_turn([LogObserver()]))
    assert out.getvalue() == ""
    prefrontal.logging.configure(json=False, level="info", stream=out)
    run(lambda: demo_turn([LogObserver()]))
    first = out.getvalue().splitlines()[0]
    assert "phase_ended" in first
    assert "\x1b[" not in first
    with pytest.raises(ValueError, match="level"):
        prefrontal.logging.configure(level="loud")


def test_a_failed_phase_is_a_warning_with_its_error() -> None:
    """A store failure logs its phase at warning level, naming the error; the turn too."""

    async def go() -> None:
        stores = Stores.in_memory()
        await seed(stores)
        broken = stores.replace(semantic=FailingStore(stores.semantic))
        await demo_turn([LogObserver()], stores=broken)

    with capture_logs() as logs:
        run(go)
    semantic = next(e for e in logs if e.get("phase") == "semantic")
    assert semantic["log_level"] == "warning"
    assert semantic["status"] == "failed"
    assert semantic["errors"] == ["StoreError: store unavailable"]
    ended = next(e for e in logs if e["event"] == "turn_ended")
    assert ended["log_level"] == "warning"
    assert ended["status"] == "degraded"
