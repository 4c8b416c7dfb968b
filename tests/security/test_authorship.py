"""Shared memories keep their author in every backend; a caller with the right corrects and forgets them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from prefrontal import Stores
from prefrontal.errors import NotFoundError
from prefrontal.memory.api import MemoryAPI
from prefrontal.stores.long_term import AUTHOR_KEY
from prefrontal.stores.tenancy import Scope, Tenant

pytestmark = pytest.mark.anyio

MAYA = Tenant(agent_id="atlas", user_id="maya")
SAM = Tenant(agent_id="atlas", user_id="sam")
NOW = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)


async def test_a_shared_memory_keeps_its_author_and_only_the_right_changes_it(
    stores: Stores,
) -> None:
    """Stored, read back by another user, corrected and forgotten only with ``shared=True``."""
    memory = MemoryAPI(stores, clock=lambda: NOW)
    note = await memory.remember(SAM, "The launch is cancelled", scope=Scope.SHARED, author="ops")
    private = await memory.remember(SAM, "Sam likes tea")
    seen = await memory.get(MAYA, note.item_id)
    assert seen is not None and seen.metadata[AUTHOR_KEY] == "ops"
    assert AUTHOR_KEY not in private.metadata
    with pytest.raises(NotFoundError):
        await memory.update(MAYA, note.item_id, content="The launch is on")
    assert not await memory.forget(MAYA, note.item_id)
    fixed = await memory.update(MAYA, note.item_id, content="The launch is on", shared=True)
    assert fixed.metadata[AUTHOR_KEY] == "ops" and fixed.user_id == "sam"
    assert await memory.forget(MAYA, note.item_id, shared=True)
    assert await memory.get(SAM, note.item_id) is None
    assert await memory.get(SAM, private.item_id) is not None


async def test_a_shared_memory_without_an_author_names_its_user(stores: Stores) -> None:
    """In process, a shared memory written without ``author`` names the writing user."""
    note = await MemoryAPI(stores, clock=lambda: NOW).remember(
        SAM, "Standup moves to 10:00", scope=Scope.SHARED
    )
    assert note.metadata[AUTHOR_KEY] == "sam"
