"""How long a command waits before it starts: ``import prefrontal`` and ``prefrontal --help``.

    python -m tests.benchmarks.start_time                          # this checkout
    python -m tests.benchmarks.start_time --against /tmp/old/src   # and another, same run

Each case runs ``--runs`` times (15) in a fresh interpreter (this checkout's ``src``
first on its path, or the other's), the checkouts
alternating run by run, and the median wall time of each is printed (ms),
with the bare interpreter's start (``python -c pass``) as the floor and,
with ``--against``, the ratio old/new. ``prefrontal --help`` is the
console script's entry point called as the script calls it. Figures are
reported, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tests.benchmarks import child

CASES = {
    "python -c pass": "pass",
    "import prefrontal": "import prefrontal",
    "import prefrontal.cli": "import prefrontal.cli",
    "prefrontal --help": (
        "import sys; sys.argv = ['prefrontal', '--help']\nfrom prefrontal.cli import main\nmain()"
    ),
}
"""Each case's name and the code a fresh interpreter runs for it."""


def once(source: Path | None, code: str) -> float:
    """Seconds a fresh interpreter with ``source`` first on its path takes to run ``code``."""
    environment = {**child.environment(source), "COLUMNS": "100"}
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", code],
        env=environment,
        cwd=child.ROOT,
        stdout=subprocess.DEVNULL,
        check=True,
    )
    return time.perf_counter() - began


def run(runs: int, against: Path | None) -> dict[str, object]:
    """Median wall ms of every case per checkout (the module docstring)."""
    sources: dict[str, Path | None] = {"new": child.ROOT / "src"}
    if against is not None:
        sources["old"] = against
    times: dict[tuple[str, str], list[float]] = {
        (case, name): [] for case in CASES for name in sources
    }
    for _ in range(runs):
        for case, code in CASES.items():
            for name, source in sources.items():
                times[case, name].append(once(source, code))
    medians = {
        name: {case: round(statistics.median(times[case, name]) * 1e3) for case in CASES}
        for name in sources
    }
    figures: dict[str, object] = {"load": round(os.getloadavg()[0], 1), "median_ms": medians}
    if against is not None:
        figures["ratio_old_new"] = {
            case: round(medians["old"][case] / medians["new"][case], 1) for case in CASES
        }
    return figures


def main(argv: list[str] | None = None) -> None:
    """Parse the options, measure, print one JSON line."""
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks.start_time")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--against", type=Path, default=None, help="an older checkout's src")
    options = parser.parse_args(argv)
    print(json.dumps(run(options.runs, options.against)))


if __name__ == "__main__":
    main()
