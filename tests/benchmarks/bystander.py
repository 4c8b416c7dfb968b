"""A bystander's turns, before and after another user of the agent writes 50,000 items.

    python -m tests.benchmarks.bystander --backend memory|sqlite|postgres|all
    python -m tests.benchmarks.bystander --backend memory --hybrid
    python -m tests.benchmarks.bystander --backend memory --against /tmp/base

One agent; a bystander user with ``--memories`` synthetic memories
(:func:`prefrontal.testing.synthetic.memories`). Two fresh stores hold
them; in one, another user of the same agent has also written ``--items``
tiny private items (``put_many`` in batches of 5,000) made of *the
bystander's words*: the analysed terms of the bystander's questions that
their memories hold. In the ``some`` variant each item holds three of
those words; in the ``all`` variant every item holds every one of them.
The bystander then asks ``--rounds`` questions on both stores, turn about
(which store goes first alternates), each a real ``start_turn`` in a new
session after a few untimed ones; the p50 of each store's turns and their
ratio (after / before; the goal: at most 1.3) are printed, and the same for
the thread's CPU time per turn (``cpu_ratio``), steadier on a shared
machine. Timing the two in alternation lets both meet the same load on a
shared machine. Each variant has stores of its own (PostgreSQL: databases
of their own on the throwaway server of ``tests/postgres_server.py``).
``--hybrid`` gives every store the 384-dimension hashing embedder, so
each search is hybrid (BM25 and cosine).

``--against DIR`` measures this checkout and then ``DIR``'s ``src`` (a
process each, :mod:`tests.benchmarks.child`), each line naming its
``source``.

The bystander's results are checked too: the memories each question's
context shows (episodic and semantic item ids), before and after. The
other user's items change the agent's BM25 statistics (document
frequencies are per agent), which may reorder the bystander's own
memories; ``foreign`` counts items of the other user that reached the
bystander's context (always 0 when tenancy holds), ``same`` how many
questions showed the same memories in the same order, and
``searches_as_reference`` how many of the bystander's top-10 episodic
searches on the crowded store give the ids and scores the in-memory
store, holding the same items, gives.

Prints JSON, one object per backend and variant; figures are reported,
never asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import random
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio

from prefrontal import Orchestrator, OrchestratorConfig, TurnRequest
from prefrontal.bundle.fragments import Section
from prefrontal.retrieval.analysis import term_set
from prefrontal.retrieval.embedder import Embedder, HashingEmbedder
from prefrontal.stores import MemoryItem, MemoryQuery, Stores, Tenant
from prefrontal.testing.synthetic import memories, questions
from tests.benchmarks import child

AGENT = "atlas"
BYSTANDER = Tenant(agent_id=AGENT, user_id="bystander")
CROWD = Tenant(agent_id=AGENT, user_id="crowd")
START = datetime(2026, 1, 1, tzinfo=UTC)
NOW = datetime(2026, 6, 1, tzinfo=UTC)
BATCH = 5_000
WARM_UP = 5
QUESTIONS = 12
"""The bystander asks these many questions, round robin."""
VARIANTS = ("some", "all")
BACKENDS = ("memory", "sqlite", "postgres")
DIMENSIONS = 384


class Ticking:
    """A clock a second forward at every reading, from ``start``."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def bystander_memories(count: int) -> list[MemoryItem]:
    """The bystander's memories: ``count`` synthetic ones, a minute apart."""
    return list(memories(count, tenant=BYSTANDER, start=START))


def bystander_questions(held: list[MemoryItem]) -> tuple[list[str], list[str]]:
    """The questions asked, and the bystander's words: their terms that ``held`` holds."""
    vocabulary = set().union(*(term_set(item.content) for item in held))
    asked = [q for q in questions(200) if term_set(q) & vocabulary][:QUESTIONS]
    words = sorted(set().union(*(term_set(q) for q in asked)) & vocabulary)
    return asked, words


def crowd_items(count: int, words: list[str], variant: str) -> Iterator[MemoryItem]:
    """``count`` tiny private items of the other user, each of the bystander's words.

    ``some``: three of them each (a seeded draw); ``all``: every one of them.
    """
    rng = random.Random(34)
    for i in range(count):
        held = words if variant == "all" else rng.sample(words, min(3, len(words)))
        yield MemoryItem(
            item_id=f"c{i:07d}",
            agent_id=CROWD.agent_id,
            user_id=CROWD.user_id,
            content=" ".join(held),
            created_at=START + timedelta(seconds=i),
        )


