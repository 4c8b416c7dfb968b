"""A scripted model lives in its working memory: 30 turns over MCP, across three server restarts.

The model is a deterministic policy that reads only what a model reads: the
context ``start_turn`` returns and the results of its own tool calls. It
tracks the goals the user asks for, and each turn steers one goal it reads
from its context (the agent file's goals included): advances, blocks,
unblocks, completes or abandons it, by the handle the context shows. Every
next context must show exactly what it did: the open goals and actions with
their progress and blocked flag, and none of those it finished. The server is restarted three times (every store closed and
opened again, a new orchestrator, service and MCP server) over a SQLite
file and a PostgreSQL schema. The run's counts are printed (``-s``).
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from prefrontal import Orchestrator, OrchestratorConfig, Stores
from prefrontal.agents.file import apply, load
from prefrontal.serving.mcp_tools import build_mcp
from prefrontal.serving.service import Service
from prefrontal.stores import postgres, sqlite
from prefrontal.stores.tenancy import Tenant
from tests.conftest import ticking_clock

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent.toml"
TENANT = Tenant(agent_id="atlas", user_id="maya")
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
TURNS = 30
RESTART_AT = (9, 17, 25)
"""The turns before which the server is restarted."""
ASKED = {
    1: "Book the venue for the launch party",
    2: "Order the launch stickers",
    4: "Brief the press contact",
    7: "Update the pricing page",
    10: "Record the demo video",
    13: "Translate the store listing",
    17: "Plan the launch retrospective",
    21: "Send the customer newsletter",
    25: "Archive the beta feedback",
}
"""The turns whose user message asks the model to track a new goal, and the goal."""
STEPS = ("advance", "block", "advance", "unblock", "complete", "advance", "abandon")
"""What the policy does with one goal of its context each turn, in turn."""
LINE = re.compile(
    r"^(Goal|Action) (#\d{6}) \(([^)]*)\): (.+?)(?: — .*)?$",
    re.M,
)
PROGRESS = re.compile(r"(\d+)% done")


@dataclass(frozen=True)
class Seen:
    """A goal or action as the model last knew it."""

    kind: str
    title: str
    progress: float
    blocked: bool
    status: str = "active"


def read_context(context: str) -> dict[str, Seen]:
    """The open goals and actions the context shows, by handle (what the model can read)."""
    shown = {}
    for kind, handle, flags, title in LINE.findall(context):
        done = PROGRESS.search(flags)
        progress = int(done.group(1)) / 100 if done else 0.0
        shown[handle] = Seen(kind.lower(), title, progress, "blocked" in flags.split(", "))
    return shown


def choose(step: str, shown: dict[str, Seen]) -> tuple[str, dict[str, Any]] | None:
    """The tool call the policy makes for ``step`` on the goals it sees, if one fits."""
    ordered = sorted(shown.items(), key=lambda pair: (pair[1].title, pair[0]))
    free = [(h, s) for h, s in ordered if not s.blocked]
    if step == "advance":
        for handle, seen in free:
            if seen.progress < 0.75:
                return "update_goal", {"goal_id": handle, "progress": seen.progress + 0.25}
    if step == "block" and free:
        return "update_goal", {"goal_id": free[0][0], "status": "blocked"}
    if step == "unblock":
        for handle, seen in ordered:
            if seen.blocked:
                return "update_goal", {"goal_id": handle, "status": "active"}
    if step == "complete" and free:
        handle = max(free, key=lambda pair: pair[1].progress)[0]
        return "complete_goal", {"goal_id": handle}
    if step == "abandon" and free:
        return "update_goal", {"goal_id": free[-1][0], "status": "cancelled"}
    return None


def expected_after(result: dict[str, Any]) -> Seen:
    """The goal as the tool result says it now stands."""
    return Seen(
        kind=result["kind"],
        title=result["title"],
        progress=result["progress"],
        blocked=result["status"] == "blocked",
        status=result["status"],
    )


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """``tool``'s result, read from its JSON text as a model reads it (the call must succeed)."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, (tool, arguments, result.content)
    answer: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]
    return answer


@dataclass
class Tally:
    """What the run did and saw."""

    turns: int = 0
    tool_calls: int = 0
    restarts: int = 0
    changes: Counter[str] = field(default_factory=Counter)
    seen_next_turn: int = 0
    file_items_changed: int = 0


StoresFactory = Callable[[], Stores]


@asynccontextmanager
async def server(
    open_stores: StoresFactory, clock: Callable[[], datetime]
) -> AsyncIterator[Client]:
    """A fresh server (stores, orchestrator, service, MCP server) and a client on it."""
    stores = open_stores()
    try:
        config = OrchestratorConfig.model_validate(
            {"deadline_ms": 60_000, "frontal_cortex": {"active_goals": 20, "pending_actions": 20}}
        )
        orchestrator = Orchestrator(stores, config, clock=clock)
        service = Service(orchestrator, clock=clock)
        async with Client(build_mcp(service, TENANT), read_timeout_seconds=60) as client:
            yield client
    finally:
        await stores.aclose()


