"""A ten-turn conversation, run through the orchestrator directly and through a framework.

Turn 2 says a fact (where and when Ana's wedding is); turn 9 asks about it;
turn 4 calls a tool. :func:`direct_run` plays the turns through
``Orchestrator`` itself and keeps each turn's model input
(``bundle.to_messages(user_input=...)``) and its ``TurnResult``; a framework
test plays the same turns through the framework and compares.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from prefrontal import Orchestrator, Stores, TurnRequest
from prefrontal.bundle.messages import Message
from prefrontal.exchange.models import ToolCall
from prefrontal.stores import Tenant, postgres, sqlite
from prefrontal.turn import TurnResult
from tests.conftest import counting_ids, fixed_clock

AGENT = "atlas"
USER = "maya"
SESSION = "s-42"
FACT = "Ana's wedding is in Porto on June 14"
INPUTS = (
    "Hi, I'm planning a trip this summer.",
    f"Remember this: my sister {FACT}.",
    "I also need to renew my passport before then.",
    "Is June 14 free in my calendar?",
    "Let's think about flights from Berlin.",
    "I prefer morning departures.",
    "Budget is around 400 euros for the flight.",
    "Can you suggest a hotel area later?",
    "Where and when is my sister's wedding again?",
    "Thanks, that's all for now.",
)
FACT_WORDS = "in Porto on June 14"
"""The fact as a turn's context words it (the words, whatever quoting the rendering adds)."""
FACT_TURN = 2
ASK_TURN = 9
TOOL_TURN = 4
TOOL_NAME = "check_calendar"
TOOL_ARGUMENTS = {"day": "June 14"}
TOOL_RESULT = "June 14: free all day"


def reply_for(turn: int) -> str:
    """The model's reply at ``turn`` (1-based), the same in every run."""
    return f"Noted, step {turn}."


def tool_calls_for(turn: int) -> list[ToolCall]:
    """The tool calls the model makes at ``turn``."""
    if turn != TOOL_TURN:
        return []
    return [ToolCall(name=TOOL_NAME, arguments=dict(TOOL_ARGUMENTS), result=TOOL_RESULT)]


@dataclass
class Run:
    """Each turn's model input (the first model call of the turn) and started turn."""

    inputs: list[list[Message]] = field(default_factory=list)
    results: list[TurnResult] = field(default_factory=list)


BACKENDS = ("memory", "sqlite", "postgres")
_SCHEMAS = itertools.count(1)


def dsn_for(backend: str, request: pytest.FixtureRequest) -> str | None:
    """The test PostgreSQL database for the ``postgres`` backend (skipped where none can start)."""
    if backend != "postgres":
        return None
    dsn: str = request.getfixturevalue("postgres_dsn")
    return dsn


@asynccontextmanager
async def orchestrator_on(
    backend: str, tmp_path: Path, dsn: str | None = None
) -> AsyncIterator[Orchestrator]:
    """An orchestrator with a fixed clock and counting ids, on memory, a SQLite file or PostgreSQL.

    On PostgreSQL (``dsn`` given) each orchestrator gets a schema of its own.
    """
    if backend == "memory":
        stores = Stores.in_memory()
    elif backend == "postgres":
        assert dsn is not None, "the postgres backend needs the test database's dsn"
        stores = postgres.open_stores(dsn, schema=f"integrations_{next(_SCHEMAS)}", max_size=4)
    else:
        stores = sqlite.open_stores(tmp_path / f"{backend}-{id(tmp_path)}.db")
    orchestrator = Orchestrator(stores, clock=fixed_clock, ids=counting_ids())
    try:
        async with orchestrator:
            yield orchestrator
    finally:
        await stores.aclose()


async def direct_run(orchestrator: Orchestrator, *, tools: bool = True) -> Run:
    """The ten turns through ``start_turn`` and ``end_turn`` themselves (turn 4's tool call unless not ``tools``)."""
    run = Run()
    for turn, text in enumerate(INPUTS, start=1):
        result = await orchestrator.start_turn(
            TurnRequest(agent_id=AGENT, user_id=USER, session_id=SESSION, user_input=text)
        )
        run.inputs.append(result.bundle.to_messages(user_input=text))
        run.results.append(result)
        calls = tool_calls_for(turn) if tools else []
        await orchestrator.end_turn(result, reply_for(turn), tool_calls=calls)
    return run


def fact_provenance(result: TurnResult) -> list[tuple[str, tuple[str, ...]]]:
    """Where each fragment that holds turn 2's fact came from: ``(store, item ids)``."""
    return [
        (f.provenance.store, f.provenance.item_ids)
        for f in result.bundle.fragments
        if "Porto" in f.text
    ]


def pairs(messages: list[Message]) -> list[tuple[str, str]]:
    """Messages as ``(role, content)`` pairs, to compare runs."""
    return [(m["role"], m["content"]) for m in messages]


def tenant() -> Tenant:
    """The conversation's agent and user."""
    return Tenant(agent_id=AGENT, user_id=USER)
