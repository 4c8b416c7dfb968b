"""Consolidation killed with SIGKILL at random points on a SQLite file loses and duplicates nothing.

Each of 20 runs copies one prepared SQLite file, runs consolidation in a
real child process that SIGKILLs itself at a random store call (before it,
during it, or after it returned), then runs consolidation again, later, in
this process. Afterwards every original item is either still in the buffer
or named by exactly one promoted episodic item, never both; nothing is left
half-done; and everything due by the second run has been promoted.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest

from prefrontal.buffer import BufferConfig, BufferItem, ItemSource, Lifetime, NewItem, SessionBuffer
from prefrontal.formation import consolidate, is_due, originals
from prefrontal.stores import MemoryItem, sqlite
from prefrontal.stores.sqlite.driver import sqlite3

from .consolidation_worker import KEY

pytestmark = pytest.mark.slow

T0 = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
FIRST = T0 + timedelta(seconds=400)
"""The killed run: the items added at T0 are due (and have faded)."""
SECOND = T0 + timedelta(seconds=700)
"""The re-run: the items added at T0 + 500 s are due too."""
RUNS = 20
SEED = int(os.environ.get("PREFRONTAL_CRASH_SEED", "20261122"))
WORKER = Path(__file__).with_name("consolidation_worker.py")
SOURCES = (ItemSource.EXTERNAL, ItemSource.USER_INPUT, ItemSource.REFLECTION, ItemSource.SYSTEM)


def seed_items() -> list[tuple[NewItem, datetime]]:
    """Twelve notes of four sources (eight old, four newer), one pinned, one turn fragment."""
    notes = [
        (
            NewItem(
                item_id=f"n{n}",
                content=f"Note {n} records fact number {n}. Extra detail.",
                source=SOURCES[n % 4],
                tokens=8,
                priority=0.3 + n / 40,
            ),
            T0 if n < 8 else T0 + timedelta(seconds=500),
        )
        for n in range(12)
    ]
    notes.append((NewItem(item_id="pin", content="Pinned note.", tokens=2, pinned=True), T0))
    fragment = NewItem(item_id="frag", content="A fragment.", tokens=2, lifetime=Lifetime.TURN)
    return [*notes, (fragment, T0)]


ORIGINALS = frozenset(new.resolved_id() for new, _ in seed_items())


async def prepare(path: Path) -> None:
    stores = sqlite.open_stores(path)
    try:
        session = await SessionBuffer.load(
            stores.working_memory,
            KEY,
            config=BufferConfig(max_items=32, max_tokens=1_000, base_threshold=0.0),
            clock=lambda: T0,
        )
        for new, at in seed_items():
            await session.add(new, now=at)
        await session.save(T0 + timedelta(seconds=500))
    finally:
        await stores.aclose()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file holding one session's saved buffer, closed."""
    path = tmp_path_factory.mktemp("template") / "prefrontal.db"
    anyio.run(prepare, path)
    return path


