"""Observers see every turn: started, each phase, ended; failures stay isolated."""

from __future__ import annotations

import anyio
import pytest
from structlog.testing import capture_logs

from prefrontal import Orchestrator, OrchestratorConfig, Stores
from prefrontal.demo import seed
from prefrontal.testing import DelayedStore, RecordingObserver
from prefrontal.traces.observe import CompositeObserver, NullObserver, Observer, combine
from tests.conftest import fixed_clock
from tests.unit.traces.helpers import demo_turn, request, run


class Broken(RecordingObserver):
    def phase_ended(self, turn: object, record: object) -> None:
        raise RuntimeError("exporter down")


def test_one_turn_calls_every_hook_in_order() -> None:
    """A turn is started, then each of the eleven phases ends, then the turn ends."""
    seen = RecordingObserver()
    result = run(lambda: demo_turn([seen]))
    hooks = seen.hooks()
    assert hooks[0] == "turn_started"
    assert hooks[1:-1] == ["phase_ended"] * 11
    assert hooks[-1] == "turn_ended"
    assert {turn_id for _, turn_id, _ in seen.events} == {result.trace.turn_id}
    assert seen.events[-1][2] == result.trace
    assert result.trace.status == "ok"


def test_phase_records_match_the_trace() -> None:
    """The records an observer sees are the ones the sealed trace holds (finalize aside)."""
    seen = RecordingObserver()
    result = run(lambda: demo_turn([seen]))
    by_name = {p.name: p for p in seen.phases()}
    for record in result.trace.phases:
        if record.name != "finalize":
            assert by_name[record.name] == record


def test_a_failing_observer_is_skipped_and_logged() -> None:
    """An observer that raises never fails the turn, and the others still see it."""
    after = RecordingObserver()
    with capture_logs() as logs:
        result = run(lambda: demo_turn([Broken(), after]))
    assert result.ready_for_router
    assert after.hooks().count("phase_ended") == 11
    failures = [e for e in logs if e["event"] == "observer_failed"]
    assert len(failures) == 11
    assert failures[0]["hook"] == "phase_ended"


def test_a_cancelled_turn_is_reported_as_cancelled() -> None:
    """Cancelling ``start_turn`` ends with ``turn_cancelled``, never ``turn_ended``."""
    seen = RecordingObserver()

    async def go() -> None:
        stores = Stores.in_memory()
        await seed(stores)
        slow = stores.replace(episodic=DelayedStore(stores.episodic, 5.0))
        orchestrator = Orchestrator(
            slow, OrchestratorConfig(deadline_ms=10_000), clock=fixed_clock, observers=[seen]
        )
        with anyio.move_on_after(0.05):
            await orchestrator.start_turn(request())

    run(go)
    assert seen.hooks()[0] == "turn_started"
    assert seen.hooks()[-1] == "turn_cancelled"
    assert "turn_ended" not in seen.hooks()


def test_combine_gives_a_null_observer_for_none() -> None:
    """No observers: the do-nothing default, so instrumented code never branches."""
    assert isinstance(combine(), NullObserver)
    assert isinstance(combine([RecordingObserver()]), CompositeObserver)


@pytest.mark.parametrize("observer", [NullObserver(), RecordingObserver(), CompositeObserver([])])
def test_implementations_satisfy_the_protocol(observer: object) -> None:
    """Every shipped observer is an ``Observer``."""
    assert isinstance(observer, Observer)