async def put_all(stores: Stores, items: Iterator[MemoryItem]) -> None:
    """``items`` into episodic memory, in batches of :data:`BATCH`."""
    while batch := list(itertools.islice(items, BATCH)):
        await stores.episodic.put_many(batch)


class Bystander:
    """The bystander's turns on one set of stores: their times and what each question showed."""

    def __init__(self, stores: Stores, asked: list[str]) -> None:
        self.orchestrator = Orchestrator(
            stores, OrchestratorConfig(deadline_ms=60_000), clock=Ticking(NOW)
        )
        self.asked = asked
        self.times: list[float] = []
        self.cpu_times: list[float] = []
        self.shown: dict[int, list[str]] = {}

    async def turn(self, number: int) -> None:
        """The ``number``-th turn (a new session), timed after the first :data:`WARM_UP`."""
        question = number % len(self.asked)
        request = TurnRequest(
            agent_id=AGENT,
            user_id=BYSTANDER.user_id,
            session_id=f"s{number}",
            user_input=self.asked[question],
        )
        began, cpu = time.perf_counter(), time.thread_time()
        result = await self.orchestrator.start_turn(request)
        took, cpu_took = time.perf_counter() - began, time.thread_time() - cpu
        if number >= WARM_UP:
            self.times.append(took * 1_000)
            self.cpu_times.append(cpu_took * 1_000)
        self.shown.setdefault(question, _memories_shown(result.bundle.fragments))

    def p50(self) -> float:
        return statistics.median(self.times)

    def cpu_p50(self) -> float:
        """The median of this thread's CPU time a turn, in ms (time waiting for a core left out)."""
        return statistics.median(self.cpu_times)

    def results(self) -> list[list[str]]:
        return [self.shown[i] for i in sorted(self.shown)]


def _memories_shown(fragments: Any) -> list[str]:
    return [
        item
        for fragment in fragments
        if fragment.section in (Section.EPISODIC, Section.SEMANTIC)
        for item in fragment.provenance.item_ids
    ]


async def measure(
    opened: Callable[[str], contextlib.AbstractAsyncContextManager[Stores]],
    variant: str,
    *,
    memories_count: int,
    items: int,
    rounds: int,
    embedder: Embedder | None = None,
) -> dict[str, Any]:
    """One variant: the bystander's p50 without and with the other user's items, and results.

    Two fresh stores hold the bystander's memories; one also the other
    user's items. The bystander's turns alternate between them (which goes
    first alternates too), so that both meet the same machine.
    """
    held = bystander_memories(memories_count)
    asked, words = bystander_questions(held)
    crowd_ids = {f"c{i:07d}" for i in range(items)}
    async with opened("before") as plain, opened("after") as crowded:
        await put_all(plain, iter(held))
        await put_all(crowded, iter(held))
        began = time.perf_counter()
        await put_all(crowded, crowd_items(items, words, variant))
        written = time.perf_counter() - began
        before, after = Bystander(plain, asked), Bystander(crowded, asked)
        for number in range(WARM_UP + rounds):
            for side in (before, after) if number % 2 else (after, before):
                await side.turn(number)
        matching = await _matching_reference(crowded, held, items, words, variant, asked, embedder)
    shown_before, shown_after = before.results(), after.results()
    return {
        "variant": variant,
        "bystander_memories": memories_count,
        "bystander_words": len(words),
        "other_items": items,
        "write_s": round(written, 1),
        "before_p50_ms": round(before.p50(), 2),
        "after_p50_ms": round(after.p50(), 2),
        "ratio": round(after.p50() / before.p50(), 2),
        "before_cpu_p50_ms": round(before.cpu_p50(), 2),
        "after_cpu_p50_ms": round(after.cpu_p50(), 2),
        "cpu_ratio": round(after.cpu_p50() / before.cpu_p50(), 2),
        "questions": len(shown_before),
        "same": sum(a == b for a, b in zip(shown_before, shown_after, strict=True)),
        "same_set": sum(set(a) == set(b) for a, b in zip(shown_before, shown_after, strict=True)),
        "foreign": sum(1 for shown in shown_after for item in shown if item in crowd_ids),
        "searches_as_reference": matching,
    }


