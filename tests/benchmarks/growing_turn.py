"""A turn in a growing conversation: CPU per turn (start and end) as memory grows, in memory, on SQLite and on PostgreSQL.

    python -m tests.benchmarks.growing_turn                          # this checkout
    python -m tests.benchmarks.growing_turn --against /tmp/old/src   # and another, same run
    python -m tests.benchmarks.growing_turn --backends postgres --against /tmp/old/src

The demo agent is seeded into fresh stores, then ``--turns`` (300) turns
run one after another over ``--sessions`` (16) sessions of the demo user,
each session a run of consecutive turns, each turn the child of the last
in its session: ``start_turn`` with the next question of
:func:`prefrontal.testing.synthetic.questions`, then ``end_turn`` with a
reply naming the turn, then the background work awaited. Every end writes
the exchange, episodic items and the rolling summary, so the stores, the
buffer and the history grow with the turns: the fresh-store demo turn
hides what that growth costs.

Each backend of ``--backends`` (``memory``: :meth:`Stores.in_memory`; ``sqlite``: a file in
a temporary directory, through whichever opener the checkout has; ``postgres``: a fresh
database per run on the tests' throwaway server, :mod:`tests.postgres_server`) runs in
a child process of its own per checkout (this one's ``src`` first on its path), with ``--against`` the two
checkouts alternating ``--rounds`` times (1). A turn's CPU is the process
time (every thread: SQLite's workers too) from before ``start_turn`` to
after the background work of ``end_turn``; the clock is a fixed one that
ticks a second per reading, so no figure depends on the day it runs.

On PostgreSQL each turn also counts the statements it sent (at the driver:
:func:`tests.postgres_statements.counted_statements`) and the CPU the
server's processes used meanwhile (``postgres_*`` figures).

It prints one JSON line: per backend and checkout the p50 CPU of the first
and the last ``--window`` (30) turns and of all of them (ms), of the start
and of the end apart, the bundle sizes; with ``--against`` the ratios
old/new and ``same_bundles``, whether both checkouts assembled the same
bundle text and fragments at every turn (a digest of each). Figures are
reported, never asserted.

``--profile memory`` (or ``sqlite``, ``postgres``) runs the conversation once in this
process under yappi, CPU clock, every thread, and lists the ``--top``
functions by their own CPU and by their total, in ms per turn.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.benchmarks import child

BACKENDS = ("memory", "sqlite", "postgres")
POSTGRES_ENV = "GROWING_TURN_POSTGRES"
"""The child's PostgreSQL database and the server's pid (``DSN PID``), set by the parent."""


ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")
"""A turn id (random): in a digest, each is replaced by the number of its turn."""


class Ticking:
    """A clock one second further at every reading, from a fixed Monday morning."""

    def __init__(self) -> None:
        self.now = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def continuing(session: str, text: str, parents: Mapping[str, str]) -> Any:
    """The demo user's turn ``text`` in ``session``, the child of its last turn in ``parents``
    (a ``TurnRequest`` of whichever checkout is imported)."""
    from prefrontal import TurnRequest
    from prefrontal.demo import DEMO_AGENT, DEMO_USER

    return TurnRequest(
        agent_id=DEMO_AGENT,
        user_id=DEMO_USER,
        session_id=session,
        user_input=text,
        parent_turn_id=parents.get(session),
    )


def digest(result: Any, numbers: dict[str, int]) -> str:
    """A short digest of a turn's bundle: its text and fragments, less the turn's own id, each
    turn id in them (and the ids made from one) written as its turn's number."""
    import hashlib

    bundle = result.bundle
    fragments = [fragment.model_dump(mode="json") for fragment in bundle.fragments]
    for fragment in fragments:
        fragment.pop("turn_id", None)
    body = json.dumps([bundle.text, fragments], sort_keys=True, default=str)
    body = ULID.sub(lambda found: f"turn-{numbers.get(found.group(), -1)}", body)
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def open_stores(backend: str, folder: Path) -> Any:
    """Fresh stores of ``backend`` (``memory``, ``sqlite`` in ``folder``, or ``postgres`` on the
    database the parent named)."""
    from prefrontal import Stores

    if backend == "memory":
        return Stores.in_memory()
    if backend == "postgres":
        from prefrontal.stores import postgres

        return postgres.open_stores(os.environ[POSTGRES_ENV].split()[0])
    try:
        from prefrontal.stores.sqlite import open_stores as sqlite_stores
    except ImportError:  # an older checkout
        return getattr(Stores, "sqlite")(folder / "growing.db")  # noqa: B009
    return sqlite_stores(folder / "growing.db")