async def live(open_stores: StoresFactory) -> Tally:
    """The 30-turn run; every assertion on what each context shows is made here."""
    clock = ticking_clock(T0)
    setup = open_stores()
    try:
        await apply(Orchestrator(setup, clock=clock).agents, load(EXAMPLE))
    finally:
        await setup.aclose()
    tally = Tally()
    world: dict[str, Seen] = {}
    finished: dict[str, Seen] = {}
    file_handles: set[str] = set()
    parent: str | None = None
    bounds = (1, *RESTART_AT, TURNS + 1)
    for segment, (first, end) in enumerate(itertools.pairwise(bounds)):
        tally.restarts += segment > 0
        async with server(open_stores, clock) as client:
            for turn in range(first, end):
                message = f"Please track: {ASKED[turn]}" if turn in ASKED else f"Turn {turn}: next?"
                arguments: dict[str, Any] = {"message": message, "session_id": "e2e"}
                if parent is not None:
                    arguments["parent_turn_id"] = parent
                started = await call(client, "start_turn", arguments)
                tally.tool_calls += 1
                context = started["context"]
                shown = read_context(context)
                if turn == 1:
                    world = dict(shown)
                    file_handles = set(shown)
                    assert {s.title for s in shown.values()} == {
                        "Ship the December 3 launch",
                        "Draft the release notes",
                    }
                assert shown == {h: replace(s, status="active") for h, s in world.items()}, (
                    turn,
                    context,
                )
                for handle, gone in finished.items():
                    assert handle not in context and gone.title not in context.split(
                        "## Recent conversation"
                    )[0].replace(f"Please track: {gone.title}", ""), (turn, handle, context)
                    tally.seen_next_turn += 1
                finished = {}
                if turn in ASKED:
                    made = await call(client, "set_goal", {"title": ASKED[turn]})
                    tally.tool_calls += 1
                    world[made["handle"]] = expected_after(made)
                    tally.changes["created"] += 1
                picked = choose(STEPS[turn % len(STEPS)], shown)
                if picked is not None:
                    tool, chosen = picked
                    handle = chosen["goal_id"]
                    result = await call(client, tool, chosen)
                    tally.tool_calls += 1
                    assert result["handle"] == handle
                    now = expected_after(result)
                    label = {"done": "completed", "cancelled": "abandoned"}.get(now.status)
                    if label is None:
                        label = (
                            "blocked"
                            if now.blocked
                            else ("unblocked" if world[handle].blocked else "advanced")
                        )
                    tally.changes[label] += 1
                    tally.file_items_changed += handle in file_handles
                    if now.status in ("done", "cancelled"):
                        finished[handle] = now
                        del world[handle]
                    else:
                        world[handle] = now
                await call(client, "end_turn", {"turn_id": started["turn_id"], "reply": "Done."})
                tally.tool_calls += 1
                parent = started["turn_id"]
                tally.turns += 1
    return tally


def report(backend: str, tally: Tally) -> None:
    """The run's counts, printed for the record."""
    changes = dict(sorted(tally.changes.items()))
    print(
        f"\nscripted model on {backend}: {tally.turns} turns, {tally.restarts} restarts, "
        f"{tally.tool_calls} tool calls, changes {changes} "
        f"({sum(changes.values())} in all, {tally.file_items_changed} on the file's items), "
        f"finished items seen in the next context {tally.seen_next_turn}"
    )


def check(tally: Tally) -> None:
    """Every kind of change happened, the file's items among them, and three restarts."""
    assert tally.turns == TURNS and tally.restarts == 3
    changes = tally.changes
    for kind in ("created", "advanced", "blocked", "unblocked", "completed", "abandoned"):
        assert changes[kind] >= 1, (kind, changes)
    assert tally.file_items_changed >= 2
    assert tally.seen_next_turn == changes["completed"] + changes["abandoned"]


async def test_a_scripted_model_over_sqlite(tmp_path: Path) -> None:
    """30 turns over MCP on one SQLite file, the server restarted three times."""
    tally = await live(lambda: sqlite.open_stores(tmp_path / "model.db"))
    report("SQLite", tally)
    check(tally)


async def test_a_scripted_model_over_postgres(postgres_dsn: str, postgres_schema: str) -> None:
    """30 turns over MCP on one PostgreSQL schema, the server restarted three times."""
    tally = await live(
        lambda: postgres.open_stores(postgres_dsn, schema=postgres_schema, max_size=4)
    )
    report("PostgreSQL", tally)
    check(tally)
