"""``prefrontal demo``: run one turn of the demo agent on the SQLite store and show it.

The store is ``.prefrontal/prefrontal.db`` unless ``--db`` says otherwise, so
memory persists: the first run seeds the demo agent, later runs find it and
their earlier turns (the new turn's parent is the last one) and the session's
working memory. ``--db :memory:`` runs on fresh in-memory stores instead.
"""

from __future__ import annotations

import anyio
import typer
from rich.console import Console

from prefrontal.cli.stores import DbOption, opened
from prefrontal.cli.timeline import timeline
from prefrontal.cli.turn_command import seed_if_empty
from prefrontal.cli.views import budget_table, phase_table
from prefrontal.demo.seed import DEMO_AGENT, DEMO_SESSION, DEMO_USER, SAMPLE_INPUT
from prefrontal.orchestrator import Orchestrator
from prefrontal.stores.set import Stores
from prefrontal.stores.traces import TraceQuery
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


async def earlier_turns(stores: Stores, request: TurnRequest) -> list[str]:
    """The ids of the session's earlier turns, newest first."""
    query = TraceQuery(
        agent_id=request.agent_id,
        user_id=request.user_id,
        session_id=request.session_id,
        limit=10_000,
    )
    return [trace.turn_id for trace in await stores.traces.list(query)]


async def run(db: str, request: TurnRequest, console: Console, err: Console) -> TurnResult:
    """Seed the store if it has no demo agent, then run and show one turn after the last."""
    async with opened(db) as stores:
        earlier = await earlier_turns(stores, request)
        if await seed_if_empty(stores, request):
            err.print(f"note: seeded the demo agent into {db}")
        elif earlier:
            err.print(
                f"note: {db} already holds the demo agent and {len(earlier)} earlier turn(s) "
                f"of this session; continuing after {earlier[0]}"
            )
        parent = earlier[0] if earlier else None
        turn = request.model_copy(update={"parent_turn_id": parent})
        result = await Orchestrator(stores).start_turn(turn)
        show(result, console)
        return result


def demo(
    message: str = typer.Argument(SAMPLE_INPUT, help="The user's message for the turn."),
    db: str = DbOption,
) -> None:
    """Run one real turn of the demo agent on the store, and show the bundle and its phases."""
    console, err = Console(), Console(stderr=True)
    request = TurnRequest(
        agent_id=DEMO_AGENT, user_id=DEMO_USER, session_id=DEMO_SESSION, user_input=message
    )
    result = anyio.run(run, db, request, console, err)
    console.rule("Timeline")
    console.print(timeline(result.trace, console.width))
