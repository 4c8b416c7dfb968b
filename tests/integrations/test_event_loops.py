"""One SQLite database used from several threads, each running its own event loop.

Each script runs in a subprocess with a timeout, so a database bound to the
first loop that used it fails the test instead of hanging the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

THREADS_ON_ONE_SESSION = """
import asyncio, sys, threading
from prefrontal.integrations.openai_agents import PrefrontalSession
from prefrontal.orchestrator import Orchestrator
from prefrontal.stores import sqlite
from tests.conftest import fixed_clock

stores = sqlite.open_stores(sys.argv[1])
orchestrator = Orchestrator(stores, clock=fixed_clock)
session = PrefrontalSession(orchestrator, agent_id="a", user_id="u", session_id="s")
failures = []

def worker(n: int) -> None:
    async def add() -> None:
        for k in range(10):
            await session.add_items([{"role": "user", "content": f"t{n} m{k}"}])
    try:
        asyncio.run(add())
    except BaseException as error:
        failures.append(repr(error))

threads = [threading.Thread(target=worker, args=(n,)) for n in range(5)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
items = asyncio.run(session.get_items())
print(len(items), len(failures))
asyncio.run(stores.aclose())
"""

THREADS_ON_ONE_STORES = """
import asyncio, sys, threading
from prefrontal.stores.sqlite import Database

database = Database(sys.argv[1])
asyncio.run(database.write(lambda c: c.execute("CREATE TABLE probe (t TEXT)"), store="probe"))
failures = []

def worker(n: int) -> None:
    async def write_and_read() -> None:
        async with database.batch():
            for k in range(5):
                await database.write(
                    lambda c, n=n, k=k: c.execute("INSERT INTO probe VALUES (?)", (f"{n}-{k}",)),
                    store="probe",
                )
        for k in range(5):
            await database.write(
                lambda c, n=n, k=k: c.execute("INSERT INTO probe VALUES (?)", (f"{n}+{k}",)),
                store="probe",
            )
            await database.read(lambda c: c.execute("SELECT 1").fetchall(), store="probe")
    try:
        asyncio.run(write_and_read())
    except BaseException as error:
        failures.append(repr(error))

threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
rows = asyncio.run(
    database.read(lambda c: c.execute("SELECT count(*) FROM probe").fetchone()[0],
                         store="probe")
)
print(rows, len(failures))
asyncio.run(database.aclose())
"""


def _run(script: str, path: Path) -> list[str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    try:
        done = subprocess.run(
            [sys.executable, "-c", script, str(path)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("threads with their own event loops hung on one SQLite database")
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_threads_with_their_own_loops_write_through_one_session(tmp_path: Path) -> None:
    """Five threads, each with asyncio.run, add items through one SQLite-backed
    PrefrontalSession: every item lands and no thread hangs or fails."""
    pytest.importorskip("agents")
    assert _run(THREADS_ON_ONE_SESSION, tmp_path / "session.db") == ["50", "0"]


def test_threads_with_their_own_loops_share_one_database(tmp_path: Path) -> None:
    """Six threads, each with asyncio.run, write (in batches and alone) and read through
    one SQLite Database: every row lands and no thread hangs or fails."""
    assert _run(THREADS_ON_ONE_STORES, tmp_path / "stores.db") == ["60", "0"]
