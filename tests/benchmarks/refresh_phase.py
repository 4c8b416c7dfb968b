"""Phase 10 in a growing conversation: CPU of ``working_memory_init`` and of its buffer refresh.

    python -m tests.benchmarks.refresh_phase                          # this checkout
    python -m tests.benchmarks.refresh_phase --against /tmp/old/src   # and another, same run

The conversation is :func:`tests.benchmarks.growing_turn.conversation` on in-memory stores
(300 turns over 16 sessions of the demo agent, memory growing with them). Each turn, the
process time (CPU) of phase 10 is measured around the phase's ``run``, and that of the
buffer's refresh (:meth:`prefrontal.buffer.SessionBuffer.refresh_turn`) around it: the rest
of the phase is making the offers from the turn's fragments, the trace detail and the view.
``gc_ms`` is the garbage collector's time over the whole turn (every phase), from
``gc.callbacks``.

Each checkout runs in a child process of its own (:mod:`tests.benchmarks.child`), the two
alternating ``--rounds`` times (3); each turn's figure is its median over the rounds. It
prints one JSON line: per checkout the p50 and mean (ms) of the phase, the refresh and the
rest, the refresh's counts over the run (offers admitted, refreshed, refused, evicted),
and with ``--against`` the ratios old/new and ``same_decisions``, whether both checkouts'
refreshes admitted, refreshed, refused and evicted the same numbers at every turn, with the
same themes. Figures are reported, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from tests.benchmarks import child


async def measured(turns: int, sessions: int) -> list[dict[str, Any]]:
    """Run the conversation with phase 10 and the refresh timed: one record per turn."""
    import gc

    from prefrontal.buffer import session as buffer_session
    from prefrontal.phases import working_memory_init
    from tests.benchmarks.growing_turn import conversation

    records: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    collecting = [0.0, 0.0]

    def on_collect(phase: str, _info: dict[str, Any]) -> None:
        if phase == "start":
            collecting[0] = time.process_time()
        else:
            collecting[1] += time.process_time() - collecting[0]

    phase_run = working_memory_init.SPEC.run
    refresh = buffer_session.SessionBuffer.refresh_turn

    async def timed_phase(turn: Any) -> Any:
        gc_before = collecting[1]
        began = time.process_time()
        outcome = await phase_run(turn)
        current["phase"] = (time.process_time() - began) * 1e3
        current["gc_in_phase"] = (collecting[1] - gc_before) * 1e3
        records.append(dict(current))
        current.clear()
        return outcome

    async def timed_refresh(self: Any, *args: Any, **kwargs: Any) -> Any:
        began = time.process_time()
        report = await refresh(self, *args, **kwargs)
        current["refresh"] = (time.process_time() - began) * 1e3
        current["counts"] = [
            len(report.admitted),
            len(report.refreshed),
            len(report.refused),
            len(report.evicted),
            list(report.themes),
        ]
        return report

    object.__setattr__(working_memory_init.SPEC, "run", timed_phase)  # the one PHASES holds
    buffer_session.SessionBuffer.refresh_turn = timed_refresh  # type: ignore[method-assign]
    gc.callbacks.append(on_collect)
    try:
        turned = await conversation("memory", turns, sessions)
    finally:
        gc.callbacks.remove(on_collect)
    for record, turn in zip(records, turned, strict=True):
        record["turn"] = turn["start"] + turn["end"]
    return records


def child_main(turns: int, sessions: int) -> None:
    """The child: run the conversation, print its records as one JSON line."""
    import anyio

    print(json.dumps(anyio.run(measured, turns, sessions)))


def summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """p50 and mean (ms) of the phase, the refresh and the rest; the refresh's counts."""

    def figures(values: list[float]) -> list[float]:
        return [round(statistics.median(values), 3), round(statistics.fmean(values), 3)]

    counts = [r["counts"] for r in records]
    return {
        "phase_p50_mean_ms": figures([r["phase"] for r in records]),
        "refresh_p50_mean_ms": figures([r["refresh"] for r in records]),
        "rest_p50_mean_ms": figures([r["phase"] - r["refresh"] for r in records]),
        "gc_in_phase_mean_ms": round(statistics.fmean(r["gc_in_phase"] for r in records), 3),
        "turn_p50_ms": round(statistics.median(r["turn"] for r in records), 3),
        "admitted_refreshed_refused_evicted": [sum(c[i] for c in counts) for i in range(4)],
    }


def run(turns: int, sessions: int, rounds: int, against: Path | None) -> dict[str, Any]:
    """Measure each checkout (``against`` too, when given) ``rounds`` times, alternating."""
    sources: dict[str, Path | None] = {"new": child.ROOT / "src"}
    if against is not None:
        sources["old"] = against
    found: dict[str, list[list[dict[str, Any]]]] = {name: [] for name in sources}
    for number in range(rounds):
        order = list(sources.items())
        for name, source in order if number % 2 == 0 else reversed(order):
            found[name].append(
                child.module("tests.benchmarks.refresh_phase", source, str(turns), str(sessions))
            )
    keys = ("phase", "refresh", "gc_in_phase", "turn")
    per_turn = {
        name: [
            {
                **runs[0][index],
                **{key: statistics.median(r[index][key] for r in runs) for key in keys},
            }
            for index in range(turns)
        ]
        for name, runs in found.items()
    }
    result: dict[str, Any] = {name: summary(records) for name, records in per_turn.items()}
    if against is not None:
        new, old = result["new"], result["old"]
        result["ratio_old_new"] = {
            key: round(old[key][0] / new[key][0], 2)
            for key in ("phase_p50_mean_ms", "refresh_p50_mean_ms", "rest_p50_mean_ms")
        }
        result["same_decisions"] = all(
            [r["counts"] for r in runs] == [r["counts"] for r in found["new"][0]]
            for runs in (*found["new"], *found["old"])
        )
    result["load"] = round(os.getloadavg()[0], 1)
    return result


def main(argv: list[str] | None = None) -> None:
    """Parse the options; run as the parent (figures) or as a ``--child`` (records)."""
    os.environ.setdefault("PYTHONHASHSEED", "0")
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.refresh_phase")
    parser.add_argument("--child", nargs=2, metavar=("TURNS", "SESSIONS"))
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--against", type=Path, default=None, help="an older checkout's src")
    options = parser.parse_args(argv)
    if options.child:
        child_main(int(options.child[0]), int(options.child[1]))
        return
    print(json.dumps(run(options.turns, options.sessions, options.rounds, options.against)))


if __name__ == "__main__":
    main()
