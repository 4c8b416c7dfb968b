"""The SQLite vector files: opened without reading the rows, private, repaired after a crash.

A store opening a database whose files are current maps them and reads no
vector from the rows; the files are readable by their owner only; erase and
forget overwrite the removed rows' vector bytes in them; a process killed
by SIGKILL while changing them leaves them marked, and the next process
rebuilds them so that hybrid hits equal those of reading every vector.
"""

from __future__ import annotations

import os
import signal
import stat
import sys
import textwrap
from pathlib import Path

import anyio
import numpy as np
import pytest

from prefrontal.retrieval.vectors import to_blob
from prefrontal.stores import MemoryItem, MemoryQuery, Tenant, sqlite
from prefrontal.stores.sqlite.memory import SqliteMemoryStore
from prefrontal.stores.sqlite.vector_file import ARRAYS, VectorFile
from prefrontal.testing.conformance.base import at
from prefrontal.testing.synthetic import memories, questions
from tests.conftest import FIXED_NOW
from tests.stores.vector_corpus import ALICE, BOB, DIMENSIONS, embedder, sqlite_episodic

pytestmark = pytest.mark.anyio
Hit = tuple[str, float, dict[str, float]]


def _items(count: int, tenant: Tenant, prefix: str) -> list[MemoryItem]:
    return [
        item.model_copy(update={"item_id": f"{prefix}{n}"})
        for n, item in enumerate(memories(count, tenant=tenant, start=at(0)))
    ]


async def _hits(store: SqliteMemoryStore, tenant: Tenant, text: str) -> list[Hit]:
    found = await store.search(tenant, MemoryQuery(text=text, limit=10, now=FIXED_NOW))
    return [(h.item.item_id, h.score, h.signals) for h in found]


async def _both_ways(store: SqliteMemoryStore, text: str) -> tuple[list[Hit], list[Hit]]:
    """Alice's hits from the vector files, then from reading every visible vector."""
    held = store.vectors
    mapped = await _hits(store, ALICE, text)
    store.vectors = None
    try:
        scanned = await _hits(store, ALICE, text)
    finally:
        store.vectors = held
    return mapped, scanned


async def _opened_maps_as_scanned(path: Path, texts: list[str]) -> None:
    """The file at ``path``, opened: each of ``texts`` finds Alice's hits from the vector
    files, and they are those reading every visible vector finds."""
    stores = sqlite.open_stores(path, embedder=embedder())
    try:
        for text in texts:
            mapped, scanned = await _both_ways(sqlite_episodic(stores), text)
            assert mapped == scanned
            assert mapped
    finally:
        await stores.aclose()


def _files(path: Path) -> Path:
    return Path(f"{path}.vectors") / "episodic"


async def test_files_are_private_and_a_new_process_maps_them_without_rebuilding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0700 directory, 0600 files; a later opening rebuilds nothing and ranks as exact search."""
    path = tmp_path / "m.db"
    stores = sqlite.open_stores(path, embedder=embedder())
    await sqlite_episodic(stores).put_many(_items(300, ALICE, "a"))
    await stores.aclose()
    directory = _files(path)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    modes = {f.name: stat.S_IMODE(f.stat().st_mode) for f in directory.iterdir()}
    assert set(modes) == {"state", *(f"{name}.0" for name in ARRAYS)}
    assert set(modes.values()) == {0o600}

    def no_rebuild(self: VectorFile, state: np.ndarray) -> None:
        raise AssertionError("the files were current: nothing to rebuild")

    monkeypatch.setattr(VectorFile, "_clear", no_rebuild)
    await _opened_maps_as_scanned(path, questions(10))


def _occurrences(directory: Path, needles: list[bytes]) -> int:
    data = b"".join(f.read_bytes() for f in directory.iterdir())
    return sum(data.count(needle) for needle in needles)


async def test_erase_and_forget_overwrite_the_vectors_in_the_files(tmp_path: Path) -> None:
    """No erased or forgotten vector is left in the files; the others all are."""
    path = tmp_path / "m.db"
    stores = sqlite.open_stores(path, embedder=embedder())
    store = sqlite_episodic(stores)
    both = _items(80, ALICE, "")
    alice = [i.model_copy(update={"item_id": f"a{n}"}) for n, i in enumerate(both[:40])]
    bob = [
        i.model_copy(update={"item_id": f"b{n}", "user_id": "bob"}) for n, i in enumerate(both[40:])
    ]
    await store.put_many([*alice, *bob])
    await _hits(store, ALICE, "anything at all")
    held = {i.item_id: i.embedding for i in await store.get(ALICE, [i.item_id for i in alice])}
    held |= {i.item_id: i.embedding for i in await store.get(BOB, [i.item_id for i in bob])}
    blobs = {item_id: to_blob(vector) for item_id, vector in held.items() if vector}
    directory = _files(path)
    assert _occurrences(directory, list(blobs.values())) == len(blobs) == 80
    assert await store.erase(ALICE) == 40
    assert await store.delete(BOB, ["b0"]) == 1
    await stores.aclose()
    removed = [blob for key, blob in blobs.items() if key.startswith("a") or key == "b0"]
    kept = [blob for key, blob in blobs.items() if key not in ("b0",) and key.startswith("b")]
    assert _occurrences(directory, removed) == 0
    assert _occurrences(directory, kept) == 39
    halves = {key: _half(blob) for key, blob in blobs.items()}
    assert _occurrences(directory, [halves[key] for key in halves if key.startswith("a")]) == 0
    assert _occurrences(directory, [halves["b1"]]) == 1


def _half(blob: bytes) -> bytes:
    """A vector's row in the float16 file: scaled to unit length."""
    vector = np.frombuffer(blob, dtype=np.float32)
    return (vector / np.linalg.norm(vector)).astype(np.float16).tobytes()


