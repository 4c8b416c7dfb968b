"""A bystander's turn on in-memory stores, before and after another user of the agent writes a lot.

    python -m tests.benchmarks.memory_bystander --items 50000
    python -m tests.benchmarks.memory_bystander --items 50000 --against /tmp/base --rounds 2

Each measurement runs in a subprocess of its own (``DIR/src`` first on the
path for ``--against DIR``): the demo agent seeded on in-memory stores, the
bystander (a user of the demo agent) given 500 synthetic memories of their
own, then the bystander's ``start_turn`` timed in a new session each time
(p50 of 100, after 10 untimed); then another user of the same agent writes
``--items`` tiny memories, each holding words of the bystander's question,
and the bystander's turns are timed again. The ratio after / before is the
cost the other user's data adds to the bystander's turn; the same for the
thread's CPU time per turn (``cpu_ratio``), steadier on a shared machine. ``--hybrid`` gives
the stores the 384-dimension hashing embedder. Prints JSON; it measures and
never fails on a figure.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parents[2]
BYSTANDER = "bystander"
CROWD = "crowd"
WORDS = ["payment", "review", "launch", "track", "Lena", "said"]


async def measure(items: int, hybrid: bool) -> dict[str, float]:
    """The bystander's turn p50 (ms) before and after ``items`` items of another user."""
    from prefrontal import Orchestrator, OrchestratorConfig, TurnRequest
    from prefrontal.demo import DEMO_AGENT, seed
    from prefrontal.retrieval.embedder import HashingEmbedder
    from prefrontal.stores import MemoryItem, Stores, Tenant
    from prefrontal.testing.synthetic import memories
    from tests.benchmarks.scale import DIMENSIONS, NOW, QUESTION, START, Ticking, _timed

    stores = Stores.in_memory(embedder=HashingEmbedder(DIMENSIONS) if hybrid else None)
    await seed(stores)
    own = Tenant(agent_id=DEMO_AGENT, user_id=BYSTANDER)
    await stores.episodic.put_many(list(memories(500, tenant=own, start=START)))
    orchestrator = Orchestrator(
        stores, OrchestratorConfig(deadline_ms=30_000), clock=Ticking(NOW + timedelta(days=1))
    )
    numbers = itertools.count()

    async def turn() -> None:
        request = TurnRequest(
            agent_id=DEMO_AGENT,
            user_id=BYSTANDER,
            session_id=f"new-{next(numbers)}",
            user_input=QUESTION,
        )
        await orchestrator.start_turn(request)

    async def p50() -> tuple[float, float]:
        """The p50 of the wall time and of this thread's CPU time of a turn, in ms."""
        await _timed([turn for _ in range(10)])
        walls, cpus = [], []
        for _ in range(100):
            wall, cpu = time.perf_counter(), time.thread_time()
            await turn()
            cpus.append(time.thread_time() - cpu)
            walls.append(time.perf_counter() - wall)
        return statistics.median(walls) * 1e3, statistics.median(cpus) * 1e3

    before, before_cpu = await p50()
    crowd = [
        MemoryItem(
            item_id=f"crowd-{n}",
            agent_id=DEMO_AGENT,
            user_id=CROWD,
            content=f"{WORDS[n % len(WORDS)]} {WORDS[(n // len(WORDS)) % len(WORDS)]} {n}",
            created_at=START + timedelta(seconds=n),
        )
        for n in range(items)
    ]
    for start in range(0, items, 5_000):
        await stores.episodic.put_many(crowd[start : start + 5_000])
    after, after_cpu = await p50()
    return {
        "before_p50": before,
        "after_p50": after,
        "ratio": after / before,
        "before_cpu_p50": before_cpu,
        "after_cpu_p50": after_cpu,
        "cpu_ratio": after_cpu / before_cpu,
    }


def _child(source: Path, items: int, hybrid: bool) -> dict[str, float]:
    environment = os.environ | {"PYTHONPATH": f"{source}{os.pathsep}{HERE}"}
    command = [sys.executable, "-m", "tests.benchmarks.memory_bystander", "--child"]
    command += ["--items", str(items), *(["--hybrid"] if hybrid else [])]
    done = subprocess.run(
        command, env=environment, cwd=HERE, capture_output=True, text=True, check=True
    )
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.memory_bystander")
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--against", type=Path, help="another checkout, measured in the same run")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--hybrid", action="store_true", help="stores with the hashing embedder")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(anyio.run(measure, args.items, args.hybrid)))
        return
    sources = {"this": HERE / "src"}
    if args.against is not None:
        sources["against"] = args.against / "src"
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in sources}
    for round_ in range(args.rounds):
        order = list(sources) if round_ % 2 == 0 else list(reversed(sources))
        for name in order:
            runs[name].append(_child(sources[name], args.items, args.hybrid))
    out: dict[str, object] = {"items": args.items, "hybrid": args.hybrid}
    out |= {
        name: {key: round(statistics.median(r[key] for r in measured), 3) for key in measured[0]}
        for name, measured in runs.items()
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
