"""A bystander's turns, before and after another user of the agent writes 50,000 items.

    python -m tests.benchmarks.bystander --backend memory|sqlite|postgres|all

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
ratio (after / before; the goal: at most 1.3) are printed. Timing the two
in alternation lets both meet the same load on a shared machine. Each
variant has stores of its own (PostgreSQL: databases of their own on the
throwaway server of ``tests/postgres_server.py``).

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
from prefrontal.stores import MemoryItem, MemoryQuery, Stores, Tenant
from prefrontal.testing.synthetic import memories, questions

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
        began = time.perf_counter()
        result = await self.orchestrator.start_turn(request)
        took = time.perf_counter() - began
        if number >= WARM_UP:
            self.times.append(took * 1_000)
        self.shown.setdefault(question, _memories_shown(result.bundle.fragments))

    def p50(self) -> float:
        return statistics.median(self.times)

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
        matching = await _matching_reference(crowded, held, items, words, variant, asked)
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
) -> int:
    """How many of the bystander's top-10 searches on ``crowded`` rank as the reference does.

    The reference: the in-memory store holding the same items (the
    backends' rankings agree to the bit), each hit's id and score compared.
    """
    reference = Stores.in_memory()
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
    backend: str, scratch: Path, dsn_of: Callable[[str], str]
) -> Callable[[str], Callable[[str], contextlib.AbstractAsyncContextManager[Stores]]]:
    """For each variant, fresh stores of ``backend`` by name (``before``, ``after``)."""

    def opener(variant: str) -> Callable[[str], contextlib.AbstractAsyncContextManager[Stores]]:
        @contextlib.asynccontextmanager
        async def opened(side: str) -> AsyncIterator[Stores]:
            if backend == "memory":
                stores = Stores.in_memory()
            elif backend == "sqlite":
                from prefrontal.stores.sqlite import open_stores

                stores = open_stores(scratch / f"{variant}-{side}.db")
            else:
                from prefrontal.stores.postgres import open_stores as open_postgres

                stores = open_postgres(dsn_of(f"{variant}_{side}"), max_size=4)
            try:
                yield stores
            finally:
                await stores.aclose()

        return opened

    return opener


def run(backends: list[str], args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every variant on every backend of ``backends``."""
    figures = []
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
            opener = _openers(backend, scratch, dsn_of)
            for variant in args.variant:
                outcome = anyio.run(
                    lambda: measure(
                        opener(variant),  # noqa: B023 - run at once, inside the loop
                        variant,  # noqa: B023
                        memories_count=args.memories,
                        items=args.items,
                        rounds=args.rounds,
                    )
                )
                figures.append({"backend": backend} | outcome)
                print(json.dumps(figures[-1]), flush=True)
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.bystander")
    parser.add_argument("--backend", choices=[*BACKENDS, "all"], default="all")
    parser.add_argument("--variant", choices=VARIANTS, nargs="+", default=list(VARIANTS))
    parser.add_argument("--memories", type=int, default=1_000)
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=36)
    args = parser.parse_args(argv)
    backends = list(BACKENDS) if args.backend == "all" else [args.backend]
    run(backends, args)


if __name__ == "__main__":
    main()
