"""``prefrontal trace list``, ``trace show TURN_ID`` and ``trace prune``: the trace store."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Annotated

import anyio
import typer
from rich.console import Console

from prefrontal.cli.stores import DbOption, opened
from prefrontal.cli.views import trace_list_table, trace_view
from prefrontal.stores.traces import TraceQuery
from prefrontal.traces.models import TurnStatus, TurnTrace

trace_app = typer.Typer(no_args_is_help=True, help="List, show and prune turn traces.")
LATEST = "latest"
AGO = re.compile(r"^(\d+)([smhd])$")
UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def when(value: str | None, now: datetime | None = None) -> datetime | None:
    """An ISO date-time (UTC unless it has an offset) or a duration ago: ``30m``, ``2h``, ``7d``."""
    if value is None:
        return None
    ago = AGO.match(value.strip())
    if ago:
        amount, unit = int(ago.group(1)), UNITS[ago.group(2)]
        return (now or datetime.now(UTC)) - timedelta(**{unit: amount})
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(
            f"{value!r} is neither an ISO date-time nor a duration like 30m, 2h, 7d"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


async def _list(db: str, query: TraceQuery) -> list[TurnTrace]:
    async with opened(db, create=False) as stores:
        return await stores.traces.list(query)


async def _find(db: str, turn_id: str) -> tuple[TurnTrace | None, list[str]]:
    """The trace of ``turn_id`` (or the newest for ``latest``) and the turns that followed it."""
    async with opened(db, create=False) as stores:
        query = TraceQuery(limit=1) if turn_id == LATEST else TraceQuery(turn_id=turn_id)
        found = [t for t in await stores.traces.list(query) if turn_id in (LATEST, t.turn_id)]
        if not found:
            return None, []
        trace = found[0]
        children = await stores.traces.list(TraceQuery(parent_turn_id=trace.turn_id))
        return trace, [c.turn_id for c in children if c.parent_turn_id == trace.turn_id]


@trace_app.command("list")
def list_traces(
    db: str = DbOption,
    agent: str | None = typer.Option(None, help="Only this agent's turns."),
    user: str | None = typer.Option(None, help="Only this user's turns."),
    session: str | None = typer.Option(None, help="Only this session's turns."),
    status: Annotated[TurnStatus | None, typer.Option(help="Only turns that ended so.")] = None,
    since: str | None = typer.Option(None, help="Started at or after: ISO date-time or 2h, 7d."),
    until: str | None = typer.Option(None, help="Started before: ISO date-time or 2h, 7d."),
    parent: str | None = typer.Option(None, help="Only the turns that followed this turn."),
    search: str | None = typer.Option(
        None, help="Only turns whose message or reply holds every word of this text."
    ),
    limit: int = typer.Option(20, min=1, max=10_000, help="At most this many, newest first."),
    as_json: bool = typer.Option(False, "--json", help="Print the traces as JSON."),
) -> None:
    """List turn traces, newest first, filtered by agent, user, session, status, time and words."""
    query = TraceQuery(
        agent_id=agent,
        user_id=user,
        session_id=session,
        status=status,
        since=when(since),
        until=when(until),
        parent_turn_id=parent,
        text=search,
        limit=limit,
    )
    traces = anyio.run(_list, db, query)
    if as_json:
        typer.echo(json.dumps([t.model_dump(mode="json") for t in traces], indent=2))
    elif not traces:
        Console(stderr=True).print("no traces match")
    else:
        Console().print(trace_list_table(traces))


@trace_app.command("show")
def show_trace(
    turn_id: str = typer.Argument(..., help="The turn's id, or 'latest'."),
    db: str = DbOption,
    width: int | None = typer.Option(None, min=60, help="Width of the view (default: terminal)."),
    as_json: bool = typer.Option(False, "--json", help="Print the trace model as JSON."),
    details: bool = typer.Option(
        False, "--details", help="Also show what each phase recorded (its detail)."
    ),
) -> None:
    """Show one trace: timeline, phases, budget per section, drops, warnings and errors."""
    trace, followed_by = anyio.run(_find, db, turn_id)
    if trace is None:
        Console(stderr=True).print(f"no trace of turn {turn_id!r}", markup=False)
        raise typer.Exit(1)
    if as_json:
        typer.echo(trace.model_dump_json(indent=2))
        return
    console = Console(width=width) if width else Console()
    console.print(trace_view(trace, console.width, followed_by, details=details))


async def _prune(db: str, before: datetime | None, keep: int | None) -> int:
    async with opened(db, create=False) as stores:
        return await stores.traces.prune(before=before, keep=keep)


@trace_app.command("prune")
def prune_traces(
    db: str = DbOption,
    older_than: str | None = typer.Option(
        None, help="Remove traces started before this: ISO date-time or a duration ago (30d)."
    ),
    keep: int | None = typer.Option(None, min=0, help="Then keep only this many, the newest."),
) -> None:
    """Remove old traces (retention): by age, by count, or both; prints how many went."""
    if older_than is None and keep is None:
        raise typer.BadParameter("say what to remove: --older-than, --keep, or both")
    removed = anyio.run(_prune, db, when(older_than), keep)
    typer.echo(f"removed {removed} trace(s)")
