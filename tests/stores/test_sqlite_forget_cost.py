"""A forget on SQLite costs about a write, whatever else the file holds.

Each full-text index deletes in place (FTS5's ``secure-delete``, from the
SQLite that sqlean.py bundles): removing one item rewrites the few pages
that held its entries, not the whole index, and leaves no byte of it
behind. The cost is counted in bytes the process hands to ``write`` (Linux's
``/proc/self/io``), which do not depend on how busy the machine is.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from prefrontal.memory import MemoryAPI
from prefrontal.stores import Tenant, sqlite
from prefrontal.stores.sqlite.driver import DELETES_IN_PLACE, fts5_tables, sqlite3
from prefrontal.testing.synthetic import memories
from tests.conftest import FIXED_NOW, fixed_clock

pytestmark = pytest.mark.anyio
CROWD = Tenant(agent_id="atlas", user_id="crowd")
SMALL = Tenant(agent_id="atlas", user_id="leaving")
IO = Path("/proc/self/io")


def written() -> int:
    """Bytes this process has handed to ``write`` so far."""
    for line in IO.read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise AssertionError("no wchar in /proc/self/io")


def index_bytes(path: Path) -> int:
    """The bytes of every full-text index's segments in the file."""
    with sqlite3.connect(path) as connection:
        return sum(
            connection.execute(
                f'SELECT coalesce(sum(length(block)), 0) FROM "{table}_data"'
            ).fetchone()[0]
            for table in fts5_tables(connection)
        )


def test_the_bundled_sqlite_deletes_in_place() -> None:
    """The stores run on a SQLite whose FTS5 removes a row's entries in place (3.44 or later)."""
    assert DELETES_IN_PLACE
    assert sqlite3.sqlite_version_info >= (3, 44, 0)


async def test_every_full_text_index_deletes_in_place(tmp_path: Path) -> None:
    """Every FTS5 table of a file the stores opened has ``secure-delete`` on."""
    stores = sqlite.open_stores(tmp_path / "stores.db")
    await stores.open()
    await stores.aclose()
    with sqlite3.connect(tmp_path / "stores.db") as connection:
        tables = fts5_tables(connection)
        settings = [
            connection.execute(f"SELECT v FROM \"{t}_config\" WHERE k = 'secure-delete'").fetchone()
            for t in tables
        ]
    assert len(tables) >= 4
    assert settings == [(1,)] * len(tables)


@pytest.mark.skipif(not IO.exists(), reason="counts bytes written through /proc/self/io")
async def test_a_forget_writes_a_sliver_of_the_index(tmp_path: Path) -> None:
    """Forgetting one item beside 10,000 writes under a quarter of the full-text indexes' bytes
    (about a tenth here; rewriting them whole, as merging every segment does, wrote 3.4 times
    their size)."""
    path = tmp_path / "stores.db"
    stores = sqlite.open_stores(path)
    generated = memories(10_000, tenant=CROWD, start=FIXED_NOW)
    while batch := list(itertools.islice(generated, 2_500)):
        await stores.episodic.put_many(batch)
    await stores.episodic.put_many(list(memories(3, tenant=SMALL, start=FIXED_NOW, prefix="s")))
    api = MemoryAPI(stores, clock=fixed_clock)
    assert await api.forget(SMALL, "s0000000")
    before = written()
    assert await api.forget(SMALL, "s0000001")
    cost = written() - before
    hits = await api.recall(CROWD, "note", top_k=5)
    await stores.aclose()
    size = index_bytes(path)
    assert size > 1_000_000
    assert cost < size / 4
    assert len(hits) == 5


@pytest.mark.parametrize("in_place", [True, False])
async def test_a_forgotten_word_leaves_the_file_with_either_library(
    tmp_path: Path, in_place: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0 copies of a forgotten item's word in the files, whether the indexes delete in place
    or (a SQLite older than 3.44) are optimised whole; the kept item's word stays."""
    from prefrontal.stores.sqlite import driver

    monkeypatch.setattr(driver, "DELETES_IN_PLACE", in_place and DELETES_IN_PLACE)
    path = tmp_path / "stores.db"
    stores = sqlite.open_stores(path)
    api = MemoryAPI(stores, clock=fixed_clock)
    await stores.episodic.put_many(list(memories(500, tenant=CROWD, start=FIXED_NOW)))
    gone = await api.remember(SMALL, "the vault code is qzvforgotword", store="episodic")
    await api.remember(SMALL, "the lantern is qzvkeptword", store="episodic")
    assert await api.forget(SMALL, gone.item_id)
    with sqlite3.connect(path) as connection:
        secure = [driver.deletes_in_place(connection, t) for t in fts5_tables(connection)]
    await stores.aclose()
    files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
    found = [f.read_bytes() for f in files if f.exists()]
    assert sum(data.count(b"forgotword") for data in found) == 0
    assert sum(data.count(b"keptword") for data in found) > 0
    assert all(secure) if in_place else not any(secure)
