"""Searches, turns and writers on PostgreSQL at scale, against another checkout in one run.

    python -m tests.benchmarks.postgres_scale --items 100000 --base /tmp/base/src
    python -m tests.benchmarks.postgres_scale --items 0 --writers 8   # writers only

Starts a throwaway PostgreSQL server (``tests/postgres_server.py``: ``fsync``
off, so the figures are those of the query path, not of durable commits)
and, for this checkout and for ``--base`` (another checkout's ``src``) when given, fills
a schema of its own with ``--items`` synthetic episodic items of the demo
user (``put_many`` in batches of 5,000, the demo agent seeded, then
``VACUUM ANALYZE``, as autovacuum would leave a table so filled) in a
subprocess running that checkout. Then, alternating the two ``--repeats``
times, each measures in the event loop, in milliseconds:

- ``search_p50``/``search_p95``: lexical top-10 search, 200 questions;
- ``new_turn_p50``/``new_turn_p95``: ``start_turn`` in a new session;
- ``continuing_turn_p50``/``continuing_turn_p95``: ``start_turn`` in a
  session whose earlier turns were ended.

``--writers N`` then runs 1 and N writer processes (this checkout) putting
items of one agent each into one fresh schema for ``--seconds``, and
reports items per second and their ratio. Prints JSON; figures are
reported, never asserted.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time
from pathlib import Path
from typing import Any

import anyio

from prefrontal.demo import seed
from prefrontal.stores import MemoryItem, Tenant, postgres
from prefrontal.testing.synthetic import memories
from tests.benchmarks import child
from tests.benchmarks.scale import (
    BATCH,
    START,
    TENANT,
    _continuing,
    _cuts,
    _new_sessions,
    _searches,
)

HERE = Path(__file__).resolve().parents[2]


async def _fill(dsn: str, schema: str, items: int) -> float:
    started = time.perf_counter()
    stores = postgres.open_stores(dsn, schema=schema, max_size=4)
    generated = memories(items, tenant=TENANT, start=START)
    while batch := list(itertools.islice(generated, BATCH)):
        await stores.episodic.put_many(batch)
    await seed(stores)
    await stores.aclose()
    analyse = await _connect(dsn, schema)
    await analyse.execute("VACUUM ANALYZE")
    await analyse.close()
    return time.perf_counter() - started


async def _connect(dsn: str, schema: str) -> Any:
    import asyncpg

    return await asyncpg.connect(dsn, server_settings={"search_path": schema})


async def _measure(dsn: str, schema: str, rounds: int) -> dict[str, float]:
    stores = postgres.open_stores(dsn, schema=schema, max_size=8)
    figures = _cuts("search", await _searches(stores.episodic, rounds * 4))
    figures |= _cuts("new_turn", await _new_sessions(stores, rounds))
    figures |= _cuts("continuing_turn", await _continuing(stores, rounds))
    await stores.aclose()
    return figures


async def _write(dsn: str, schema: str, agent: str, seconds: float) -> int:
    """Put items of ``agent`` in batches of 100 for ``seconds``; how many were written."""
    stores = postgres.open_stores(dsn, schema=schema, max_size=2)
    tenant = Tenant(agent_id=agent, user_id="writer")
    generated = memories(10_000_000, tenant=tenant, start=START)
    written, until = 0, time.perf_counter() + seconds
    while time.perf_counter() < until:
        batch: list[MemoryItem] = list(itertools.islice(generated, 100))
        await stores.episodic.put_many(batch)
        written += len(batch)
    await stores.aclose()
    return written


def _child(args: argparse.Namespace) -> None:
    if args.child == "fill":
        print(json.dumps({"build_s": anyio.run(_fill, args.dsn, args.schema, args.items)}))
    elif args.child == "measure":
        print(json.dumps(anyio.run(_measure, args.dsn, args.schema, args.rounds)))
    else:
        print(
            json.dumps(
                {"written": anyio.run(_write, args.dsn, args.schema, args.agent, args.seconds)}
            )
        )


def _run(source: Path, *arguments: str) -> dict[str, Any]:
    result: dict[str, Any] = child.module("tests.benchmarks.postgres_scale", source, *arguments)
    return result


def _compare(dsn: str, args: argparse.Namespace) -> dict[str, Any]:
    """Fill and measure this checkout, and ``--base`` when given, alternating."""
    sources = {"this": HERE / "src"} | ({"base": Path(args.base)} if args.base else {})
    out: dict[str, Any] = {"items": args.items}
    for name, source in sources.items():
        filled = _run(source, "fill", "--dsn", dsn, "--schema", name, "--items", str(args.items))
        out[f"{name}_build_s"] = round(filled["build_s"], 1)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in sources}
    for repeat in range(args.repeats):
        order = list(sources) if repeat % 2 else list(reversed(sources))
        for name in order:
            measured = _run(
                sources[name],
                "measure",
                "--dsn",
                dsn,
                "--schema",
                name,
                "--rounds",
                str(args.rounds),
            )
            runs[name].append(measured)
    for key in runs["this"][0]:
        medians = {name: round(statistics.median(r[key] for r in runs[name]), 2) for name in runs}
        if "base" in medians:
            medians["ratio"] = round(medians["this"] / medians["base"], 2)
        out[key] = medians
    return out


def _writers(dsn: str, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for count in (1, args.writers):
        schema = f"writers{count}"
        _run(HERE / "src", "fill", "--dsn", dsn, "--schema", schema, "--items", "0")
        writing = [
            child.start(
                HERE / "src",
                *("-m", "tests.benchmarks.postgres_scale", "--child", "write"),
                *("--dsn", dsn, "--schema", schema, "--agent", f"agent-{n}"),
                *("--seconds", str(args.seconds)),
            )
            for n in range(count)
        ]
        written = sum(child.finish(process)["written"] for process in writing)
        out[f"items_per_s_{count}"] = round(written / args.seconds, 1)
    out["ratio"] = round(out[f"items_per_s_{args.writers}"] / out["items_per_s_1"], 2)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.postgres_scale")
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--base", help="another checkout's src/, compared against")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--writers", type=int, default=0, help="also run this many writers")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--child", choices=("fill", "measure", "write"), help=argparse.SUPPRESS)
    parser.add_argument("--dsn", help=argparse.SUPPRESS)
    parser.add_argument("--schema", help=argparse.SUPPRESS)
    parser.add_argument("--agent", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args)
        return
    from tests.postgres_server import running_server

    with running_server() as server:
        dsn = server.create_database("scale")
        figures: dict[str, Any] = {}
        if args.items:
            figures["turns"] = _compare(dsn, args)
        if args.writers:
            figures["writers"] = _writers(dsn, args)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