@pytest.fixture(scope="module")
def worker() -> Iterator[subprocess.Popen[str]]:
    """The fork server: it imports prefrontal once and forks one child per run."""
    with subprocess.Popen(
        [sys.executable, str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as process:
        yield process
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=30)


def run_child(
    worker: subprocess.Popen[str], db: Path, call: int, mode: str, delay: float
) -> dict[str, int]:
    assert worker.stdin is not None and worker.stdout is not None
    request = {"db": str(db), "now": FIRST.isoformat(), "call": call, "mode": mode, "delay": delay}
    worker.stdin.write(json.dumps(request) + "\n")
    worker.stdin.flush()
    answer: dict[str, int] = json.loads(worker.stdout.readline())
    return answer


def copy_of(template: Path, into: Path) -> Path:
    into.mkdir()
    for suffix in ("", "-wal", "-shm"):
        source = Path(f"{template}{suffix}")
        if source.exists():
            shutil.copy(source, into / f"{template.name}{suffix}")
    return into / template.name


def promoted_on_disk(db: Path) -> list[MemoryItem]:
    """Every promoted episodic item in the file, read with sqlite3 itself."""
    with sqlite3.connect(db) as connection:
        bodies = [row[0] for row in connection.execute("SELECT body FROM episodic_items")]
    items = [MemoryItem.model_validate_json(body) for body in bodies]
    return [item for item in items if originals(item)]


async def rerun_and_read(
    db: Path, turn_first: bool = False
) -> tuple[bool, dict[str, BufferItem], list[MemoryItem]]:
    """Whether the killed run left marks, then the buffer and the promoted items after a re-run.

    ``turn_first``: a turn's first phase lets time act on the buffer (and saves it) before the
    re-run, at the re-run's time, when every unpinned item has been idle past its fade-out.
    """
    stores = sqlite.open_stores(db)
    try:
        before = await SessionBuffer.load(stores.working_memory, KEY, clock=lambda: SECOND)
        marked = any(item.consolidating_into for item in before.items)
        if turn_first:
            await before.expire(SECOND + timedelta(seconds=300))
            await before.save(SECOND + timedelta(seconds=300))
        await consolidate(stores, KEY, now=SECOND)
        session = await SessionBuffer.load(stores.working_memory, KEY, clock=lambda: SECOND)
        held = {item.item_id: item for item in session.items}
        ids = [item.item_id for item in promoted_on_disk(db)]
        found = await stores.episodic.get(KEY.tenant, ids)
    finally:
        await stores.aclose()
    return marked, held, found


def test_a_full_run_makes_five_store_calls(
    worker: subprocess.Popen[str], template: Path, tmp_path: Path
) -> None:
    """Unkilled, consolidation loads, marks, checks, writes and releases: five store calls."""
    answer = run_child(worker, copy_of(template, tmp_path / "full"), 0, "none", 0.0)
    assert answer == {"status": 0, "calls": 5}


def test_killed_at_random_points_nothing_is_lost_or_duplicated(
    worker: subprocess.Popen[str], template: Path, tmp_path: Path
) -> None:
    """After SIGKILL at any of 20 random points and a later re-run, every item is in one place."""
    chosen = random.Random(SEED)
    killed = resumed = 0
    for run in range(RUNS):
        call, mode = chosen.randint(1, 5), chosen.choice(("before", "during", "after"))
        delay = chosen.uniform(0.0, 0.003)
        where = f"seed {SEED}, run {run}: call {call} {mode} {delay * 1e3:.2f} ms"
        db = copy_of(template, tmp_path / f"run{run}")
        answer = run_child(worker, db, call, mode, delay)
        assert answer["status"] in (0, -signal.SIGKILL), where
        killed += answer["status"] == -signal.SIGKILL
        marked, held, found = anyio.run(rerun_and_read, db)
        resumed += marked
        promoted = promoted_on_disk(db)
        named = Counter(o for item in promoted for o in originals(item))
        assert {i.item_id for i in found} == {i.item_id for i in promoted}, where
        assert all(count == 1 for count in named.values()), where
        assert not set(named) & set(held), where
        assert set(named) | set(held) == ORIGINALS, where
        assert not any(item.consolidating_into for item in held.values()), where
        config = BufferConfig(max_items=32, max_tokens=1_000)
        assert not any(is_due(item, config, SECOND) for item in held.values()), where
        assert set(held) == {"pin", "frag"}, where
    assert killed >= RUNS // 2
    assert resumed >= 1


def test_killed_then_a_turn_lets_time_act_nothing_is_lost_or_duplicated(
    worker: subprocess.Popen[str], template: Path, tmp_path: Path
) -> None:
    """Killed at a random point, then a turn fades the buffer before the re-run: an item marked
    for a promotion, or one only the buffer holds, never fades; each original is in one place."""
    chosen = random.Random(SEED + 1)
    killed = resumed = 0
    for run in range(RUNS // 2):
        call, mode = chosen.randint(1, 5), chosen.choice(("before", "during", "after"))
        delay = chosen.uniform(0.0, 0.003)
        where = f"seed {SEED + 1}, run {run}: call {call} {mode} {delay * 1e3:.2f} ms"
        db = copy_of(template, tmp_path / f"run{run}")
        answer = run_child(worker, db, call, mode, delay)
        assert answer["status"] in (0, -signal.SIGKILL), where
        killed += answer["status"] == -signal.SIGKILL
        marked, held, found = anyio.run(rerun_and_read, db, True)
        resumed += marked
        promoted = promoted_on_disk(db)
        named = Counter(o for item in promoted for o in originals(item))
        assert {i.item_id for i in found} == {i.item_id for i in promoted}, where
        assert all(count == 1 for count in named.values()), where
        assert not set(named) & set(held), where
        assert set(named) | set(held) == ORIGINALS - {"frag"}, where  # the fragment fades
        assert set(held) == {"pin"}, where
    assert killed >= RUNS // 4
    assert resumed >= 1
