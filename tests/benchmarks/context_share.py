"""What the context query's share of candidates changes: the memories a turn shows, and its time.

``python -m tests.benchmarks.context_share --store /tmp/scale100k`` runs, on
copies of a store built by :mod:`tests.benchmarks.scale` (its ``lexical.db``,
where the demo agent has goals, so phases 5 and 6 search with a context
query), the same new-session turns, the scale benchmark's question and
``--questions`` synthetic ones, at each share of ``--shares``
(``RecallSettings.context_share``; the first is the reference). Each share's
turns run on a copy of their own: a turn's recall counts change what later
turns rank. It prints one JSON line per share:

- ``same_turns``: turns whose rendered episodic memories are the reference's;
- ``shown``: episodic memories rendered over all turns, and ``shared``: how
  many of them the reference rendered too;
- ``turn_p50``: the median turn, in milliseconds, over ``--rounds`` turns of
  the scale question after five untimed ones, on one more copy, the shares
  taking turns.

Figures are reported, never asserted.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from prefrontal import Orchestrator, OrchestratorConfig, Section, TurnRequest
from prefrontal.config import RecallConfig
from prefrontal.demo import DEMO_AGENT, DEMO_USER
from prefrontal.retrieval.settings import RecallSettings
from prefrontal.stores import Stores
from prefrontal.testing.synthetic import questions
from tests.benchmarks.scale import NEW_SESSIONS_START, QUESTION, Ticking, _copy, _open

_sessions = itertools.count()


def _orchestrator(stores: Stores, share: float) -> Orchestrator:
    recall = RecallConfig(scoring=RecallSettings(context_share=share))
    config = OrchestratorConfig(deadline_ms=30_000, recall=recall)
    return Orchestrator(stores, config, clock=Ticking(NEW_SESSIONS_START))


async def _shown(orchestrator: Orchestrator, question: str) -> set[str]:
    """The episodic item ids rendered by a new session's turn asking ``question``."""
    request = TurnRequest(
        agent_id=DEMO_AGENT,
        user_id=DEMO_USER,
        session_id=f"share-{next(_sessions)}",
        user_input=question,
    )
    result = await orchestrator.start_turn(request)
    return {i for f in result.bundle.section(Section.EPISODIC) for i in f.provenance.item_ids}


async def _turn_time(orchestrator: Orchestrator) -> float:
    started = time.perf_counter()
    await _shown(orchestrator, QUESTION)
    return (time.perf_counter() - started) * 1e3


async def _all_shown(database: Path, share: float, texts: list[str]) -> list[set[str]]:
    stores = _open(database)
    orchestrator = _orchestrator(stores, share)
    shown = [await _shown(orchestrator, text) for text in texts]
    await stores.aclose()
    return shown


async def _times(database: Path, shares: list[float], rounds: int) -> list[list[float]]:
    stores = _open(database)
    orchestrators = [_orchestrator(stores, share) for share in shares]
    times: list[list[float]] = [[] for _ in shares]
    for number in range(rounds + 5):
        for at, orchestrator in enumerate(orchestrators):
            took = await _turn_time(orchestrator)
            if number >= 5:
                times[at].append(took)
    await stores.aclose()
    return times


async def measure(
    store: Path, shares: list[float], asked: int, rounds: int
) -> list[dict[str, float]]:
    """The figures of each share (the module's docstring), the first share the reference."""
    texts = [QUESTION, *questions(asked)]
    shown = []
    for share in shares:
        with tempfile.TemporaryDirectory(prefix="prefrontal-share-") as scratch:
            database = _copy(store / "lexical.db", Path(scratch))
            shown.append(await _all_shown(database, share, texts))
    with tempfile.TemporaryDirectory(prefix="prefrontal-share-") as scratch:
        times = await _times(_copy(store / "lexical.db", Path(scratch)), shares, rounds)
    reference = shown[0]
    return [
        {
            "share": share,
            "turns": len(texts),
            "same_turns": sum(a == b for a, b in zip(got, reference, strict=True)),
            "shown": sum(map(len, got)),
            "shared": sum(len(a & b) for a, b in zip(got, reference, strict=True)),
            "turn_p50": statistics.median(took),
        }
        for share, got, took in zip(shares, shown, times, strict=True)
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.context_share")
    parser.add_argument("--store", type=Path, required=True, help="a scale benchmark's store")
    parser.add_argument("--shares", type=float, nargs="+", default=[1.0, 0.3])
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=40)
    arguments = parser.parse_args(argv)
    figures = anyio.run(
        lambda: measure(arguments.store, arguments.shares, arguments.questions, arguments.rounds)
    )
    for line in figures:
        print(json.dumps(line))


if __name__ == "__main__":
    main()
