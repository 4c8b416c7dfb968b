"""The SQLite stores validate each stored body of a turn's small records once while it is read
again: the same records as validating every read, a changed body read as it is now."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from prefrontal.demo import DEMO_AGENT, DEMO_USER, seed
from prefrontal.forgetting import forget_everything
from prefrontal.stores import Stores, Tenant, sqlite
from prefrontal.stores.frontal_cortex import FrontalQuery
from prefrontal.stores.sqlite import decoded
from prefrontal.stores.working_memory import SessionKey, SessionState, joined, stored_parts
from tests.conftest import FIXED_NOW
from tests.endturn_support import AGENT, ask, build

pytestmark = pytest.mark.anyio
TENANT = Tenant(agent_id=DEMO_AGENT, user_id=DEMO_USER)
DECODERS = (
    decoded.conversation_turn,
    decoded.conversation_summary,
    decoded.frontal_item,
    decoded.observation,
    decoded.agent_profile,
)


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    """SQLite stores in a fresh file, holding the demo agent's records."""
    opened = sqlite.open_stores(tmp_path / "decoded.db")
    await opened.open()
    await seed(opened)
    yield opened
    await opened.aclose()


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The bodies validated from now on, by any of the decoders (the caches emptied first)."""
    forget_everything()
    seen: list[str] = []
    for decoder in DECODERS:
        validate: Callable[[str], Any] = decoder.cache._compute

        def counted(body: str, validate: Callable[[str], Any] = validate) -> Any:
            seen.append(body)
            return validate(body)

        monkeypatch.setattr(decoder.cache, "_compute", counted)
    return seen


async def read_all(stores: Stores) -> list[Any]:
    """Every small record a turn reads of the demo tenant."""
    return [
        await stores.conversation.recent(TENANT, limit=20),
        await stores.conversation.get_summary(TENANT),
        await stores.frontal_cortex.query(TENANT, FrontalQuery()),
        await stores.scratch_page.active(TENANT, now=FIXED_NOW, limit=20),
        await stores.consciousness.get_profile(TENANT),
    ]


async def test_records_read_again_are_not_validated_again(
    stores: Stores, validations: list[str]
) -> None:
    """A second read validates nothing and gives equal records; after every cache is emptied
    (as an erase does) the bodies are validated again, to the same records."""
    first = await read_all(stores)
    validated = len(validations)
    again = await read_all(stores)
    assert again == first
    assert len(validations) == validated > 10
    forget_everything()
    assert await read_all(stores) == first
    assert len(validations) == 2 * validated


async def test_a_changed_record_is_read_as_it_is_now(
    stores: Stores, validations: list[str]
) -> None:
    """A record put again with other content is read with it, never the held one."""
    (goal, *_) = await stores.frontal_cortex.query(TENANT, FrontalQuery())
    await stores.frontal_cortex.put(goal.model_copy(update={"title": "A new title"}))
    (now, *_) = await stores.frontal_cortex.query(TENANT, FrontalQuery())
    assert now.title == "A new title"


async def test_a_saved_session_state_reads_back_as_its_body_validated(tmp_path: Path) -> None:
    """After turns that save the session's working memory, the state read back (held from
    the save, not validated) equals its stored body validated, and so does the state read
    once every cache is emptied."""
    stores = sqlite.open_stores(tmp_path / "sessions.db")
    await stores.open()
    await seed(stores)
    try:
        orchestrator = build(stores)
        parent = None
        for text in ("What is due on Friday?", "Who signs the payment review off?"):
            result = await orchestrator.start_turn(ask(text, parent))
            await orchestrator.end_turn(result, "Lena signs it off on Friday.")
            await orchestrator.wait_background()
            parent = result.context.turn_id
        keys = await stores.working_memory.sessions(AGENT)
        assert keys
        held = await stores.working_memory.load(keys[0])
        assert held is not None
        assert len(decoded.session_states) > 0
        body, document = await _body(stores, keys[0])
        assert document is not None and "buffer" not in json.loads(body)["state"]
        assert held == joined(body, document)
        forget_everything()
        assert len(decoded.session_states) == 0
        assert await stores.working_memory.load(keys[0]) == held
    finally:
        await stores.aclose()


async def _body(stores: Stores, key: SessionKey) -> tuple[str, str | None]:
    """A session's stored JSON and buffer document."""
    database = stores.working_memory.database  # type: ignore[attr-defined]
    sql = "SELECT body, buffer FROM wm_sessions WHERE agent_id = ? AND user_id = ?"
    sql += " AND session_id = ?"
    params = (key.agent_id, key.user_id, key.session_id)
    row = await database.read(lambda c: c.execute(sql, params).fetchone(), store="test")
    return str(row[0]), row[1]


