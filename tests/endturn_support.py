"""Shared pieces of the end-turn tests: a ticking clock, stores on every backend, a scripted extractor."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path

import anyio
import pytest

from prefrontal import Orchestrator, OrchestratorConfig, Stores, TurnRequest
from prefrontal.exchange import ExchangeView, Extracted, Extractor, Summarizer
from prefrontal.stores import Tenant, sqlite
from tests.conftest import FIXED_NOW, counting_ids

AGENT, USER, SESSION = "atlas", "maya", "loop"
TENANT = Tenant(agent_id=AGENT, user_id=USER)
BACKENDS = ("memory", "sqlite", "postgres")


class Ticking:
    """A clock that moves ``step`` forward at every reading, from ``start``."""

    def __init__(self, start: datetime = FIXED_NOW, step: timedelta = timedelta(seconds=1)) -> None:
        self.now, self.step = start, step

    def __call__(self) -> datetime:
        self.now += self.step
        return self.now


def open_stores(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    """Fresh stores of one backend: in memory, a SQLite file, or a PostgreSQL schema.

    A sync generator (so it may ask for the async PostgreSQL fixture): the
    SQLite file is closed after the test, outside its event loop.
    """
    if kind == "memory":
        yield Stores.in_memory()
    elif kind == "sqlite":
        stores = sqlite.open_stores(tmp_path / "prefrontal.db")
        yield stores
        anyio.run(stores.aclose)
    else:
        yield request.getfixturevalue("postgres_stores")


def build(
    stores: Stores,
    *,
    clock: Callable[[], datetime] | None = None,
    ids: str = "turn",
    extractor: Extractor | None = None,
    summarizer: Summarizer | None = None,
    **config: object,
) -> Orchestrator:
    """An orchestrator with a ticking clock, counting ids and a generous deadline."""
    return Orchestrator(
        stores,
        OrchestratorConfig.model_validate({"deadline_ms": 30_000, **config}),
        clock=clock or Ticking(),
        ids=counting_ids(ids),
        extractor=extractor,
        summarizer=summarizer,
    )


def ask(text: str, parent: str | None = None, session: str = SESSION) -> TurnRequest:
    """A request of the loop's user."""
    return TurnRequest(
        agent_id=AGENT, user_id=USER, session_id=session, user_input=text, parent_turn_id=parent
    )


class ScriptedExtractor:
    """Finds the facts a script names for exact user inputs; raises for inputs in ``fail``."""

    def __init__(self, script: dict[str, Sequence[Extracted]], fail: Sequence[str] = ()) -> None:
        self.script, self.fail = script, set(fail)
        self.seen: list[str] = []

    async def __call__(self, exchange: ExchangeView) -> Sequence[Extracted]:
        self.seen.append(exchange.turn_id)
        if exchange.user_input in self.fail:
            raise RuntimeError(f"cannot read {exchange.user_input!r}")
        return self.script.get(exchange.user_input, ())
