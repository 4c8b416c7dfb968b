"""Bad input to the SQLite stores: a clear error or a correct result, never a broken index."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from prefrontal.errors import ItemRejectedError
from prefrontal.stores import (
    ConversationTurn,
    MemoryItem,
    MemoryQuery,
    Observation,
    Role,
    SessionKey,
    SessionState,
    Stores,
    Tenant,
    sqlite,
)
from prefrontal.stores.conversation import MAX_CONTENT_CHARS
from prefrontal.stores.sqlite.driver import sqlite3
from prefrontal.testing.conformance.sessions import trace
from tests.conftest import FIXED_NOW

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id="agent-1", user_id="alice")
TEN_MB = "x" * 10_000_000
SURROGATE = "bad \ud800 text"
_EXAMPLES = itertools.count()
"""Numbers the examples of the round-trip property: each writes under ids of its own."""


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    stores = sqlite.open_stores(tmp_path / "bad.db")
    yield stores
    await stores.aclose()


def memory(item_id: str = "m", content: str = "fine", **fields: object) -> MemoryItem:
    return MemoryItem(
        **({"created_at": FIXED_NOW} | fields),
        item_id=item_id,
        agent_id="agent-1",
        user_id="alice",
        content=content,
    )


@pytest.mark.parametrize("content", ["", TEN_MB, SURROGATE])
def test_models_refuse_empty_oversized_and_unencodable_content(content: str) -> None:
    """Empty, 10 MB and lone-surrogate content fail validation with a message naming the field."""
    with pytest.raises(ValidationError, match="content"):
        memory(content=content)
    with pytest.raises(ValidationError, match="content"):
        ConversationTurn(
            item_id="t", agent_id="a", user_id="u", session_id="s", role=Role.USER, content=content
        )


@pytest.mark.parametrize("field", ["agent_id", "user_id"])
@pytest.mark.parametrize("value", ["", SURROGATE])
def test_tenants_refuse_empty_and_unencodable_ids(field: str, value: str) -> None:
    """A tenant with an empty or unencodable id is a validation error."""
    with pytest.raises(ValidationError):
        Tenant(**{"agent_id": "a", "user_id": "u", field: value})


async def test_raw_ids_answer_as_unknown(stores: Stores) -> None:
    """Empty, unencodable and 10 MB ids given to lookups find nothing and change nothing."""
    await stores.episodic.put(memory())
    for bad in ("", SURROGATE, TEN_MB):
        assert await stores.episodic.get(ALICE, [bad]) == []
        assert await stores.episodic.around(ALICE, [bad], radius=3, now=FIXED_NOW) == []
        await stores.episodic.record_recall(ALICE, [bad], memory().created_at)
        assert await stores.scratch_page.resolve(ALICE, bad) is False
        assert await stores.traces.get(ALICE, bad) is None
    (item,) = await stores.episodic.get(ALICE, ["m"])
    assert item.recall_count == 0


async def test_integers_sqlite_cannot_hold_are_rejected(stores: Stores) -> None:
    """A thread position beyond 64 bits is refused with ItemRejectedError; nothing is written."""
    with pytest.raises(ItemRejectedError):
        await stores.episodic.put(memory(position=2**70, thread_id="t"))
    assert await stores.episodic.get(ALICE, ["m"]) == []


async def test_unencodable_payloads_are_rejected(stores: Stores) -> None:
    """Free-form payloads (buffer state, trace detail) holding lone surrogates are refused."""
    key = SessionKey(agent_id="agent-1", user_id="alice", session_id="s")
    with pytest.raises(ItemRejectedError):
        await stores.working_memory.save(SessionState(key=key, state={"x": SURROGATE}))
    bad_trace = trace("t1").model_copy(update={"warnings": (SURROGATE,)})
    with pytest.raises(ItemRejectedError):
        await stores.traces.put(bad_trace)
    assert await stores.working_memory.load(key) is None


async def test_largest_conversation_turn_round_trips(stores: Stores) -> None:
    """A turn of the maximum length is stored and read back whole."""
    turn = ConversationTurn(
        item_id="t",
        agent_id="agent-1",
        user_id="alice",
        session_id="s",
        role=Role.TOOL,
        content="y" * MAX_CONTENT_CHARS,
    )
    await stores.conversation.append(turn)
    assert await stores.conversation.recent(ALICE, limit=1) == [turn]


async def test_scratch_entry_round_trips_odd_text(stores: Stores) -> None:
    """Quotes, SQL and FTS syntax in text are stored as text."""
    odd = '\'); DROP TABLE scratch_entries; -- "NEAR(a b)" * ^ {x}'
    entry = Observation(item_id=odd, agent_id="agent-1", user_id="alice", content=odd, tags=(odd,))
    await stores.scratch_page.put(entry)
    assert await stores.scratch_page.active(ALICE, now=entry.created_at, limit=5) == [entry]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    contents=st.lists(st.text(min_size=1, max_size=200).filter(str.isprintable), max_size=5),
    query=st.text(max_size=200),
)
def test_any_text_round_trips_and_never_breaks_search(
    tmp_path: Path, contents: list[str], query: str
) -> None:
    """Any printable text is stored exactly, any query is answered, the index stays sound.

    Every example writes to the same file (made once: its schema is the slow part), under
    ids of its own, so the index checked holds every earlier example's text too.
    """
    path = tmp_path / "prop.db"
    example = next(_EXAMPLES)

    async def run() -> None:
        stores = sqlite.open_stores(path)
        try:
            items = [memory(f"p{example}-{i}", text) for i, text in enumerate(contents)]
            await stores.semantic.put(memory("anchor", "so the file exists"))
            try:
                await stores.episodic.put_many(items)
            except ItemRejectedError:
                return
            assert await stores.episodic.get(ALICE, [i.item_id for i in items]) == items
            with contextlib.suppress(ValidationError):
                await stores.episodic.search(ALICE, MemoryQuery(text=query, now=FIXED_NOW))
        finally:
            await stores.aclose()

    anyio.run(run)
    connection = sqlite3.connect(path)
    connection.execute("INSERT INTO episodic_fts (episodic_fts) VALUES ('integrity-check')")
    assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    connection.close()
