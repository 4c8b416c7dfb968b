"""Compaction of the PostgreSQL vector cache: smaller arrays, the same hits, readers moved.

Deleting most of a table leaves the cache's positions zeroed; compaction
(called, or when the dead positions pass the share) copies the live ones
into new arrays (with files: a new file generation, the old files
unlinked). Hits before and after equal those of reading every visible
vector, also from another store that had the old files mapped.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prefrontal.stores import Stores
from prefrontal.stores.postgres import vector_cache
from prefrontal.testing.synthetic import questions
from tests.stores.test_postgres_vector_cache import _cache, _episodic, _open
from tests.stores.vector_corpus import ALICE, BOB
from tests.stores.vector_corpus import both_ways as _both_ways
from tests.stores.vector_corpus import corpus as _corpus
from tests.stores.vector_corpus import hits as _hits

pytestmark = pytest.mark.anyio


def _array_files(root: Path) -> dict[str, int]:
    (directory,) = root.iterdir()
    return {
        f.name: f.stat().st_size for f in directory.iterdir() if f.name not in ("state", "snapshot")
    }


async def _delete_most(stores: Stores, count: int) -> None:
    """Delete all of Alice's items and all but every tenth of Bob's."""
    items = _corpus(count)
    store = _episodic(stores)
    await store.delete(ALICE, [i.item_id for i in items if i.user_id == "alice"])
    bobs = [i.item_id for i in items if i.user_id == "bob"]
    await store.delete(BOB, [item_id for n, item_id in enumerate(bobs) if n % 10])


async def test_compaction_shrinks_the_files_and_a_store_with_the_old_ones_mapped_moves_on(
    postgres_dsn: str, postgres_schema: str, tmp_path: Path
) -> None:
    """compact() copies the live positions into the next file generation, unlinks the old
    files; both stores (one had the old files mapped) rank exactly as reading every vector."""
    root = tmp_path / "cache"
    first = _open(postgres_dsn, postgres_schema, root)
    second = _open(postgres_dsn, postgres_schema, root)
    texts = questions(8)
    try:
        await _episodic(first).put_many(_corpus(900))
        await _hits(_episodic(first), BOB, texts[0])  # builds the files
        for text in texts[:2]:
            await _hits(_episodic(second), BOB, text)  # maps them
        await _delete_most(first, 900)
        expected = {text: await _hits(_episodic(second), BOB, text) for text in texts}
        before = _array_files(root)
        assert set(before) == {f"{name}.0" for name in vector_cache.ARRAYS}
        cache = _cache(_episodic(first))
        used, live = cache.usage()
        assert (used, live) == (900, 30)
        assert await cache.compact()
        assert not await cache.compact()  # nothing dead left
        assert cache.usage() == (30, 30)
        after = _array_files(root)
        assert set(after) == {f"{name}.1" for name in vector_cache.ARRAYS}
        assert sum(after.values()) < sum(before.values())
        for text in texts:
            for stores in (second, first):
                cached, scanned = await _both_ways(_episodic(stores), BOB, text, 10)
                assert cached == scanned == expected[text]
        assert _cache(_episodic(second)).rebuilds == 0
    finally:
        await first.aclose()
        await second.aclose()


@pytest.mark.parametrize("files", [True, False], ids=["files", "in-process"])
async def test_the_cache_compacts_itself_once_most_positions_are_dead(
    postgres_dsn: str,
    postgres_schema: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    files: bool,
) -> None:
    """Past the share (and the least count) the next search compacts the cache, reading
    nothing from the server again, and ranks exactly as reading every vector."""
    monkeypatch.setattr(vector_cache, "COMPACT_LEAST", 100)
    stores = _open(postgres_dsn, postgres_schema, tmp_path / "cache" if files else True)
    try:
        store = _episodic(stores)
        await store.put_many(_corpus(600))
        await _hits(store, BOB, "anything at all")
        await _delete_most(stores, 600)
        for text in questions(6):
            cached, scanned = await _both_ways(store, BOB, text, 10)
            assert cached == scanned
        cache = _cache(store)
        assert cache.compactions == 2  # after Alice's deletion, then after Bob's
        assert cache.rebuilds == 1  # the first search's, only
        assert cache.usage() == (20, 20)
    finally:
        await stores.aclose()
