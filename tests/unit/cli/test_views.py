"""The terminal views: a degraded turn's trace shows what failed, what was dropped and why."""

from __future__ import annotations

import io

from rich.console import Console, RenderableType

from prefrontal import OrchestratorConfig, Stores, TurnResult
from prefrontal.cli.views import (
    DETAIL_CHARS,
    bundle_view,
    detail_value,
    trace_list_table,
    trace_view,
)
from prefrontal.demo import seed
from prefrontal.errors import StoreError
from prefrontal.phases import PHASE_NAMES
from prefrontal.testing import DelayedStore, FailingStore
from tests.unit.traces.helpers import demo_turn, run


def text(renderable: RenderableType, width: int = 120) -> str:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def degraded_turn() -> TurnResult:
    """Semantic store down, scratch page too slow for a 200 ms deadline, a small budget."""

    async def go() -> TurnResult:
        stores = Stores.in_memory()
        await seed(stores)
        broken = stores.replace(
            semantic=FailingStore(stores.semantic, error=StoreError("disk full", store="semantic")),
            scratch_page=DelayedStore(stores.scratch_page, 5.0),
        )
        config = OrchestratorConfig(deadline_ms=200)
        return await demo_turn(stores=broken, config=config, token_budget=500)

    return run(go)


def test_trace_view_shows_failures_timeouts_drops_and_budget() -> None:
    """Header, timeline, phase table, budget, drops with reasons, and each warning and error."""
    trace = degraded_turn().trace
    shown = text(trace_view(trace, 120))
    assert f"turn                   {trace.turn_id}" in shown
    assert "degraded" in shown
    assert "Timeline" in shown
    assert "semantic" in shown
    assert "failed" in shown
    assert "timeout" in shown
    assert "error StoreError [semantic]: disk full" in shown
    assert "DeadlineExceeded" in shown
    assert "warning scratch_page: cut at the 200 ms deadline" in shown
    assert f"Budget: {trace.total_tokens} of 500 tokens" in shown
    assert f"Dropped: {len(trace.dropped)}" in shown
    assert "over budget" in shown


def test_a_clean_trace_says_so() -> None:
    """A turn without problems ends its view with a line saying there were none."""
    # Budgets far above any machine's timing, so that no phase is over its budget.
    config = OrchestratorConfig(
        deadline_ms=60_000, phase_budgets_ms=dict.fromkeys(PHASE_NAMES, 30_000.0)
    )

    async def go() -> TurnResult:
        return await demo_turn(config=config)

    trace = run(go).trace
    assert not trace.warnings and not trace.errors
    shown = text(trace_view(trace, 100, followed_by=("01NEXT",)))
    assert "no warnings, no errors" in shown
    assert "followed by: 01NEXT" in shown


def test_bundle_view_lists_every_fragment_with_source_and_tokens() -> None:
    """Each section is titled with its share; each fragment shows its store, ids and tokens."""
    result = run(demo_turn)
    shown = text(bundle_view(result.bundle, result.trace), 160)
    for usage in result.trace.sections:
        if usage.used:
            assert f"({usage.section}): {usage.used} of {usage.allocated} tokens" in shown
    for fragment in result.bundle.fragments:
        assert f"{fragment.provenance.store}:{fragment.provenance.item_ids[0]}" in shown
    assert f"{result.bundle.total_tokens} of {result.bundle.budget} tokens" in shown


def test_trace_list_keeps_turn_ids_whole_even_when_narrow() -> None:
    """Turn ids are what users copy: never cut, even at 80 columns."""
    trace = run(demo_turn).trace
    assert trace.turn_id in text(trace_list_table([trace]), 80)


def test_trace_list_cuts_only_session_and_parent_when_narrow() -> None:
    """At 80 columns time, status, milliseconds, tokens and issues stay whole; at 120, all."""
    trace = run(demo_turn).trace
    whole = [
        trace.started_at.strftime("%m-%d %H:%M"),
        trace.status.value,
        f"{trace.duration_ms:.0f}",
        f"{trace.total_tokens}/{trace.total_budget}",
    ]
    narrow, wide = text(trace_list_table([trace]), 80), text(trace_list_table([trace]), 120)
    assert all(cell in narrow for cell in whole)
    assert all(cell in wide for cell in [*whole, trace.session_id])


def test_details_show_what_each_phase_recorded() -> None:
    """With details, the buffer's refresh counts and the search's candidates are listed by phase."""
    trace = run(demo_turn).trace
    plain = text(trace_view(trace, 160))
    detailed = text(trace_view(trace, 160, details=True))
    assert "Phase details" not in plain
    assert "Phase details" in detailed
    refresh = trace.phase("working_memory_init").detail
    row = next(line for line in detailed.splitlines() if "│ admitted" in line)
    assert "working_memory_init" in row
    assert str(refresh["admitted"]) in row


def test_a_long_detail_value_is_cut_with_an_ellipsis() -> None:
    """Values longer than the limit end in an ellipsis at exactly the limit."""
    shown = detail_value(["x" * 50] * 10)
    assert len(shown) == DETAIL_CHARS
    assert shown.endswith("…")
    assert detail_value({"a": 1}) == '{"a": 1}'