async def test_a_session_state_is_stored_as_its_json_text(tmp_path: Path) -> None:
    """A state written and read as UTF-8 bytes is stored as text: the columns' type is text,
    the body ``model_dump_json()`` of the state read back but its buffer document, which is
    the other column as it was given (its UTF-8 bytes, read back as bytes), a character beyond Latin-1 (two bytes a character as
    a Python string) and one beyond the basic plane kept."""
    stores = sqlite.open_stores(tmp_path / "sessions.db")
    await stores.open()
    try:
        key = SessionKey(agent_id=AGENT, user_id="maya", session_id="s-\u2014")
        note = "caf\u00e9 \u2014 \u201cquoted\u201d \U0001f600"
        document = json.dumps({"items": [{"text": note}]}, ensure_ascii=False).encode()
        words = {"note": note, "buffer": document}  # the document as a buffer writes it
        state = SessionState(key=key, state=words, started_at=FIXED_NOW, updated_at=FIXED_NOW)
        saved = await stores.working_memory.save(state)
        forget_everything()
        loaded = await stores.working_memory.load(key)
        assert loaded == saved
        assert loaded is not None and loaded.state == words
        database = stores.working_memory.database  # type: ignore[attr-defined]
        sql = "SELECT typeof(body), body, typeof(buffer), buffer FROM wm_sessions"
        sql += " WHERE session_id = ?"
        row = await database.read(lambda c: c.execute(sql, (key.session_id,)).fetchone(), store="t")
        assert row[0] == row[2] == "text"
        assert row[1] == loaded.model_dump_json(exclude={"state": {"buffer"}})
        assert row[3] == document.decode()
        (recent,) = await stores.working_memory.recent_sessions(
            key.tenant, since=FIXED_NOW, limit=5
        )
        assert recent == saved
    finally:
        await stores.aclose()


def test_a_session_slot_gives_its_record_only_for_the_parts_held() -> None:
    """Parts read in a session's slot are the record held there when they are the parts held
    (the same bytes), read anew when either differs (another version, another document,
    another database's session of the same key)."""
    states = decoded.Documents(joined, 2)
    key = SessionKey(agent_id=AGENT, user_id="maya", session_id="s1")
    first = SessionState(
        key=key, version=1, state={"buffer": b"{}"}, started_at=FIXED_NOW, updated_at=FIXED_NOW
    )
    second = first.model_copy(update={"version": 2})
    slot = (key.agent_id, key.user_id, key.session_id)
    parts = stored_parts(first, store="test")
    assert parts[1] == b"{}"
    assert states.remember(slot, parts, first) is first
    assert states(slot, (bytes(parts[0]), b"{}")) is first
    other_document = states(slot, (parts[0], b'{"a":1}'))
    assert other_document.state == {"buffer": b'{"a":1}'}
    other = states(slot, stored_parts(second, store="test"))
    assert other == second and other is not second
    assert states(slot, stored_parts(second, store="test")) is other
    assert states(slot, parts) == first


def test_a_session_slots_held_bytes_are_its_parts_and_leave_the_order_of_use() -> None:
    """``held_bytes`` is the length of the parts held in a slot (``None`` for a slot holding
    none), and asking it does not make the slot the most recently used."""
    states = decoded.Documents(joined, 2)
    key = SessionKey(agent_id=AGENT, user_id="maya", session_id="s1")
    state = SessionState(
        key=key, version=1, state={"buffer": "{}"}, started_at=FIXED_NOW, updated_at=FIXED_NOW
    )
    parts = stored_parts(state, store="test")
    assert states.held_bytes("first") is None
    states.remember("first", parts, state)
    states.remember("second", (parts[0], None), state)
    assert states.held_bytes("first") == len(parts[0]) + len(b"{}")
    assert states.held_bytes("second") == len(parts[0])
    states.remember("third", parts, state)  # the least recently used, "first", is dropped
    assert states.held_bytes("first") is None and states.held_bytes("second") is not None
