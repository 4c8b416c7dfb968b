"""Benchmark child processes: Python run with a given checkout's ``src`` first on its path.

A benchmark that compares two checkouts in one run measures each in a
process of its own: ``PYTHONPATH`` holds that checkout's ``src`` (so
``prefrontal`` is imported from it), then this checkout's root (so
``tests.benchmarks`` is this one's). The child prints its figures as JSON
on its last line of standard output; :func:`run` and :func:`finish` return
that line parsed, and raise :class:`ChildFailed`, holding the child's
standard error, when it exits with another status than 0.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
"""This checkout: the child's working directory, on its path after the ``src`` given."""


class ChildFailed(RuntimeError):
    """A child process exited with another status than 0; the message holds its stderr."""


def environment(source: Path | None) -> dict[str, str]:
    """This process's environment with ``PYTHONPATH`` = ``source`` (when given), :data:`ROOT`."""
    path = [str(source), str(ROOT)] if source is not None else [str(ROOT)]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}


def start(source: Path | None, *arguments: str) -> subprocess.Popen[str]:
    """``python ARGUMENTS…`` started with ``source`` on its path, stdout and stderr piped.

    Many may run at once; :func:`finish` each.
    """
    return subprocess.Popen(
        [sys.executable, *arguments],
        env=environment(source),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> Any:
    """Wait for ``process``: its last line of stdout, parsed as JSON.

    Raises :class:`ChildFailed` with its stderr when it exited with another status than 0.
    """
    stdout, stderr = process.communicate()
    if process.returncode != 0:
        arguments = process.args if isinstance(process.args, list) else [process.args]
        command = " ".join(str(argument)[:80] for argument in arguments[1:])
        raise ChildFailed(f"{command} exited with {process.returncode}:\n{stderr}")
    return json.loads(stdout.strip().splitlines()[-1])


def run(source: Path | None, *arguments: str) -> Any:
    """``python ARGUMENTS…`` with ``source`` on its path, to its end: its last JSON line."""
    return finish(start(source, *arguments))


def module(name: str, source: Path | None, *arguments: str) -> Any:
    """``python -m NAME --child ARGUMENTS…`` with ``source`` on its path: its last JSON line."""
    return run(source, "-m", name, "--child", *arguments)


def alternated(
    name: str, source: Path, arguments: tuple[str, ...], alternations: int
) -> dict[str, list[Any]]:
    """``module(name, …)`` for this checkout's ``src`` and ``source`` in turn, ``alternations`` each.

    The side that goes first changes with every alternation. Returns each
    side's last JSON lines: ``{"this": [...], "against": [...]}``.
    """
    sides = [("this", ROOT / "src"), ("against", source)]
    found: dict[str, list[Any]] = {side: [] for side, _ in sides}
    for alternation in range(alternations):
        for side, src in sides if alternation % 2 == 0 else sides[::-1]:
            found[side].append(module(name, src, *arguments))
    return found


def compared(found: dict[str, list[Any]], figures: tuple[str, ...]) -> list[dict[str, Any]]:
    """Rows of :func:`alternated` children (lists of rows with a ``mode``), mode by mode.

    Each row holds the median over the children of each side's ``figures``
    (``this_<figure>``, ``against_<figure>``, for the figures a mode has) and
    ``speedup``: the first figure's ``against`` over ``this``.
    """
    rows: list[dict[str, Any]] = []
    for mode in (row["mode"] for row in found["this"][0]):
        row: dict[str, Any] = {"mode": mode}
        for side, runs in found.items():
            of_mode = [r for run_ in runs for r in run_ if r["mode"] == mode]
            for figure in figures:
                if figure in of_mode[0]:
                    row[f"{side}_{figure}"] = statistics.median(r[figure] for r in of_mode)
        first = figures[0]
        row["speedup"] = round(row[f"against_{first}"] / row[f"this_{first}"], 2)
        rows.append(row)
    return rows


def print_rows(rows: list[dict[str, Any]], *, as_child: bool) -> None:
    """Print a benchmark's rows: all on one JSON line as a child (what :func:`finish` reads),
    one JSON line a row otherwise."""
    if as_child:
        print(json.dumps(rows))
        return
    for row in rows:
        print(json.dumps(row))
