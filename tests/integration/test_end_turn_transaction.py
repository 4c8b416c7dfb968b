"""``end_turn``'s one transaction: summary and buffer ride with the exchange, each only if unchanged."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from prefrontal import Stores
from prefrontal.buffer import SessionBuffer
from prefrontal.exchange import ExtractiveSummarizer
from prefrontal.exchange.records import Utterance, exchange
from prefrontal.stores import ConversationSummary, ConversationTurn, sqlite
from prefrontal.stores.conversation import Role
from prefrontal.stores.exchange import Lookup, SummaryChange, exchange_writer, leaving
from prefrontal.stores.sqlite.database import Database
from prefrontal.stores.working_memory import SessionKey, SessionState
from tests.conftest import FIXED_NOW
from tests.endturn_support import AGENT, BACKENDS, SESSION, TENANT, USER, ask, build, open_stores

pytestmark = pytest.mark.anyio
KEY = SessionKey(agent_id=AGENT, user_id=USER, session_id=SESSION)


@pytest.fixture(params=BACKENDS)
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    yield from open_stores(request.param, request, tmp_path)


def summary(text: str, through: str | None) -> ConversationSummary:
    """A rolling summary of the test's tenant."""
    return ConversationSummary(
        agent_id=AGENT, user_id=USER, text=text, updated_at=FIXED_NOW, through=through
    )


def records(
    number: int, *, change: SummaryChange | None = None, session: SessionState | None = None
) -> Any:
    """An exchange of two messages (no trace) carrying ``change`` and ``session``."""
    said = [
        Utterance(item_id=f"m{number}:user", role=Role.USER, content="Hi?", at=FIXED_NOW),
        Utterance(item_id=f"m{number}:reply", role=Role.ASSISTANT, content="Hi.", at=FIXED_NOW),
    ]
    built = exchange(said, tenant=TENANT, session_id=SESSION, thread_id=SESSION)
    return built.model_copy(update={"summary": change, "session": session})


def state(version: int) -> SessionState:
    """A working-memory state of the test's session, saved from ``version``."""
    return SessionState(key=KEY, version=version, started_at=FIXED_NOW, updated_at=FIXED_NOW)


async def test_summary_and_buffer_are_written_with_the_exchange(stores: Stores) -> None:
    """An exchange carrying a new summary and a buffer state writes all three together."""
    change = SummaryChange(summary=summary("user: Hi?", "m0:user"))
    written = await exchange_writer(stores).write(records(1, change=change, session=state(0)))
    assert written is not None and written.summary == change
    assert written.session is not None and written.session.version == 1
    assert await stores.conversation.get_summary(TENANT) == change.summary
    stored = await stores.working_memory.load(KEY)
    assert stored is not None and stored.version == 1
    assert len(await stores.conversation.recent(TENANT, limit=10)) == 2


async def test_a_summary_changed_since_it_was_read_is_left_alone(stores: Stores) -> None:
    """A summary folded from an older one than the stored is not written; the exchange is."""
    await stores.conversation.put_summary(summary("user: Newer.", "m9:reply"))
    stale = SummaryChange(summary=summary("user: Older.", "m1:reply"), replaces=None)
    written = await exchange_writer(stores).write(records(2, change=stale))
    assert written is not None and written.summary is None
    kept = await stores.conversation.get_summary(TENANT)
    assert kept is not None and kept.text == "user: Newer."
    assert len(await stores.conversation.recent(TENANT, limit=10)) == 2


async def test_a_buffer_saved_since_it_was_read_is_left_alone(stores: Stores) -> None:
    """A buffer state saved from an older version than the stored one is not written."""
    await stores.working_memory.save(state(0))
    written = await exchange_writer(stores).write(records(3, session=state(0)))
    assert written is not None and written.session is None
    stored = await stores.working_memory.load(KEY)
    assert stored is not None and stored.version == 1
    assert len(await stores.conversation.recent(TENANT, limit=10)) == 2


async def test_prior_reads_the_messages_the_fold_takes(stores: Stores) -> None:
    """``prior`` gives the messages past the window, after the summary's own, the incoming too."""
    writer = exchange_writer(stores)
    for number in range(4):
        await writer.write(records(number))
    await stores.conversation.put_summary(summary("user: Hi?", "m0:reply"))
    incoming = records(4).messages
    lookup = Lookup(
        tenant=TENANT, turn_id="none", session=KEY, fold=True, window=4, batch=4, incoming=incoming
    )
    prior = await writer.prior(lookup)
    assert [m.item_id for m in prior.leaving] == ["m1:user", "m1:reply", "m2:user", "m2:reply"]
    assert prior.summary is not None and prior.summary.through == "m0:reply"
    assert not prior.ended and prior.trace is None and prior.session is None


