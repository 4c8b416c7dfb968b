"""Run one turn on seeded stores and show it: the code behind ``prefrontal demo``."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from prefrontal.demo.seed import DEMO_AGENT, DEMO_SESSION, DEMO_USER, SAMPLE_INPUT, seed
from prefrontal.orchestrator import Orchestrator
from prefrontal.stores.set import Stores
from prefrontal.turn import TurnRequest, TurnResult


def phase_table(result: TurnResult) -> Table:
    """One row per phase: status, start, duration, budget, items and tokens."""
    table = Table(title=f"Turn {result.context.turn_id}: {result.trace.status.value}")
    for column in (
        "#",
        "phase",
        "status",
        "start ms",
        "ms",
        "budget ms",
        "items",
        "tokens",
        "notes",
    ):
        table.add_column(
            column, justify="right" if column not in ("phase", "status", "notes") else "left"
        )
    for p in result.trace.phases:
        notes = "; ".join([*p.warnings, *(e.message for e in p.errors)])
        table.add_row(
            str(p.index),
            p.name,
            p.status.value,
            f"{p.started_ms:.1f}",
            f"{p.duration_ms:.1f}",
            f"{p.budget_ms:.0f}",
            str(p.items_loaded),
            str(p.tokens_loaded),
            notes,
        )
    return table


def section_table(result: TurnResult) -> Table:
    """Budget per section: requested, allocated, used."""
    table = Table(title=f"Budget: {result.bundle.total_tokens} of {result.bundle.budget} tokens")
    for column in ("section", "requested", "allocated", "used"):
        table.add_column(column, justify="left" if column == "section" else "right")
    for s in result.trace.sections:
        table.add_row(s.section, str(s.requested), str(s.allocated), str(s.used))
    return table


def show(result: TurnResult, console: Console) -> None:
    """Print the bundle, the per-phase summary and the budget per section."""
    console.rule("Context bundle")
    console.print(result.bundle.text, markup=False, highlight=False)
    console.rule("Phases")
    console.print(phase_table(result))
    console.print(section_table(result))
    wm = result.working_memory
    console.print(
        f"working memory: {len(wm.items)} items, {wm.total_tokens} tokens "
        f"(max {wm.max_items} items, {wm.max_tokens} tokens); "
        f"checksum {result.bundle.checksum[:16]}; ready_for_router={result.ready_for_router}"
    )


async def run_demo(
    stores: Stores, user_input: str = SAMPLE_INPUT, *, console: Console | None = None
) -> TurnResult:
    """Seed ``stores`` with the demo agent, run one turn, print it, return it."""
    await seed(stores)
    request = TurnRequest(
        agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id=DEMO_SESSION, user_input=user_input
    )
    result = await Orchestrator(stores).start_turn(request)
    show(result, console or Console())
    return result
