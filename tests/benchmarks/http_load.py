"""Load on the HTTP API: many concurrent clients running turns against one server on SQLite.

    python -m tests.benchmarks.http_load                    # 500 clients, 5,000 turns
    python -m tests.benchmarks.http_load --clients 50 --turns 500 --end
    python -m tests.benchmarks.http_load --retry                 # honour Retry-After
    python -m tests.benchmarks.http_load --source /tmp/base-main  # serve an older checkout

Starts ``prefrontal serve http`` in a subprocess on a free port of
127.0.0.1, on a fresh SQLite file seeded with the demo agent, then runs
``--clients`` concurrent clients (one HTTP connection and one session each)
that between them run ``--turns`` turns (``POST /v1/turns``; with ``--end``
each turn is also ended, ``POST /v1/turns/{id}/end``). Prints turns per
second, latency percentiles (p50, p99, max, per turn as the client sees
it) and errors (any status but 200, any transport error) as JSON.

Refusals are counted, never hidden: a ``503`` (admission control: too many
turns in flight) is ``refused``. By default a refused turn is given up, as a
client that does not retry would; with ``--retry`` the client waits the
``Retry-After`` the server sent and tries the same turn again (``retries``
counts those attempts), and its latency runs from the first attempt to the
answer, so waiting for a slot is in the figures. ``completed`` turns are the
ones answered ``200``; ``turns_per_s`` counts only those. ``--source DIR``
serves the ``src`` of another checkout (``PYTHONPATH``), to compare two
versions in one sitting (the database is seeded by that version too). Traffic
goes to the loopback address only, and the run is bounded: ``--turns``
requests at most, ``--timeout`` seconds at most. Not a test: it measures and
never fails on a figure. ``docs/serving.md`` has the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import anyio
import httpx

from prefrontal.demo import DEMO_USER, SAMPLE_INPUT
from tests.servers.conftest import seeded
from tests.servers.harness import AGENT_KEY, http_server

QUESTIONS = (
    SAMPLE_INPUT,
    "What is blocking the payments migration?",
    "Let's plan the Lisbon offsite agenda.",
    "Summarise my open goals for this week.",
)


@dataclass
class Tally:
    """What the clients saw."""

    latencies_ms: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    statuses: dict[str, int] = field(default_factory=dict)
    issued: int = 0
    refused: int = 0
    retries: int = 0

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


@dataclass(frozen=True)
class LoadReport:
    """The figures of one run."""

    clients: int
    turns: int
    """Turns asked for."""
    completed: int
    """Turns answered ``200`` (and ended, with ``--end``)."""
    refused: int
    """Turns given up after a ``503`` (0 with ``--retry`` unless the run's time ran out)."""
    retries: int
    """Attempts repeated after a ``503``, each after the ``Retry-After`` it came with."""
    retry: bool
    ended: bool
    wall_s: float
    turns_per_s: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    errors: dict[str, int]
    statuses: dict[str, int]
    """Turns by trace status: ``degraded`` when loading phases were cut at the deadline."""


def retry_after_s(response: httpx.Response) -> float:
    """The ``Retry-After`` of a refusal in seconds (1 when absent or not a number)."""
    try:
        return max(float(response.headers.get("Retry-After", "1")), 0.0)
    except ValueError:
        return 1.0


async def start(
    client: httpx.AsyncClient, body: dict[str, str], tally: Tally, retry: bool
) -> httpx.Response:
    """``POST /v1/turns``; with ``retry``, again after each ``503``'s ``Retry-After``."""
    while True:
        response = await client.post("/v1/turns", json=body)
        if response.status_code != 503 or not retry:
            return response
        tally.retries += 1
        await anyio.sleep(retry_after_s(response))


async def client_loop(
    base: str, number: int, tally: Tally, total: int, options: argparse.Namespace
) -> None:
    """One client: its own connection and session, turns until ``total`` have been issued."""
    headers = {"Authorization": f"Bearer {AGENT_KEY}"}
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    end = options.end
    async with httpx.AsyncClient(
        base_url=base, headers=headers, timeout=60, limits=limits
    ) as client:
        n = 0
        while tally.issued < total:
            tally.issued += 1
            body = {
                "user_id": DEMO_USER,
                "session_id": f"load-{number}",
                "user_input": QUESTIONS[n % len(QUESTIONS)],
            }
            n += 1
            started = time.perf_counter()
            try:
                response = await start(client, body, tally, options.retry)
                if response.status_code == 503:
                    tally.refused += 1
                    continue
                if response.status_code == 200:
                    status = response.json()["status"]
                    tally.statuses[status] = tally.statuses.get(status, 0) + 1
                if response.status_code == 200 and end:
                    turn_id = response.json()["turn_id"]
                    response = await client.post(
                        f"/v1/turns/{turn_id}/end",
                        json={"user_id": DEMO_USER, "reply": "Noted."},
                    )
            except httpx.TransportError as error:
                tally.error(type(error).__name__)
                continue
            if response.status_code != 200:
                tally.error(str(response.status_code))
                continue
            tally.latencies_ms.append((time.perf_counter() - started) * 1_000)


SEED = (
    "import anyio, sys; from tests.servers.conftest import seeded; "
    "from pathlib import Path; anyio.run(seeded, Path(sys.argv[1]))"
)


async def run(options: argparse.Namespace, db: Path) -> LoadReport:
    """Seed ``db``, serve it, and run the load against it."""
    tally = Tally()
    clients, turns = options.clients, options.turns
    source = {"PYTHONPATH": str(Path(options.source) / "src")} if options.source else {}
    if source:  # seeded by the served version, so its schema is the one that version expects
        env = os.environ | {"PYTHONPATH": f"{source['PYTHONPATH']}{os.pathsep}{Path.cwd()}"}
        await anyio.run_process([sys.executable, "-c", SEED, str(db)], env=env)
    else:
        await seeded(db)
    with http_server(db, "--deadline-ms", "1000", test_clock=False, **source) as (base, _):
        started = time.perf_counter()
        with anyio.move_on_after(options.timeout):
            async with anyio.create_task_group() as group:
                for number in range(clients):
                    group.start_soon(client_loop, base, number, tally, turns, options)
        wall = time.perf_counter() - started
    latencies = sorted(tally.latencies_ms) or [0.0]
    cuts = (
        statistics.quantiles(latencies, n=100, method="inclusive")
        if len(latencies) > 1
        else latencies * 99
    )
    return LoadReport(
        clients=clients,
        turns=turns,
        completed=len(tally.latencies_ms),
        refused=tally.refused,
        retries=tally.retries,
        retry=options.retry,
        ended=options.end,
        wall_s=round(wall, 2),
        turns_per_s=round(len(tally.latencies_ms) / wall, 1),
        p50_ms=round(cuts[49], 1),
        p90_ms=round(cuts[89], 1),
        p99_ms=round(cuts[98], 1),
        max_ms=round(latencies[-1], 1),
        errors=tally.errors,
        statuses=tally.statuses,
    )


def main() -> None:
    """Parse the options, run, print the report as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=500)
    parser.add_argument("--turns", type=int, default=5_000)
    parser.add_argument("--end", action="store_true", help="also end every turn")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds, at most")
    parser.add_argument("--retry", action="store_true", help="retry a 503 after its Retry-After")
    parser.add_argument("--source", default="", help="a checkout whose src/ the server runs")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        report = anyio.run(run, options, Path(folder) / "load.db")
    print(json.dumps(asdict(report), indent=2))


if __name__ == "__main__":
    main()
