"""The timeline: phases as bars on a time axis, concurrency visible as overlap."""

from __future__ import annotations

from datetime import UTC, datetime

from prefrontal import OrchestratorConfig, Stores
from prefrontal.cli.timeline import BAR, bar_cells, timeline
from prefrontal.demo import seed
from prefrontal.testing import DelayedStore
from prefrontal.traces.models import PhaseRecord, PhaseStatus, TurnStatus, TurnTrace
from tests.unit.traces.helpers import demo_turn, run

TIMINGS = (
    ("turn_context", 0.0, 0.4),
    ("consciousness", 0.5, 9.0),
    ("frontal_cortex", 0.5, 30.0),
    ("conversation", 0.5, 22.0),
    ("episodic", 30.6, 80.0),
    ("semantic", 30.6, 55.0),
    ("scratch_page", 0.5, 4.0),
    ("budget_allocation", 110.7, 0.3),
    ("context_assembly", 111.0, 6.2),
    ("working_memory_init", 117.3, 1.1),
    ("finalize", 118.5, 0.9),
)

PINNED_AT_80 = """\
 1 turn_context         █                                       0.4 ms ok
 2 consciousness        ███                                     9.0 ms ok
 3 frontal_cortex       █████████                              30.0 ms ok
 4 conversation         ███████                                22.0 ms ok
 5 episodic                     ████████████████████████       80.0 ms ok !
 6 semantic                     █████████████████              55.0 ms degraded
 7 scratch_page         ██                                      4.0 ms ok
 8 budget_allocation                                   █        0.3 ms ok
 9 context_assembly                                    ███      6.2 ms ok
10 working_memory_init                                   █      1.1 ms ok
11 finalize                                              █      0.9 ms ok
                        ┬───────┬───────┬────────┬───────┬
                        0      30      60       90     120 ms"""


def record(index: int, name: str, started: float, duration: float) -> PhaseRecord:
    return PhaseRecord(
        name=name,
        index=index,
        status=PhaseStatus.DEGRADED if name == "semantic" else PhaseStatus.OK,
        started_ms=started,
        duration_ms=duration,
        budget_ms=50.0 if name == "episodic" else 100.0,
    )


def synthetic() -> TurnTrace:
    phases = [record(i, *t) for i, t in enumerate(TIMINGS, start=1)]
    return TurnTrace(
        turn_id="01TEST",
        agent_id="atlas",
        user_id="maya",
        session_id="s1",
        started_at=datetime(2026, 11, 20, 9, tzinfo=UTC),
        duration_ms=119.6,
        deadline_ms=1_000,
        status=TurnStatus.OK,
        total_budget=4_000,
        total_tokens=1_200,
        checksum="c" * 64,
        ready_for_router=True,
        phases=tuple(phases),
    )


def covered(line: str) -> set[int]:
    """The columns of a timeline line that its bar covers."""
    return {i for i, char in enumerate(line) if char == BAR}


def rows(text: str) -> dict[str, str]:
    return {line.split()[1]: line for line in text.splitlines() if line[:2].strip().isdigit()}


def test_timeline_at_80_columns_is_pinned() -> None:
    """At 80 columns the drawing is exactly this: overlaps visible, the slow phase marked."""
    assert timeline(synthetic(), 80).plain == PINNED_AT_80


def test_concurrent_phases_overlap_and_assembly_follows_loading() -> None:
    """Phases 2, 3, 4 and 7 share columns; 5 and 6 too; 8 starts after every loader ends."""
    bars = rows(timeline(synthetic(), 80).plain)
    first_wave = [covered(bars[n]) for n in ("consciousness", "frontal_cortex", "conversation")]
    assert set.intersection(*first_wave, covered(bars["scratch_page"]))
    assert covered(bars["episodic"]) & covered(bars["semantic"])
    assert min(covered(bars["episodic"])) >= max(covered(bars["frontal_cortex"]))
    assert min(covered(bars["budget_allocation"])) > max(covered(bars["semantic"]))


def test_the_drawing_fits_the_width() -> None:
    """No line is wider than asked, at any width from narrow to wide."""
    for width in (60, 80, 100, 160):
        assert max(len(line) for line in timeline(synthetic(), width).plain.splitlines()) <= width


def test_bar_cells_always_cover_at_least_one_cell_within_the_axis() -> None:
    """A zero-length phase still shows, and no bar runs off the axis."""
    instant = record(1, "turn_context", 0.0, 0.0)
    assert bar_cells(instant, 100.0, 40) == (0, 1)
    late = record(11, "finalize", 100.0, 5.0)
    assert bar_cells(late, 100.0, 40) == (39, 40)


def test_a_real_turn_with_slow_stores_draws_its_concurrency() -> None:
    """On stores that answer after 20 ms, the loaders' bars overlap in the drawing."""

    async def go() -> object:
        stores = Stores.in_memory()
        await seed(stores)
        slow = stores.replace(
            **{
                k: DelayedStore(getattr(stores, k), 0.02)
                for k in (
                    "consciousness",
                    "frontal_cortex",
                    "conversation",
                    "episodic",
                    "semantic",
                    "scratch_page",
                )
            }
        )
        return await demo_turn(stores=slow, config=OrchestratorConfig(deadline_ms=5_000))

    result = run(go)
    bars = rows(timeline(result.trace, 100).plain)  # type: ignore[attr-defined]
    assert covered(bars["consciousness"]) & covered(bars["conversation"])
    assert covered(bars["episodic"]) & covered(bars["semantic"])
