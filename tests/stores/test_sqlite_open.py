"""Opening SQLite stores ahead of the first call: what a process's first turn no longer pays.

``Stores.open`` (which entering an orchestrator calls) opens the file's
connections and maps the vector files, so that the first searches and the
first turn open no connection and map no file; a store that cannot open
does not stop the orchestrator from starting. A hybrid search for a tenant
with no vector finds that tenant's rows by their words.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from structlog.testing import capture_logs

from prefrontal.demo import seed
from prefrontal.errors import StoreError
from prefrontal.retrieval.embedder import HashingEmbedder
from prefrontal.stores import MemoryItem, MemoryQuery, Stores, Tenant, mapped_arrays, sqlite
from prefrontal.stores.sqlite import Database
from prefrontal.testing.conformance.base import at
from prefrontal.testing.synthetic import memories, questions
from prefrontal.traces.models import TurnStatus
from tests.conftest import FIXED_NOW, demo_request, orchestrator

pytestmark = pytest.mark.anyio
ALICE = Tenant(agent_id="agent-1", user_id="alice")
DIMENSIONS = 64


def _items(count: int, tenant: Tenant) -> list[MemoryItem]:
    return list(memories(count, tenant=tenant, start=at(0)))


async def _filled(path: Path) -> None:
    """A database at ``path`` with Alice's items, their vector files built; closed."""
    stores = sqlite.open_stores(path, embedder=HashingEmbedder(DIMENSIONS))
    await stores.episodic.put_many(_items(200, ALICE))
    await seed(stores)
    await stores.aclose()


def _nothing_more_opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every connection opened and every vector file mapped from now on."""
    opened: list[str] = []
    connect, mapped_file = Database._connect, mapped_arrays.mapped_array

    def counted_connect(self: Database) -> Any:
        opened.append("connection")
        return connect(self)

    def counted_map(*args: Any, **kwargs: Any) -> Any:
        opened.append("mapping")
        return mapped_file(*args, **kwargs)

    monkeypatch.setattr(Database, "_connect", counted_connect)
    monkeypatch.setattr(mapped_arrays, "mapped_array", counted_map)
    return opened


async def test_opened_stores_search_at_once_without_opening_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After ``open``, four searches at once use the pool's connections and the mapped files."""
    path = tmp_path / "m.db"
    await _filled(path)
    stores = sqlite.open_stores(path, embedder=HashingEmbedder(DIMENSIONS), pool_size=4)
    try:
        await stores.open()
        await stores.open()  # again: nothing missing, nothing opened
        opened = _nothing_more_opened(monkeypatch)
        found: list[int] = []

        async def search(text: str) -> None:
            query = MemoryQuery(text=text, limit=5, now=FIXED_NOW)
            found.append(len(await stores.episodic.search(ALICE, query)))

        async with anyio.create_task_group() as group:
            for text in questions(4):
                group.start_soon(search, text)
        assert opened == []
        assert len(found) == 4 and all(found)
    finally:
        await stores.aclose()


async def test_a_store_opened_without_vector_files_builds_them_at_open(tmp_path: Path) -> None:
    """Files removed (an upgrade, a restore): opening builds them, the first search maps none."""
    path = tmp_path / "m.db"
    await _filled(path)
    for file in (Path(f"{path}.vectors") / "episodic").iterdir():
        file.unlink()
    stores = sqlite.open_stores(path, embedder=HashingEmbedder(DIMENSIONS))
    try:
        await stores.open()
        (half,) = (Path(f"{path}.vectors") / "episodic").glob("half.*")
        assert half.stat().st_size > 0
    finally:
        await stores.aclose()


async def test_entering_the_orchestrator_opens_its_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first turn after ``async with Orchestrator`` opens no connection, maps no file."""
    path = tmp_path / "m.db"
    await _filled(path)
    stores = sqlite.open_stores(path, embedder=HashingEmbedder(DIMENSIONS))
    async with orchestrator(stores) as running:
        opened = _nothing_more_opened(monkeypatch)
        result = await running.start_turn(demo_request())
    assert opened == []
    assert result.trace.status is TurnStatus.OK


async def test_a_store_that_cannot_open_does_not_stop_the_orchestrator(tmp_path: Path) -> None:
    """The failure is logged; turns then meet the store's own error, as without opening."""
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    stores = sqlite.open_stores(blocker / "m.db")
    with capture_logs() as logged:
        async with orchestrator(stores) as running:
            with pytest.raises((StoreError, OSError)):
                await stores.consciousness.get_profile(ALICE)
            assert running.stores is stores
    assert [entry["event"] for entry in logged] == ["stores_not_opened_ahead"]


async def test_a_closed_database_refuses_to_open(tmp_path: Path) -> None:
    """``open`` after ``aclose`` is the error any call would be; in memory there is nothing."""
    await Stores.in_memory().open()
    database = Database(tmp_path / "m.db")
    await database.open()
    await database.aclose()
    with pytest.raises(StoreError):
        await database.open()


async def test_a_hybrid_search_for_an_agent_with_no_vector_finds_nothing(tmp_path: Path) -> None:
    """Another agent may see none of the vectors held: its search answers, empty."""
    path = tmp_path / "m.db"
    await _filled(path)
    stores = sqlite.open_stores(path, embedder=HashingEmbedder(DIMENSIONS))
    try:
        query = MemoryQuery(text=questions(1)[0], limit=5, now=FIXED_NOW)
        stranger = Tenant(agent_id="agent-2", user_id="alice")
        assert await stores.episodic.search(stranger, query) == []
        assert await stores.episodic.search(ALICE, query)
    finally:
        await stores.aclose()


def _resident_maps(path: Path) -> list[tuple[int, int]]:
    """(size, resident) in kB of each of this process's maps of ``path`` (``/proc/self/smaps``)."""
    target, found, inside = str(path.resolve()), [], False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if fields and not fields[0].endswith(":"):
            inside = len(fields) == 6 and fields[5] == target
        elif inside and fields[0] == "Size:":
            found.append((int(fields[1]), 0))
        elif inside and fields[0] == "Rss:":
            found[-1] = (found[-1][0], int(fields[1]))
    return found


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("populate", [True, False])
async def test_opening_enters_every_page_of_the_file_into_each_connections_map(
    tmp_path: Path, populate: bool
) -> None:
    """After ``open`` every map of the file (one a read connection) is resident whole,
    so a first search faults no page the page cache holds; without ``populate`` only the
    pages opening read are (the lexical arrays, whose read at opening touches a table whole
    through whichever connection it is given, are left out)."""
    path = tmp_path / "m.db"
    await _filled(path)
    stores = sqlite.open_stores(
        path, embedder=HashingEmbedder(DIMENSIONS), populate=populate, lexical_arrays=False
    )
    try:
        await stores.open()
        maps = _resident_maps(path)
        assert len(maps) >= 4  # each of the four read connections maps the file
        whole = [resident >= size for size, resident in maps]
        assert all(whole) if populate else not any(whole)
    finally:
        await stores.aclose()
