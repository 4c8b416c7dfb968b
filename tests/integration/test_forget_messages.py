"""``forget`` of a turn's messages on every backend: gone from every place the next turn reads.

A turn's exchange is written as two conversation messages (``<turn>:user``,
``<turn>:reply``), two episodic items of the same ids, an ``exchange:<turn>``
item of the session's buffer and, once it leaves the recent window, lines of
the rolling summary. Forgetting the two ids must leave the next turn without
any of it; forgetting one must remove that one and keep the other.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import anyio
import pytest

from prefrontal import Orchestrator, Stores
from prefrontal.buffer import SessionBuffer
from prefrontal.exchange import ExchangeView, Extracted
from prefrontal.stores import MemoryQuery, SessionKey
from tests.endturn_support import (
    AGENT,
    BACKENDS,
    SESSION,
    TENANT,
    USER,
    Ticking,
    ask,
    build,
    open_stores,
)

pytestmark = pytest.mark.anyio

SECRET = "My locker code is Q7-LOCKER-4411."
ANSWER = "Noted: your locker code is Q7-LOCKER-4411."


@pytest.fixture(params=BACKENDS)
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    yield from open_stores(request.param, request, tmp_path)


async def held_texts(stores: Stores) -> str:
    """Everything the session's saved buffer holds, as one text."""
    key = SessionKey(agent_id=AGENT, user_id=USER, session_id=SESSION)
    session = await SessionBuffer.load(stores.working_memory, key)
    return "\n".join(item.content for item in session.items)


async def said(orchestrator: Orchestrator) -> tuple[str, str]:
    """One turn that tells the secret and is ended; its two message ids."""
    turn = await orchestrator.start_turn(ask(SECRET))
    ended = await orchestrator.end_turn(turn, ANSWER)
    user_id, reply_id = ended.message_ids
    return user_id, reply_id


async def test_forgetting_a_turns_messages_removes_the_exchange_from_the_next_turn(
    stores: Stores,
) -> None:
    """The reproduction: both ids forgotten, the next turn shows nothing of the exchange."""
    orchestrator = build(stores)
    user_id, reply_id = await said(orchestrator)
    assert "Q7-LOCKER-4411" in await held_texts(stores)
    assert await orchestrator.memory.forget(TENANT, user_id)
    assert await orchestrator.memory.forget(TENANT, reply_id)
    assert "Q7-LOCKER-4411" not in await held_texts(stores)
    later = await orchestrator.start_turn(ask("What is my locker code?"))
    assert "Q7-LOCKER-4411" not in later.bundle.text
    messages = await stores.conversation.recent(TENANT, limit=10, session_id=SESSION)
    assert [m.content for m in messages] == []
    assert await stores.episodic.get(TENANT, [user_id, reply_id]) == []
    assert "Q7-LOCKER-4411" not in await held_texts(stores)


async def test_one_message_can_be_forgotten_alone(stores: Stores) -> None:
    """Forgetting ``<turn>:user`` keeps the reply; the buffer's exchange item goes with it."""
    orchestrator = build(stores)
    user_id, reply_id = await said(orchestrator)
    assert await orchestrator.memory.forget(TENANT, user_id)
    messages = await stores.conversation.recent(TENANT, limit=10, session_id=SESSION)
    assert [m.item_id for m in messages] == [reply_id]
    later = await orchestrator.start_turn(ask("What did you note?"))
    assert SECRET not in later.bundle.text
    assert ANSWER in later.bundle.text


async def test_forgotten_is_true_only_when_something_was_removed(stores: Stores) -> None:
    """An unknown id, and an id forgotten already, answer ``False``."""
    orchestrator = build(stores)
    user_id, _ = await said(orchestrator)
    assert not await orchestrator.memory.forget(TENANT, "never-said")
    assert await orchestrator.memory.forget(TENANT, user_id)
    assert not await orchestrator.memory.forget(TENANT, user_id)


async def test_a_folded_message_leaves_the_rolling_summary(stores: Stores) -> None:
    """With a window of two messages the first exchange is folded; forgetting it rebuilds the
    summary from what remains, and the next turn shows no line of it."""
    orchestrator = build(stores, conversation={"recent_turns": 2})
    user_id, reply_id = await said(orchestrator)
    for n in range(2):
        turn = await orchestrator.start_turn(ask(f"Plan step {n} of the move."))
        await orchestrator.end_turn(turn, f"Step {n} is booked.")
    summary = await stores.conversation.get_summary(TENANT)
    assert summary is not None
    assert "Q7-LOCKER-4411" in summary.text
    assert await orchestrator.memory.forget(TENANT, user_id)
    assert await orchestrator.memory.forget(TENANT, reply_id)
    rebuilt = await stores.conversation.get_summary(TENANT)
    assert rebuilt is not None
    assert "Q7-LOCKER-4411" not in rebuilt.text
    assert "Plan step 0 of the move." in rebuilt.text
    assert rebuilt.through is not None
    assert rebuilt.through not in (user_id, reply_id)
    later = await orchestrator.start_turn(ask("What is my locker code?"))
    assert "Q7-LOCKER-4411" not in later.bundle.text


async def test_the_turns_trace_loses_the_forgotten_text(stores: Stores) -> None:
    """The trace keeps its timings and ids, not the text; a retried end is still answered."""
    orchestrator = build(stores)
    turn = await orchestrator.start_turn(ask(SECRET))
    ended = await orchestrator.end_turn(turn, ANSWER)
    for message_id in ended.message_ids:
        assert await orchestrator.memory.forget(TENANT, message_id)
    trace = await stores.traces.get(TENANT, turn.context.turn_id)
    assert trace is not None and trace.ending is not None
    assert (trace.user_input, trace.ending.reply) == (None, "")
    assert trace.forgotten == ended.message_ids
    assert "Q7-LOCKER-4411" not in trace.model_dump_json()
    again = await orchestrator.end_turn(turn, ANSWER)
    assert not again.written


class GatedExtractor:
    """Finds one fact holding the user's input, once ``gate`` is set; ``entered`` says it began."""

    def __init__(self) -> None:
        self.entered, self.gate = anyio.Event(), anyio.Event()

    async def __call__(self, exchange: ExchangeView) -> Sequence[Extracted]:
        self.entered.set()
        await self.gate.wait()
        return [Extracted(content=f"The user said: {exchange.user_input}")]


async def test_an_extraction_in_flight_lands_nothing_after_the_message_is_forgotten(
    stores: Stores,
) -> None:
    """The turn's extraction is running when its user message is forgotten: the forget
    stops it, so no fact drawn from the message is written, even once the extractor would
    have answered; the trace keeps no text."""
    extractor, clock = GatedExtractor(), Ticking()
    async with build(stores, extractor=extractor, clock=clock) as orchestrator:
        turn = await orchestrator.start_turn(ask(SECRET))
        ended = await orchestrator.end_turn(turn, ANSWER)
        with anyio.fail_after(10):
            await extractor.entered.wait()
        assert await orchestrator.memory.forget(TENANT, ended.message_ids[0])
        extractor.gate.set()
        await orchestrator.wait_background()
        query = MemoryQuery(text="locker code", limit=10, now=clock())
        facts = await stores.semantic.search(TENANT, query)
        assert [f.item.content for f in facts if "Q7-LOCKER-4411" in f.item.content] == []
        trace = await stores.traces.get(TENANT, turn.context.turn_id)
        assert trace is not None and trace.user_input is None
        assert trace.forgotten == (ended.message_ids[0],)
        assert "Q7-LOCKER-4411" not in (trace.user_input or "")