async def conversation(backend: str, turns: int, sessions: int) -> list[dict[str, Any]]:
    """Run the growing conversation on fresh ``backend`` stores: one record per turn."""
    import time

    from prefrontal import Orchestrator, OrchestratorConfig
    from prefrontal.demo import seed
    from prefrontal.testing.synthetic import questions
    from tests.benchmarks.process_cpu import TreeCpu
    from tests.postgres_statements import counted_statements

    server = TreeCpu(int(os.environ[POSTGRES_ENV].split()[1]) if backend == "postgres" else None)
    records: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory(prefix="prefrontal-growing-") as scratch,
        counted_statements() as sent,
    ):
        stores = open_stores(backend, Path(scratch))
        await stores.open()
        await seed(stores)
        config = OrchestratorConfig(deadline_ms=60_000)
        parents: dict[str, str] = {}
        numbers: dict[str, int] = {}
        async with Orchestrator(stores, config, clock=Ticking()) as orchestrator:
            for number, text in enumerate(questions(turns)):
                session = f"growing-{number * sessions // turns}"
                request = continuing(session, text, parents)
                server.start()
                before = len(sent)
                began = time.process_time()
                result = await orchestrator.start_turn(request)
                started = time.process_time()
                numbers[result.context.turn_id] = number
                reply = f"Answer {number}: Lena signs the payment review off on Friday."
                await orchestrator.end_turn(result, reply)
                await orchestrator.wait_background()
                ended = time.process_time()
                postgres_s = server.seconds()
                parents[session] = result.context.turn_id
                records.append(
                    {
                        "start": (started - began) * 1e3,
                        "end": (ended - started) * 1e3,
                        "statements": len(sent) - before,
                        "postgres": None if postgres_s is None else postgres_s * 1e3,
                        "tokens": result.bundle.total_tokens,
                        "status": str(result.trace.status),
                        "digest": digest(result, numbers),
                    }
                )
        await stores.aclose()
    return records


def summary(records: list[dict[str, Any]], window: int) -> dict[str, Any]:
    """p50 CPU (ms) of a turn, its start and its end: first and last ``window`` turns, and all."""

    def p50(part: list[dict[str, Any]], key: str) -> float:
        values: list[float] = [r["start"] + r["end"] if key == "turn" else r[key] for r in part]
        return round(statistics.median(values), 2)

    parts = {"first": records[:window], "last": records[-window:], "all": records}
    postgres = {}
    if records[0].get("postgres") is not None:
        postgres = {  # its CPU in clock ticks (10 ms): a mean, not a median
            f"{name}_postgres_cpu_mean_ms": round(statistics.fmean(r["postgres"] for r in part), 2)
            for name, part in parts.items()
        } | {f"{name}_statements_p50": p50(part, "statements") for name, part in parts.items()}
        postgres["statements_max"] = max(r["statements"] for r in records)
    return {
        **{
            f"{name}_{key}_cpu_p50_ms": p50(part, key)
            for name, part in parts.items()
            for key in ("turn", "start", "end")
        },
        **postgres,
        "bundle_tokens_first_last": [records[0]["tokens"], records[-1]["tokens"]],
        "statuses": sorted({r["status"] for r in records}),
    }


def child_main(backend: str, turns: int, sessions: int) -> None:
    """The child: run the conversation, print its records as one JSON line."""
    import anyio

    print(json.dumps(anyio.run(conversation, backend, turns, sessions)))


def profile(backend: str, turns: int, sessions: int, top: int) -> None:
    """Run the conversation under yappi (CPU clock, every thread; on PostgreSQL a fresh
    database of the tests' throwaway server, whose CPU is not counted): print the ``top``
    functions by CPU inside them (own) and below them (total), in ms per turn, one JSON line
    each."""
    import contextlib

    import anyio
    import yappi

    with contextlib.ExitStack() as stack:
        if backend == "postgres":
            from tests.postgres_server import running_server

            server = stack.enter_context(running_server())
            pid = (server.root / "data" / "postmaster.pid").read_text().split()[0]
            os.environ[POSTGRES_ENV] = f"{server.create_database('growing_profile')} {pid}"
        yappi.set_clock_type("cpu")
        yappi.start(builtins=True, profile_threads=True)
        anyio.run(conversation, backend, turns, sessions)
        yappi.stop()
    stats = yappi.get_func_stats()
    for key in ("tsub", "ttot"):
        stats.sort(key, "desc")
        for entry in list(stats)[:top]:
            where = f"{Path(entry.module).name}:{entry.lineno} {entry.name}"
            figure = {key: round(getattr(entry, key) * 1e3 / turns, 3), "calls": entry.ncall}
            print(json.dumps({"by": key, "function": where, **figure}))


