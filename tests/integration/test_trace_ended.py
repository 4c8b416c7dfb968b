"""Whether a turn ended, read from its stored trace's last characters, agrees with parsing it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prefrontal import Stores
from prefrontal.stores.sqlite.traces import SqliteTraceStore
from prefrontal.stores.traces import OPEN_SUFFIX, ended_body
from prefrontal.traces.models import TurnTrace
from tests.endturn_support import TENANT, ask, build, open_stores

pytestmark = pytest.mark.anyio
TRICKY = f"Does a message ending in {OPEN_SUFFIX} confuse it?"


@pytest.fixture(params=["sqlite", "postgres"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    yield from open_stores(request.param, request, tmp_path)


async def ended_in(stores: Stores, turn_id: str) -> bool:
    """The backend's own check, in a read of its database."""
    traces: Any = stores.traces
    if not isinstance(traces, SqliteTraceStore):  # PostgreSQL: the check is a coroutine

        async def run_pg(connection: Any) -> bool:
            found: bool = await traces.ended_in(connection, TENANT, turn_id, lock=False)
            return found

        return bool(await traces.database.read(run_pg, store="traces"))
    return bool(
        await traces.database.read(lambda c: traces.ended_in(c, TENANT, turn_id), store="traces")
    )


async def rewrite(stores: Stores, trace: TurnTrace, body: str) -> None:
    """Store ``body`` as the trace's body, as another prefrontal might have written it."""
    traces: Any = stores.traces
    if not isinstance(traces, SqliteTraceStore):
        sql = "UPDATE traces SET body = $1 WHERE turn_id = $2"
        await traces.database.execute(sql, body, trace.turn_id, store="traces")
        return
    sql = "UPDATE traces SET body = ? WHERE turn_id = ?"
    await traces.database.write(lambda c: c.execute(sql, (body, trace.turn_id)), store="traces")


def ending_first(trace: TurnTrace) -> str:
    """The trace's JSON with ``ending`` as its first field instead of its last."""
    fields = json.loads(trace.model_dump_json())
    return json.dumps({"ending": fields.pop("ending"), **fields})


async def test_an_open_trace_ends_with_the_open_suffix_and_an_ended_one_does_not(
    stores: Stores,
) -> None:
    """A stored trace's body ends with OPEN_SUFFIX until end_turn, and the checks agree."""
    orchestrator = build(stores)
    result = await orchestrator.start_turn(ask(TRICKY))
    open_body = result.trace.model_dump_json()
    assert open_body.endswith(OPEN_SUFFIX) and not ended_body(open_body)
    assert not await ended_in(stores, result.context.turn_id)
    ended = await orchestrator.end_turn(result, f"It should not: {OPEN_SUFFIX}")
    stored = await stores.traces.get(TENANT, result.context.turn_id)
    assert stored is not None and stored.ending == ended.trace
    assert ended_body(stored.model_dump_json())
    assert await ended_in(stores, result.context.turn_id)


async def test_a_body_in_another_field_order_is_parsed(stores: Stores) -> None:
    """With ``ending`` not last, the backend parses the body: open stays open, ended stays ended."""
    orchestrator = build(stores)
    first = await orchestrator.start_turn(ask("An open turn?"))
    await rewrite(stores, first.trace, ending_first(first.trace))
    assert not await ended_in(stores, first.context.turn_id)
    second = await orchestrator.start_turn(ask("An ended turn?"))
    await orchestrator.end_turn(second, "Ended.")
    stored = await stores.traces.get(TENANT, second.context.turn_id)
    assert stored is not None
    await rewrite(stores, stored, ending_first(stored))
    assert await ended_in(stores, second.context.turn_id)
    again = await orchestrator.end_turn(
        second.context.turn_id, "Ended.", agent_id="atlas", user_id="maya"
    )
    assert not again.written and again.trace.reply == "Ended."
