"""``prefrontal turn "message"``: one real turn on the stores, shown section by section.

The demo agent is seeded only into a new database (a SQLite file that does
not exist yet, or ``:memory:``), never into one that holds anything else
(``--seed`` asks for it there, ``--no-seed`` never). ``--db`` in a
directory that does not exist is refused: only the default
``.prefrontal/`` is made.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import anyio
import typer
from pydantic import ValidationError
from rich.console import Console

from prefrontal.cli.errors import invalid_fields
from prefrontal.cli.stores import DEFAULT_DB, MEMORY, SCHEME, DbOption, opened
from prefrontal.cli.views import bundle_view, trace_view
from prefrontal.config import MAX_TOKEN_BUDGET, MIN_TOKEN_BUDGET
from prefrontal.demo.seed import DEMO_AGENT, DEMO_SESSION, DEMO_USER, seed
from prefrontal.exchange.models import EndTurnResult
from prefrontal.orchestrator import Orchestrator
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.traces import TraceQuery
from prefrontal.traces.log import LogObserver
from prefrontal.turn import TurnRequest, TurnResult


async def has_profile(stores: Stores, request: TurnRequest) -> bool:
    """True when the store holds a profile of the request's agent."""
    tenant = Tenant(agent_id=request.agent_id, user_id=request.user_id)
    return await stores.consciousness.get_profile(tenant) is not None


async def seed_if_empty(stores: Stores, request: TurnRequest) -> bool:
    """Seed the demo data when the turn is the demo agent's and the store has no profile of it.

    Another agent's turn is never seeded: the demo agent's identity, rules
    and memories belong to the demo agent alone.
    """
    if request.agent_id != DEMO_AGENT or await has_profile(stores, request):
        return False
    await seed(
        stores,
        agent_id=request.agent_id,
        user_id=request.user_id,
        session_id=request.session_id,
    )
    return True


async def latest_turn(stores: Stores, request: TurnRequest) -> str | None:
    """The id of the session's most recent turn, the new turn's parent."""
    query = TraceQuery(
        agent_id=request.agent_id,
        user_id=request.user_id,
        session_id=request.session_id,
        limit=1,
    )
    found = await stores.traces.list(query)
    return found[0].turn_id if found else None


def is_new_database(db: str) -> bool:
    """True for ``:memory:`` and a SQLite file that does not exist yet (or is empty)."""
    if db == MEMORY:
        return True
    if SCHEME.match(db):
        return False
    path = Path(db)
    return not path.exists() or (path.is_file() and path.stat().st_size == 0)


def missing_directory(db: str) -> Path | None:
    """The directory ``--db`` names that does not exist (the default's is made), or ``None``."""
    if db == MEMORY or SCHEME.match(db) or Path(db) == DEFAULT_DB:
        return None
    parent = Path(db).parent
    return None if parent.is_dir() else parent


async def run_turn(
    db: str,
    request: TurnRequest,
    err: Console,
    *,
    seed_demo: bool | None = None,
    reply: str | None = None,
) -> tuple[TurnResult, EndTurnResult | None]:
    """Open the stores, seed the demo agent if asked, link the parent, run the turn.

    ``seed_demo``: ``None`` seeds the demo agent into a new database only
    (:func:`is_new_database`), ``True`` whenever the demo agent is missing,
    ``False`` never. With a ``reply``, the turn is ended with it
    (``end_turn``): the next turn of the session shows the exchange.
    """
    seeding = is_new_database(db) if seed_demo is None else seed_demo
    async with opened(db) as stores:
        if seeding and await seed_if_empty(stores, request):
            err.print(f"note: a new database; seeded the demo agent {request.agent_id!r}.")
        elif not await has_profile(stores, request):
            hint = (
                " (the demo is seeded only into a new database; --seed asks for it)"
                if seed_demo is None and request.agent_id == DEMO_AGENT
                else ""
            )
            err.print(
                f"note: the store has no profile of agent {request.agent_id!r}: "
                f"the turn runs without its identity and rules{hint}.",
                markup=False,
            )
        if request.parent_turn_id is None:
            parent = await latest_turn(stores, request)
            request = request.model_copy(update={"parent_turn_id": parent})
        orchestrator = Orchestrator(stores, observers=[LogObserver()])
        result = await orchestrator.start_turn(request)
        ended = await orchestrator.end_turn(result, reply) if reply is not None else None
        return result, ended


def request_or_exit(err: Console, **fields: object) -> TurnRequest:
    """The request, or a usage error (exit status 2) that says which field is wrong."""
    try:
        return TurnRequest.model_validate(fields)
    except ValidationError as error:
        err.print(f"error: {invalid_fields(error)}", markup=False, highlight=False)
        raise typer.Exit(2) from None


def show(result: TurnResult, out: Console) -> None:
    """The bundle, then a line to find the trace by."""
    trace = result.trace
    out.print(bundle_view(result.bundle, trace))
    out.print(
        f"turn {trace.turn_id}: {trace.status.value} in {trace.duration_ms:.1f} ms, "
        f"{len(trace.dropped)} dropped, {len(trace.warnings)} warnings; "
        f"see `prefrontal trace show {trace.turn_id}`",
        markup=False,
        highlight=False,
    )


def turn(
    message: str = typer.Argument(..., help="The user's message."),
    db: str = DbOption,
    agent: str = typer.Option(DEMO_AGENT, help="Agent id."),
    user: str = typer.Option(DEMO_USER, help="User id."),
    session: str = typer.Option(DEMO_SESSION, help="Session id."),
    budget: int | None = typer.Option(
        None,
        min=MIN_TOKEN_BUDGET,
        max=MAX_TOKEN_BUDGET,
        help="Total token budget for this turn.",
    ),
    parent: str | None = typer.Option(
        None, help="Parent turn id (default: the session's latest turn)."
    ),
    with_trace: bool = typer.Option(
        False, "--trace", help="Show the turn's trace after the bundle (as `trace show`)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the turn result as JSON."),
    seed_demo: bool | None = typer.Option(
        None,
        "--seed/--no-seed",
        help="Seed the demo agent if it is missing (default: only into a new database).",
    ),
    reply: str | None = typer.Option(
        None, help="The assistant's reply: records the exchange (end_turn) for the next turns."
    ),
) -> None:
    """Run one turn on the store (seeding the demo agent into a new one) and show the bundle."""
    err = Console(stderr=True)
    directory = missing_directory(db)
    if directory is not None:
        err.print(f"error: --db {db}: no directory {directory} (create it first)", markup=False)
        raise typer.Exit(2)
    request = request_or_exit(
        err,
        agent_id=agent,
        user_id=user,
        session_id=session,
        user_input=message,
        token_budget=budget,
        parent_turn_id=parent,
    )
    if reply is not None and not reply.strip():
        err.print("error: --reply must not be empty")
        raise typer.Exit(2)
    result, ended = anyio.run(partial(run_turn, db, request, err, seed_demo=seed_demo, reply=reply))
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    out = Console()
    show(result, out)
    if ended is not None:
        out.print(
            f"reply recorded: {len(ended.message_ids)} messages, "
            f"{len(ended.memory_ids)} episodic items",
            markup=False,
            highlight=False,
        )
    if with_trace:
        out.print(trace_view(result.trace, out.width))