async def _matching_reference(
    crowded: Stores,
    held: list[MemoryItem],
    items: int,
    words: list[str],
    variant: str,
    asked: list[str],
    embedder: Embedder | None,
) -> int:
    """How many of the bystander's top-10 searches on ``crowded`` rank as the reference does.

    The reference: the in-memory store holding the same items (the
    backends' rankings agree to the bit), each hit's id and score compared.
    """
    reference = Stores.in_memory(embedder=embedder)
    await put_all(reference, iter(held))
    await put_all(reference, crowd_items(items, words, variant))
    same = 0
    for question in asked:
        query = MemoryQuery(text=question, limit=10, now=NOW)
        got, want = (
            [(hit.item.item_id, round(hit.score, 9)) for hit in hits]
            for hits in [
                await crowded.episodic.search(BYSTANDER, query),
                await reference.episodic.search(BYSTANDER, query),
            ]
        )
        same += got == want
    await reference.aclose()
    return same


def _openers(
    backend: str, scratch: Path, dsn_of: Callable[[str], str], embedder: Embedder | None
) -> Callable[[str], Callable[[str], contextlib.AbstractAsyncContextManager[Stores]]]:
    """For each variant, fresh stores of ``backend`` by name (``before``, ``after``)."""

    def opener(variant: str) -> Callable[[str], contextlib.AbstractAsyncContextManager[Stores]]:
        @contextlib.asynccontextmanager
        async def opened(side: str) -> AsyncIterator[Stores]:
            if backend == "memory":
                stores = Stores.in_memory(embedder=embedder)
            elif backend == "sqlite":
                from prefrontal.stores.sqlite import open_stores

                stores = open_stores(scratch / f"{variant}-{side}.db", embedder=embedder)
            else:
                from prefrontal.stores.postgres import open_stores as open_postgres

                stores = open_postgres(dsn_of(f"{variant}_{side}"), max_size=4, embedder=embedder)
            try:
                yield stores
            finally:
                await stores.aclose()

        return opened

    return opener


def run(backends: list[str], args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every variant on every backend of ``backends``."""
    figures = []
    embedder = HashingEmbedder(DIMENSIONS) if args.hybrid else None
    with contextlib.ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bystander-")))
        server = None
        if "postgres" in backends:
            from tests.postgres_server import running_server

            server = stack.enter_context(running_server())

        def dsn_of(variant: str) -> str:
            assert server is not None
            return str(server.create_database(f"bystander_{variant}"))

        for backend in backends:
            opener = _openers(backend, scratch, dsn_of, embedder)
            for variant in args.variant:
                outcome = anyio.run(
                    lambda: measure(
                        opener(variant),  # noqa: B023 - run at once, inside the loop
                        variant,  # noqa: B023
                        memories_count=args.memories,
                        items=args.items,
                        rounds=args.rounds,
                        embedder=embedder,
                    )
                )
                figures.append({"backend": backend, "hybrid": args.hybrid} | outcome)
                print(json.dumps(figures[-1]), flush=True)
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.bystander")
    parser.add_argument("--backend", choices=[*BACKENDS, "all"], default="all")
    parser.add_argument("--variant", choices=VARIANTS, nargs="+", default=list(VARIANTS))
    parser.add_argument("--memories", type=int, default=1_000)
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=36)
    parser.add_argument("--hybrid", action="store_true", help="stores with the hashing embedder")
    parser.add_argument("--against", type=Path, help="another checkout, measured in the same run")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    backends = list(BACKENDS) if args.backend == "all" else [args.backend]
    if args.against is None:
        figures = run(backends, args)
        if args.child:
            print(json.dumps(figures))
        return
    arguments = ["--backend", args.backend, "--variant", *args.variant]
    arguments += ["--memories", str(args.memories), "--items", str(args.items)]
    arguments += ["--rounds", str(args.rounds), *(["--hybrid"] if args.hybrid else [])]
    sources = {"this": child.ROOT / "src", "against": args.against / "src"}
    for name, source in sources.items():
        for figures in child.module("tests.benchmarks.bystander", source, *arguments):
            print(json.dumps({"source": name} | figures), flush=True)


if __name__ == "__main__":
    main()