def test_leaving_orders_the_incoming_messages_by_time_among_the_stored() -> None:
    """Incoming messages dated before stored ones leave the window first, as once written."""
    later = FIXED_NOW + timedelta(hours=1)
    stored = [(name, later) for name in ("a", "b", "c")]
    incoming = records(9).messages  # dated FIXED_NOW: older than every stored message
    lookup = Lookup(
        tenant=TENANT, turn_id="t", session=KEY, fold=True, window=2, batch=8, incoming=incoming
    )
    found = leaving(stored, incoming, lookup=lookup, through=None)
    assert [e if isinstance(e, int) else e.item_id for e in found] == ["m9:user", "m9:reply", 0]
    assert leaving(stored, incoming, lookup=lookup, through="m9:reply") == [0]
    assert leaving(stored, incoming, lookup=lookup, through="a") == []


class RacingSummarizer:
    """Summarizes like the default, but first changes the summary and the buffer behind its back.

    So the transaction finds both changed since they were read, as when
    another worker ends a turn of the same user at the same moment.
    """

    def __init__(self, stores: Stores) -> None:
        self.stores, self.raced = stores, False

    async def __call__(
        self,
        previous: str | None,
        messages: Sequence[ConversationTurn],
        max_tokens: int,
        count_tokens: Callable[[str], int],
    ) -> str:
        if not self.raced:
            self.raced = True
            await self.stores.conversation.put_summary(summary("user: Elsewhere.", "other"))
            session = await SessionBuffer.load(self.stores.working_memory, KEY)
            await session.save(FIXED_NOW)
        return await ExtractiveSummarizer()(previous, messages, max_tokens, count_tokens)


async def test_end_turn_redoes_a_summary_and_a_buffer_that_lost_a_race(stores: Stores) -> None:
    """Summary and buffer changed between read and write: both are done again after the commit."""
    orchestrator = build(
        stores, summarizer=RacingSummarizer(stores), conversation={"recent_turns": 2}
    )
    first = await orchestrator.start_turn(ask("First question."))
    await orchestrator.end_turn(first, "First answer.")
    second = await orchestrator.start_turn(ask("Second question.", first.context.turn_id))
    ended = await orchestrator.end_turn(second, "Second answer.")
    steps = {s.name: s for s in ended.trace.steps}
    assert steps["summary"].detail.get("again") and steps["buffer"].detail.get("again")
    assert all(s.status.value == "ok" for s in ended.trace.steps)
    folded = await stores.conversation.get_summary(TENANT)
    assert folded is not None
    assert folded.text.splitlines()[-2:] == ["user: First question.", "assistant: First answer."]
    stored = await stores.traces.get(TENANT, second.context.turn_id)
    assert stored is not None and stored.ending == ended.trace
    buffer = await SessionBuffer.load(stores.working_memory, KEY)
    assert f"exchange:{second.context.turn_id}" in {i.item_id for i in buffer.items}


async def test_on_sqlite_an_end_turn_is_one_read_and_one_write(tmp_path: Path) -> None:
    """With nothing due for consolidation, a SQLite end_turn reads once and commits once."""
    stores = sqlite.open_stores(tmp_path / "p.db")
    try:
        orchestrator = build(stores, conversation={"recent_turns": 2})
        parent: str | None = None
        for number in range(3):
            result = await orchestrator.start_turn(ask(f"Question {number}.", parent))
            parent = result.context.turn_id
            calls = count_transactions(stores)
            ended = await orchestrator.end_turn(result, f"Answer {number}.")
            assert calls == {"read": 1, "write": 1}, (number, calls)
        assert ended.trace.step("summary").detail["folded"] == 2
    finally:
        await stores.aclose()


def count_transactions(stores: Stores) -> dict[str, int]:
    """Count the SQLite database's read and write transactions from now on (a live dict)."""
    database = stores.conversation.database  # type: ignore[attr-defined]
    assert isinstance(database, Database)
    calls = {"read": 0, "write": 0}
    for name in ("read", "write"):
        original = getattr(Database, name)

        def counted(
            fn: Any, *, store: str, _name: str = name, _original: Any = original, **options: Any
        ) -> Any:
            calls[_name] += 1
            return _original(database, fn, store=store, **options)

        setattr(database, name, counted)
    return calls