CRASHING_WRITER = textwrap.dedent(
    """
    import sys, time
    import anyio
    from prefrontal.retrieval.embedder import HashingEmbedder
    from prefrontal.stores import sqlite
    from prefrontal.stores.sqlite.vector_file import ARRAYS, VectorFile
    from prefrontal.testing.conformance.base import at
    from prefrontal.testing.synthetic import memories
    from prefrontal.stores import Tenant

    original = VectorFile._write

    def half_then_stall(self, at, held):
        original(self, at[: len(held) // 2], held[: len(held) // 2])
        print("half written", flush=True)
        time.sleep(600)

    VectorFile._write = half_then_stall

    async def main() -> None:
        stores = sqlite.open_stores(sys.argv[1], embedder=HashingEmbedder(int(sys.argv[3])))
        tenant = Tenant(agent_id="agent-1", user_id="alice")
        items = [i.model_copy(update={"item_id": f"late{n}"})
                 for n, i in enumerate(memories(200, tenant=tenant, start=at(5)))]
        await stores.episodic.put_many(items)

    anyio.run(main)
    """
)


async def test_a_process_killed_while_changing_the_files_leaves_them_rebuilt(
    tmp_path: Path,
) -> None:
    """SIGKILL mid-write: the state stays marked; the next search rebuilds and ranks exactly."""
    path = tmp_path / "m.db"
    stores = sqlite.open_stores(path, embedder=embedder())
    store = sqlite_episodic(stores)
    await store.put_many(_items(150, ALICE, "a"))
    before = await _hits(store, ALICE, "launch review")
    assert before
    command = [sys.executable, "-c", CRASHING_WRITER, str(path), "-", str(DIMENSIONS)]
    process = await anyio.open_process(command)
    try:
        with anyio.fail_after(60):
            assert process.stdout is not None
            said = await process.stdout.receive()
        assert said.startswith(b"half written")
        os.kill(process.pid, signal.SIGKILL)
        with anyio.fail_after(30):
            await process.wait()
    finally:
        await process.aclose()
    assert process.returncode == -signal.SIGKILL
    state = np.fromfile(_files(path) / "state", dtype=np.int64)
    assert state[3] == 1  # changing: the killed process never finished
    try:
        for text in [*questions(8), "launch review"]:
            mapped, scanned = await _both_ways(store, text)
            assert mapped == scanned
        late = await _hits(store, ALICE, "late0")
        assert len(late) == 10
        assert np.fromfile(_files(path) / "state", dtype=np.int64)[3] == 0
    finally:
        await stores.aclose()


async def test_a_copied_database_does_not_trust_the_files_of_the_original(
    tmp_path: Path,
) -> None:
    """Files copied beside a copy of the database name another file: they are rebuilt."""
    path = tmp_path / "m.db"
    stores = sqlite.open_stores(path, embedder=embedder())
    await sqlite_episodic(stores).put_many(_items(120, ALICE, "a"))
    await _hits(sqlite_episodic(stores), ALICE, "anything")
    await stores.aclose()
    copy = tmp_path / "copy.db"
    copy.write_bytes(path.read_bytes())
    target = _files(copy)
    target.mkdir(parents=True)
    for source in _files(path).iterdir():
        (target / source.name).write_bytes(source.read_bytes())
    (columns,) = target.glob("columns.*")
    columns.write_bytes(b"\0" * columns.stat().st_size)  # the copy's files now lie
    await _opened_maps_as_scanned(copy, questions(6))
