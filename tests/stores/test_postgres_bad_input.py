"""Bad input to the PostgreSQL stores: a clear error or a correct result, never a broken store.

The backend-neutral tests of the SQLite module run here again on PostgreSQL
(their ``stores`` fixture is this module's), with a property test of its own.
"""

from __future__ import annotations

import contextlib
import itertools

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from prefrontal.errors import ItemRejectedError
from prefrontal.stores import MemoryQuery, Stores, postgres
from tests.conftest import FIXED_NOW
from tests.stores.test_sqlite_bad_input import (
    ALICE,
    memory,
    test_integers_sqlite_cannot_hold_are_rejected,
    test_largest_conversation_turn_round_trips,
    test_raw_ids_answer_as_unknown,
    test_scratch_entry_round_trips_odd_text,
    test_unencodable_payloads_are_rejected,
)

__all__ = [
    "test_integers_sqlite_cannot_hold_are_rejected",
    "test_largest_conversation_turn_round_trips",
    "test_raw_ids_answer_as_unknown",
    "test_scratch_entry_round_trips_odd_text",
    "test_unencodable_payloads_are_rejected",
]

pytestmark = pytest.mark.anyio
_PROPERTY_SCHEMAS = itertools.count(1)


@pytest.fixture
def stores(postgres_stores: Stores) -> Stores:
    return postgres_stores


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    contents=st.lists(st.text(min_size=1, max_size=200).filter(str.isprintable), max_size=5),
    query=st.text(max_size=200),
)
def test_any_text_round_trips_and_never_breaks_search(
    postgres_dsn: str, contents: list[str], query: str
) -> None:
    """Any printable text is stored exactly and any query is answered, each in a fresh schema."""

    async def run() -> None:
        schema = f"property_{next(_PROPERTY_SCHEMAS)}"
        stores = postgres.open_stores(postgres_dsn, schema=schema, max_size=2)
        try:
            items = [memory(f"p{i}", text) for i, text in enumerate(contents)]
            try:
                await stores.episodic.put_many(items)
            except ItemRejectedError:
                assert await stores.episodic.get(ALICE, [i.item_id for i in items]) == []
                return
            assert await stores.episodic.get(ALICE, [i.item_id for i in items]) == items
            with contextlib.suppress(ValidationError):
                hits = await stores.episodic.search(ALICE, MemoryQuery(text=query, now=FIXED_NOW))
                assert {hit.item.item_id for hit in hits} <= {i.item_id for i in items}
        finally:
            await stores.aclose()

    anyio.run(run)
