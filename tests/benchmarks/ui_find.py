"""Render times of the viewer's list, search, turn and compare pages over 100,000 traces.

    python -m tests.benchmarks.ui_find --rounds 30                     # SQLite and PostgreSQL
    python -m tests.benchmarks.ui_find --backends sqlite --db TRACES   # keeps the file to reuse

Each backend holds ``--traces`` copies of five real turns the orchestrator
ran (:mod:`tests.ui.turns`, as :mod:`tests.benchmarks.ui_render` copies
them: two agents, 500 users, sessions of 20 turns, 5% degraded), each with
a message of its own: a topic word (one of 20: each in 5% of the turns), a
place (one of 31) and a word no other turn holds (``noteN``). The copies
leave out the context as sent (``record_context`` is off by default). The
SQLite file is written through the store (its full-text index kept by its
triggers); PostgreSQL is a throwaway server (:mod:`tests.postgres_server`),
its database filled through the store, then analysed. ``prefrontal ui``
serves each in a subprocess on 127.0.0.1, and each page's whole HTTP answer
(request sent to body read, with httpx) is timed ``--rounds`` times after
one warm-up. Prints JSON: median and 95th percentile in milliseconds, and
the matches each search has. It measures and never fails on a figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import anyio
import httpx

from prefrontal.stores import postgres, sqlite
from prefrontal.stores.traces import TraceQuery
from prefrontal.traces.models import TurnTrace
from tests.benchmarks.ui_render import STEP, USERS, _copy, _templates
from tests.servers.harness import free_port, running, server_env

TOPICS = [
    "invoice",
    "refund",
    "shipping",
    "password",
    "lighthouse",
    "ferry",
    "budget",
    "launch",
    "harbour",
    "garden",
    "payments",
    "contract",
    "offsite",
    "roadmap",
    "hiring",
    "audit",
    "backup",
    "migration",
    "pricing",
    "onboarding",
]
PLACES = [f"place{n}" for n in range(31)]
BATCH = 2_000


def said(template: TurnTrace, n: int, start: datetime) -> TurnTrace:
    """Copy ``n`` of ``template``, with a message and a reply of its own, without ``sent``."""
    copy = _copy(template, n, start)
    message = f"About the {TOPICS[n % len(TOPICS)]} in {PLACES[n % len(PLACES)]}, note{n}"
    ending = copy.ending
    if ending is not None:
        ending = ending.model_copy(update={"reply": f"Noted for {PLACES[n % len(PLACES)]}."})
    return copy.model_copy(
        update={"user_input": message, "ending": ending, "sent": (), "forgotten": ()}
    )


def _batches(templates: list[TurnTrace], count: int) -> Iterator[list[TurnTrace]]:
    start = min(t.started_at for t in templates) - count * STEP
    for first in range(0, count, BATCH):
        yield [
            said(templates[n % len(templates)], n, start)
            for n in range(first, min(count, first + BATCH))
        ]


async def build_sqlite(path: Path, count: int) -> float:
    """``count`` traces in a new SQLite store at ``path``; the seconds it took."""
    templates = await _templates()
    began = time.perf_counter()
    stores = sqlite.open_stores(path)
    try:
        store: Any = stores.traces
        for batch in _batches(templates, count):

            def write(connection: Any, batch: list[TurnTrace] = batch) -> None:
                for trace in batch:
                    store.put_in(connection, trace)

            await store.database.write(write, store="traces")
    finally:
        await stores.aclose()
    return time.perf_counter() - began


async def build_postgres(dsn: str, count: int) -> float:
    """``count`` traces in the database ``dsn`` (default schema), analysed; the seconds taken."""
    templates = await _templates()
    began = time.perf_counter()
    stores = postgres.open_stores(dsn, max_size=2)
    try:
        store: Any = stores.traces
        await store.list(TraceQuery(limit=1))  # opens the pool and migrates the schema
        for batch in _batches(templates, count):

            async def write(connection: Any, batch: list[TurnTrace] = batch) -> None:
                for trace in batch:
                    await store.put_in(connection, trace)

            await store.database.write(write, store="traces")
        await store.database.write(
            lambda connection: connection.execute("ANALYZE traces"), store="traces"
        )
    finally:
        await stores.aclose()
    return time.perf_counter() - began


def pages(count: int) -> dict[str, str]:
    """The pages timed, by name."""
    middle = count // 2
    user = f"user-{(middle // 20) % USERS}"
    topic = TOPICS[middle % len(TOPICS)]
    return {
        "list: newest": "/ui",
        "list: one user": "/ui?" + urlencode({"agent": "atlas", "user": user}),
        "search: one turn's word": "/ui?" + urlencode({"q": f"note{middle}"}),
        "search: a word in 5%": "/ui?" + urlencode({"q": topic}),
        "search: two words": "/ui?" + urlencode({"q": f"{topic} {PLACES[middle % 31]}"}),
        "search: a word + one user": "/ui?" + urlencode({"q": topic, "user": user}),
        "search: a word nobody said": "/ui?" + urlencode({"q": "zanzibar"}),
        "turn": f"/ui/turns/T{middle:09d}",
        "compare": f"/ui/compare?a=T{middle:09d}&b=T{middle + 1:09d}",
    }


def _percentile(times: list[float], share: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def timed(base: str, count: int, rounds: int) -> dict[str, dict[str, float]]:
    """Each page's answer time (median, p95, ms) and the turns it listed."""
    figures: dict[str, dict[str, float]] = {}
    with httpx.Client(base_url=base, timeout=120) as client:
        for name, path in pages(count).items():
            first = client.get(path)
            assert first.status_code == 200, (path, first.status_code)
            times = []
            for _ in range(rounds):
                began = time.perf_counter()
                answer = client.get(path)
                times.append((time.perf_counter() - began) * 1000)
                assert answer.status_code == 200, (path, answer.status_code)
            figures[name] = {
                "median_ms": round(statistics.median(times), 1),
                "p95_ms": round(_percentile(times, 0.95), 1),
                "rows": first.text.count('class="mono">T'),
            }
    return figures


@contextmanager
def served(db: str) -> Iterator[str]:
    """``prefrontal ui --db DB`` on a free port of 127.0.0.1: its base URL."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with running(
        ["ui", "--db", db, "--port", str(port)], server_env(test_clock=False), f"{base}/ui"
    ):
        yield base


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--db", type=Path, help="The SQLite store (built if missing; else a temp).")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {"traces": args.traces, "rounds": args.rounds}
    backends = args.backends.split(",")
    if "sqlite" in backends:
        with tempfile.TemporaryDirectory() as folder:
            path = args.db or Path(folder) / "traces.db"
            figures: dict[str, Any] = {}
            if not path.exists():
                figures["build_s"] = round(anyio.run(build_sqlite, path, args.traces), 1)
            figures["db_mb"] = round(path.stat().st_size / 1e6)
            with served(str(path)) as base:
                figures["pages"] = timed(base, args.traces, args.rounds)
            report["sqlite"] = figures
    if "postgres" in backends:
        from tests.postgres_server import running_server

        with running_server() as server:
            dsn = server.create_database("uifind")
            figures = {"build_s": round(anyio.run(build_postgres, dsn, args.traces), 1)}
            with served(dsn) as base:
                figures["pages"] = timed(base, args.traces, args.rounds)
            report["postgresql"] = figures
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
