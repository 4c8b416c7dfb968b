"""CPU seconds of processes read from ``/proc``: a server and its workers, PostgreSQL, this one.

Linux only (elsewhere every figure is ``None``). A process tree is read
again at each sample, so workers and PostgreSQL backends that start or end
between two samples are counted from when they are first seen.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def own_cpu_s() -> float:
    """User and system CPU seconds of this process."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(part) for part in text.split()]


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants, as ``/proc`` shows them now."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(_children(current))
    return found


def cpu_s(pids: list[int]) -> float:
    """User and system CPU seconds the processes ``pids`` have used (the gone ones count 0)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return total / TICKS


class TreeCpu:
    """CPU seconds of a process tree since :meth:`start`, per process seen (so none is lost)."""

    def __init__(self, pid: int | None) -> None:
        self.pid = pid
        self._first: dict[int, float] = {}
        self._last: dict[int, float] = {}

    def _sample(self) -> dict[int, float]:
        if self.pid is None:
            return {}
        return {pid: cpu_s([pid]) for pid in tree(self.pid)}

    def start(self) -> None:
        """Begin counting from now."""
        self._first = self._sample()
        self._last = dict(self._first)

    def seconds(self) -> float | None:
        """CPU seconds used since :meth:`start` (``None`` when there is no process to read)."""
        if self.pid is None:
            return None
        now = self._sample()
        self._last.update(now)
        return sum(value - self._first.get(pid, 0.0) for pid, value in self._last.items())
