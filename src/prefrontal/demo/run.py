"""Run one turn on seeded stores and show it: the code behind ``prefrontal demo``."""

from __future__ import annotations

from rich.console import Console

from prefrontal.cli.views import budget_table, phase_table
from prefrontal.demo.seed import DEMO_AGENT, DEMO_SESSION, DEMO_USER, SAMPLE_INPUT, seed
from prefrontal.orchestrator import Orchestrator
from prefrontal.stores.set import Stores
from prefrontal.turn import TurnRequest, TurnResult


def show(result: TurnResult, console: Console) -> None:
    """Print the bundle, the per-phase summary and the budget per section."""
    console.rule("Context bundle")
    console.print(result.bundle.text, markup=False, highlight=False)
    console.rule("Phases")
    console.print(phase_table(result.trace))
    console.print(budget_table(result.trace))
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
