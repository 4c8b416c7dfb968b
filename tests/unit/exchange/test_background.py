"""Extraction runs off the caller's path, bounded, under the orchestrator's task group."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from prefrontal import StoreError, Stores
from prefrontal.exchange import ExchangeView, Extracted
from prefrontal.exchange.background import BackgroundRunner
from prefrontal.stores import sqlite
from prefrontal.stores.exchange import OrderedExchangeWriter, exchange_writer
from prefrontal.testing import FailingStore
from tests.endturn_support import TENANT, ask, build

pytestmark = pytest.mark.anyio


class GatedExtractor:
    """Waits for ``gate`` before it returns one fact per exchange."""

    def __init__(self) -> None:
        self.gate = anyio.Event()
        self.started = 0

    async def __call__(self, exchange: ExchangeView) -> Sequence[Extracted]:
        self.started += 1
        await self.gate.wait()
        return [Extracted(content=f"The user said: {exchange.user_input}")]


async def test_end_turn_returns_before_the_extractor_ends() -> None:
    """A slow extractor does not hold end_turn; its items arrive when it ends."""
    extractor = GatedExtractor()
    stores = Stores.in_memory()
    async with build(stores, extractor=extractor) as orchestrator:
        result = await orchestrator.start_turn(ask("Call me Mo."))
        ended = await orchestrator.end_turn(result, "Hello, Mo.")
        assert ended.written
        fact = f"{result.context.turn_id}:fact:0"
        assert await stores.semantic.get(TENANT, [fact]) == []
        extractor.gate.set()
        await orchestrator.wait_background()
        assert [i.content for i in await stores.semantic.get(TENANT, [fact])] == [
            "The user said: Call me Mo."
        ]


async def test_a_full_runner_makes_end_turn_wait_instead_of_dropping() -> None:
    """With one slot taken, the next end_turn waits for it; cut off there, its retry schedules it."""
    extractor = GatedExtractor()
    stores = Stores.in_memory()
    orchestrator = build(stores, extractor=extractor, end_turn={"max_pending_extractions": 1})
    async with orchestrator:
        first = await orchestrator.start_turn(ask("One."))
        second = await orchestrator.start_turn(ask("Two."))
        await orchestrator.end_turn(first, "1.")
        with anyio.move_on_after(0.2) as waited:
            await orchestrator.end_turn(second, "2.")
        assert waited.cancelled_caught
        extractor.gate.set()
        await orchestrator.end_turn(second, "2.")
        await orchestrator.wait_background()
    assert extractor.started == 2


async def test_without_entering_the_orchestrator_extraction_runs_inline() -> None:
    """Not entered, the orchestrator has no task group: end_turn runs the extractor itself."""
    extractor = GatedExtractor()
    extractor.gate.set()
    stores = Stores.in_memory()
    orchestrator = build(stores, extractor=extractor)
    result = await orchestrator.start_turn(ask("Inline."))
    await orchestrator.end_turn(result, "Yes.")
    fact = f"{result.context.turn_id}:fact:0"
    assert len(await stores.semantic.get(TENANT, [fact])) == 1


async def test_a_runner_not_entered_refuses_work() -> None:
    """Submitting to a runner outside its ``async with`` is a RuntimeError, not a lost job."""

    async def job() -> None:
        return None

    with pytest.raises(RuntimeError, match="not running"):
        await BackgroundRunner(2).submit(job)


async def test_a_wrapped_store_is_written_through_its_wrapper(tmp_path: Path) -> None:
    """A failing conversation store around SQLite makes end_turn fail: its writer is not bypassed."""
    stores = sqlite.open_stores(tmp_path / "p.db")
    broken = stores.replace(
        conversation=FailingStore(
            stores.conversation, error=StoreError("down"), methods=("append",)
        )
    )
    try:
        orchestrator = build(broken)
        result = await orchestrator.start_turn(ask("Hello?"))
        with pytest.raises(StoreError, match="down"):
            await orchestrator.end_turn(result, "Hi.")
        assert await stores.conversation.recent(TENANT, limit=5) == []
        assert exchange_writer(stores).__class__.__name__ == "SqliteExchangeWriter"
        assert isinstance(exchange_writer(broken), OrderedExchangeWriter)
    finally:
        await stores.aclose()
