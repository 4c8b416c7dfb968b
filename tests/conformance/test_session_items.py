"""The session-items store keeps each framework session's items in order and as given,
on every backend: appends in order, newest-``limit`` reads, pop, clear, tenancy, erase."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from prefrontal.errors import ErasedTenantError
from prefrontal.memory.erasure import erase
from prefrontal.stores import SessionKey, Stores, Tenant, sqlite

pytestmark = pytest.mark.anyio

ALICE = SessionKey(agent_id="atlas", user_id="alice", session_id="s1")
ALICE_OTHER = SessionKey(agent_id="atlas", user_id="alice", session_id="s2")
BOB = SessionKey(agent_id="atlas", user_id="bob", session_id="s1")
OTHER_AGENT = SessionKey(agent_id="hermes", user_id="alice", session_id="s1")

CALL: dict[str, Any] = {
    "type": "function_call",
    "call_id": "call_1",
    "name": "lookup",
    "arguments": '{"city": "Zürich"}',
    "id": "fc_1",
}
OUTPUT: dict[str, Any] = {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}
PARTS: dict[str, Any] = {
    "role": "assistant",
    "type": "message",
    "id": "msg_1",
    "status": "completed",
    "content": [{"type": "output_text", "text": "It is \x00 sunny \ud83d", "annotations": []}],
}


async def test_items_come_back_as_given_in_order(stores: Stores) -> None:
    """Function calls, outputs, content parts and ids are returned equal, oldest first."""
    given = [{"role": "user", "content": "Weather?"}, CALL, OUTPUT, PARTS]
    await stores.session_items.append(ALICE, given[:2])
    await stores.session_items.append(ALICE, given[2:])
    assert await stores.session_items.items(ALICE) == given
    assert await stores.session_items.items(ALICE, limit=2) == given[2:]
    assert await stores.session_items.items(ALICE, limit=10) == given
    assert await stores.session_items.items(ALICE, limit=0) == []


async def test_reads_return_fresh_objects(stores: Stores) -> None:
    """Changing a returned item, or the list given, changes nothing stored."""
    given = [{"role": "user", "content": "hi"}]
    await stores.session_items.append(ALICE, given)
    given[0]["content"] = "changed by the caller"
    read = await stores.session_items.items(ALICE)
    read[0]["content"] = "changed by the reader"
    assert await stores.session_items.items(ALICE) == [{"role": "user", "content": "hi"}]


async def test_pop_and_clear(stores: Stores) -> None:
    """Pop takes the newest item, then the one before; clear empties the session only."""
    await stores.session_items.append(ALICE, [{"n": 1}, {"n": 2}])
    await stores.session_items.append(ALICE_OTHER, [{"n": 9}])
    assert await stores.session_items.pop(ALICE) == {"n": 2}
    await stores.session_items.append(ALICE, [{"n": 3}])
    assert await stores.session_items.items(ALICE) == [{"n": 1}, {"n": 3}]
    assert await stores.session_items.clear(ALICE) == 2
    assert await stores.session_items.pop(ALICE) is None
    assert await stores.session_items.items(ALICE) == []
    assert await stores.session_items.items(ALICE_OTHER) == [{"n": 9}]


async def test_a_non_object_item_writes_nothing(stores: Stores) -> None:
    """An append holding a value that is not a JSON object is refused whole."""
    with pytest.raises(ValueError, match="JSON object"):
        await stores.session_items.append(ALICE, [{"n": 1}, "text"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="JSON"):
        await stores.session_items.append(ALICE, [{"n": 1}, {"when": object()}])
    assert await stores.session_items.items(ALICE) == []


async def test_sessions_are_apart_per_tenant(stores: Stores) -> None:
    """One session id of another user or agent is another session."""
    for key in (ALICE, BOB, OTHER_AGENT):
        await stores.session_items.append(key, [{"owner": key.user_id + key.agent_id}])
    assert await stores.session_items.items(ALICE) == [{"owner": "aliceatlas"}]
    assert await stores.session_items.pop(BOB) == {"owner": "bobatlas"}
    assert await stores.session_items.items(OTHER_AGENT) == [{"owner": "alicehermes"}]


async def test_erase_removes_the_users_items_only(stores: Stores) -> None:
    """Erasing a user removes all their sessions' items, counted; the others' stay."""
    await stores.session_items.append(ALICE, [{"n": 1}, {"n": 2}])
    await stores.session_items.append(ALICE_OTHER, [{"n": 3}])
    await stores.session_items.append(BOB, [{"n": 4}])
    await stores.session_items.append(OTHER_AGENT, [{"n": 5}])
    report = await erase(stores, Tenant(agent_id="atlas", user_id="alice"))
    assert report.removed["session_items"] == 3
    assert await stores.session_items.items(ALICE) == []
    assert await stores.session_items.items(ALICE_OTHER) == []
    assert await stores.session_items.items(BOB) == [{"n": 4}]
    assert await stores.session_items.items(OTHER_AGENT) == [{"n": 5}]


async def test_concurrent_appends_never_interleave(stores: Stores) -> None:
    """Twenty appends of five items at once: each append's items stay together, in order."""

    async def append(batch: int) -> None:
        await stores.session_items.append(ALICE, [{"b": batch, "i": i} for i in range(5)])

    async with anyio.create_task_group() as group:
        for batch in range(20):
            group.start_soon(append, batch)
    items = await stores.session_items.items(ALICE)
    assert len(items) == 100
    for start in range(0, 100, 5):
        chunk = items[start : start + 5]
        assert [i["i"] for i in chunk] == list(range(5))
        assert len({i["b"] for i in chunk}) == 1


async def test_an_erased_users_items_are_refused_by_another_process(tmp_path: Path) -> None:
    """After erase, an append for that user through another open of the file is refused."""
    path = tmp_path / "stores.db"
    first, second = sqlite.open_stores(path), sqlite.open_stores(path)
    try:
        await second.session_items.append(ALICE, [{"n": 1}])
        await erase(first, Tenant(agent_id="atlas", user_id="alice"))
        with pytest.raises(ErasedTenantError):
            await second.session_items.append(ALICE, [{"n": 2}])
        assert await first.session_items.items(ALICE) == []
    finally:
        await first.aclose()
        await second.aclose()
