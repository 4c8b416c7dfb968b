"""Every garbage collection timed while a block runs, generation by generation."""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def collections_timed() -> Iterator[dict[int, list[float]]]:
    """Seconds of each collection of generations 0, 1 and 2 started inside the block.

    A ``gc`` callback notes when a collection starts and how long it took;
    it is removed when the block ends.
    """
    began: list[float] = []
    spent: dict[int, list[float]] = {0: [], 1: [], 2: []}

    def timed(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            began.append(time.perf_counter())
        elif began:
            spent[info["generation"]].append(time.perf_counter() - began.pop())

    gc.callbacks.append(timed)
    try:
        yield spent
    finally:
        gc.callbacks.remove(timed)