def run(
    *,
    turns: int,
    sessions: int,
    window: int,
    rounds: int,
    against: Path | None,
    backends: tuple[str, ...] = ("memory", "sqlite"),
) -> dict[str, Any]:
    """Time the growing conversation on each backend, per checkout (the module docstring)."""
    if "postgres" in backends:
        from tests.postgres_server import running_server

        with running_server() as server:
            pid_file = server.root / "data" / "postmaster.pid"
            databases = iter(range(1_000_000))

            def fresh() -> None:
                dsn = server.create_database(f"growing_{next(databases)}")
                os.environ[POSTGRES_ENV] = f"{dsn} {pid_file.read_text().split()[0]}"

            return _run(turns, sessions, window, rounds, against, backends, fresh)
    return _run(turns, sessions, window, rounds, against, backends, lambda: None)


def _run(
    turns: int,
    sessions: int,
    window: int,
    rounds: int,
    against: Path | None,
    backends: tuple[str, ...],
    fresh: Any,
) -> dict[str, Any]:
    sources: dict[str, Path | None] = {"new": child.ROOT / "src"}
    if against is not None:
        sources["old"] = against
    figures: dict[str, Any] = {}
    for backend in backends:
        found: dict[str, list[list[dict[str, Any]]]] = {name: [] for name in sources}
        for round_number in range(rounds):
            order = list(sources.items())
            for name, source in order if round_number % 2 == 0 else reversed(order):
                fresh()
                found[name].append(
                    child.module(
                        "tests.benchmarks.growing_turn",
                        source,
                        backend,
                        str(turns),
                        str(sessions),
                    )
                )
        per_turn = {  # each turn's median over the rounds, so a round's noise counts once
            name: [
                {
                    **runs[0][index],
                    "start": statistics.median(r[index]["start"] for r in runs),
                    "end": statistics.median(r[index]["end"] for r in runs),
                    "postgres": _median_of(r[index]["postgres"] for r in runs),
                }
                for index in range(turns)
            ]
            for name, runs in found.items()
        }
        result: dict[str, Any] = {
            name: summary(records, window) for name, records in per_turn.items()
        }
        digests = {
            name: [[r["digest"] for r in run] for run in runs] for name, runs in found.items()
        }
        result["stable_bundles"] = all(seen == digests["new"][0] for seen in digests["new"])
        if against is not None:
            result["same_bundles"] = digests["old"] == digests["new"]
            result["ratio_old_new"] = {
                key: round(result["old"][key] / result["new"][key], 2)
                for key in result["new"]
                if key.endswith(("_ms", "_p50", "_max")) and result["new"][key] > 0
            }
        figures[backend] = result
    figures["load"] = round(os.getloadavg()[0], 1)
    return figures


def _median_of(values: Any) -> float | None:
    """The median of ``values``, or ``None`` when they are (not measured)."""
    found = [value for value in values if value is not None]
    return statistics.median(found) if found else None


def main(argv: list[str] | None = None) -> None:
    """Parse the options; run as the parent (figures) or as a ``--child`` (records)."""
    os.environ.setdefault("PYTHONHASHSEED", "0")  # the children's: ties broken alike in each
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.growing_turn")
    parser.add_argument("--child", nargs=3, metavar=("BACKEND", "TURNS", "SESSIONS"))
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--window", type=int, default=30, help="turns at the start and the end")
    parser.add_argument("--profile", choices=BACKENDS, help="profile one backend's turns instead")
    parser.add_argument("--top", type=int, default=40, help="functions listed by --profile")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--against", type=Path, default=None, help="an older checkout's src")
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=["memory", "sqlite"])
    options = parser.parse_args(argv)
    if options.child:
        backend, turns, sessions = options.child
        child_main(backend, int(turns), int(sessions))
        return
    if options.profile:
        profile(options.profile, options.turns, options.sessions, options.top)
        return
    figures = run(
        turns=options.turns,
        sessions=options.sessions,
        window=options.window,
        rounds=options.rounds,
        against=options.against,
        backends=tuple(options.backends),
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
