"""A writer in another process for the cross-process erase test.

Run as a script: ``erase_writer.py BACKEND TARGET SCHEMA STOP OUT``
(``sqlite`` and a file path, or ``postgres`` and a DSN with a schema). It
writes for user ``alice`` and the bystander ``bob`` of agent ``atlas`` in a
loop, through every write path it can reach (turns ended with a reply and an
extraction, memories, goals, scratch entries, conversation turns), prints
``ready`` once a first round has landed, and stops when file ``STOP``
exists. Then it writes ``{"rounds", "refused", "bob_rounds", "errors"}`` as
JSON to ``OUT``: a write the database refused for an erased user counts as
refused, anything else unexpected is listed in ``errors``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import anyio

from prefrontal import Orchestrator, Stores, TurnRequest
from prefrontal.errors import ErasedTenantError, NotFoundError
from prefrontal.exchange import ExchangeView, Extracted
from prefrontal.stores import (
    ConversationTurn,
    FrontalItem,
    FrontalKind,
    Observation,
    Role,
    Tenant,
    postgres,
    sqlite,
)

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


async def extract(exchange: ExchangeView) -> Sequence[Extracted]:
    return [Extracted(content=f"marker fact: {exchange.user_input}")]


async def one_round(orchestrator: Orchestrator, user: str, n: int) -> None:
    """One write of ``user`` on every path, ids new to this round."""
    tenant = Tenant(agent_id="atlas", user_id=user)
    owned = {"agent_id": "atlas", "user_id": user}
    stores = orchestrator.stores
    turn = await orchestrator.start_turn(
        TurnRequest(agent_id="atlas", user_id=user, session_id="s1", user_input=f"marker {n}")
    )
    await orchestrator.end_turn(turn, f"marker reply {n}")
    await orchestrator.memory.remember(tenant, f"marker kept {n}", store="episodic")
    await stores.frontal_cortex.put(
        FrontalItem(
            item_id=f"g{n}",
            kind=FrontalKind.GOAL,
            title=f"marker goal {n}",
            updated_at=T0,
            created_at=T0,
            **owned,
        )
    )
    await stores.scratch_page.put(
        Observation(item_id=f"n{n}", content=f"marker note {n}", created_at=T0, **owned)
    )
    await stores.conversation.append(
        ConversationTurn(
            item_id=f"c{n}",
            session_id="s1",
            role=Role.USER,
            content=f"marker said {n}",
            created_at=T0,
            **owned,
        )
    )
    await orchestrator.wait_background()


async def main(backend: str, target: str, schema: str, stop: Path, out: Path) -> None:
    stores: Stores = (
        sqlite.open_stores(target)
        if backend == "sqlite"
        else postgres.open_stores(target, schema=schema, max_size=4)
    )
    result: dict[str, object] = {"rounds": 0, "refused": 0, "bob_rounds": 0, "errors": []}
    errors: list[str] = []
    async with Orchestrator(stores, clock=lambda: T0, extractor=extract) as orchestrator:
        n = 0
        while not await anyio.Path(stop).exists():
            n += 1
            try:
                await one_round(orchestrator, "alice", n)
                result["rounds"] = int(str(result["rounds"])) + 1
            except (ErasedTenantError, NotFoundError):
                result["refused"] = int(str(result["refused"])) + 1
            except Exception as error:  # reported to the test, which fails on any
                errors.append(f"{type(error).__name__}: {error}")
            await one_round(orchestrator, "bob", n)
            result["bob_rounds"] = int(str(result["bob_rounds"])) + 1
            if n == 1:
                print("ready", flush=True)
    result["errors"] = errors
    await anyio.Path(out).write_text(json.dumps(result))


if __name__ == "__main__":
    backend, target, schema, stop, out = sys.argv[1:6]
    anyio.run(main, backend, target, schema, Path(stop), Path(out))
