"""Latency samples of the benchmarks: one summary shape, one JSON output.

:func:`summary` turns samples in milliseconds into ``{count, p50_ms,
p99_ms, max_ms}`` (the p99 is the sample at rank ``int(0.99 * n)``, the
largest when there are fewer than 100); :func:`timed_ms` times one awaited
call; :func:`report` prints a benchmark's figures as indented JSON, the
one line of output the benchmarks that use it write.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any


def summary(samples_ms: list[float], *, digits: int = 2) -> dict[str, float]:
    """Count, median, 99th percentile and largest of ``samples_ms`` (at least one)."""
    ordered = sorted(samples_ms)
    return {
        "count": len(ordered),
        "p50_ms": round(statistics.median(ordered), digits),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], digits),
        "max_ms": round(ordered[-1], digits),
    }


def ratio(during: dict[str, float], idle: dict[str, float], key: str = "p99_ms") -> float:
    """``during[key] / idle[key]``, to one decimal."""
    return round(during[key] / idle[key], 1)


async def timed_ms(call: Callable[[], Awaitable[object]]) -> float:
    """Milliseconds ``await call()`` took."""
    began = time.perf_counter()
    await call()
    return (time.perf_counter() - began) * 1_000


def report(figures: dict[str, Any]) -> None:
    """Print ``figures`` as indented JSON."""
    print(json.dumps(figures, indent=2))
