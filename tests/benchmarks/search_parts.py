"""Where a SQLite hybrid search spends its time: the time inside each part, per search.

:func:`timed_parts` wraps the functions a hybrid search is made of (each
one that the checkout imported has: an older checkout may lack some, or
call others) with a timer that adds the time spent inside to its part.
Parts may overlap (the vector scan runs beside the BM25 top k), so they
add up to more than the search when they do. For measuring only:
``python -m tests.benchmarks.scale run --hybrid-only --parts``.
"""

from __future__ import annotations

import functools
import importlib
import threading
import time
from collections.abc import Callable
from typing import Any

PARTS = {
    "bm25_top": ("prefrontal.stores.sqlite.topk", "by_rowid"),
    "bm25_more": ("prefrontal.stores.sqlite.topk", "rows_scores"),
    "keyed": ("prefrontal.stores.sqlite.topk", "keyed"),
    "allowed": ("prefrontal.stores.sqlite.vector_file", "MappedRows.allowed"),
    "scan": ("prefrontal.retrieval.vector_index", "Similarities.__init__"),
    "median": ("prefrontal.retrieval.vector_index", "Similarities.median"),
    "median_best_placed": ("prefrontal.retrieval.vector_index", "Similarities.prepare"),
    "placed": ("prefrontal.retrieval.vector_index", "Similarities.normalised"),
    "contenders": ("prefrontal.retrieval.vector_index", "hybrid_rows"),
    "exact_signal": ("prefrontal.retrieval.vector_index", "Similarities.signal"),
    "fusion": ("prefrontal.stores.memory_search", "best_hits"),
    "fusion_by_rowid": ("prefrontal.stores.sqlite.hybrid", "best_rows"),
    "search": ("prefrontal.stores.sqlite.memory", "_Search.__call__"),
}
"""Each part: the module and the (dotted) name of the function timed."""
USERS = ("prefrontal.stores.sqlite.memory", "prefrontal.stores.sqlite.hybrid")
"""Modules that may have imported a timed function by name: their binding is wrapped too."""


class Parts:
    """Seconds spent inside each part, and how many searches ran."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = dict.fromkeys(PARTS, 0.0)
        self.calls = 0
        self.lock = threading.Lock()

    def per_search_ms(self) -> dict[str, float]:
        """Each part's milliseconds per search (parts never called left out)."""
        searches = max(1, self.calls)
        return {
            f"part_{name}": seconds / searches * 1e3
            for name, seconds in self.seconds.items()
            if seconds > 0 and name != "search"
        }

    def add(self, name: str, seconds: float) -> None:
        """Add ``seconds`` to part ``name`` (one measured outside the timed functions)."""
        with self.lock:
            self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def reset(self) -> None:
        """Start counting again (after the warm-up searches)."""
        with self.lock:
            self.seconds = dict.fromkeys(PARTS, 0.0)
            self.calls = 0


def _timer(parts: Parts, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            took = time.perf_counter() - started
            with parts.lock:
                parts.seconds[name] += took
                if name == "search":
                    parts.calls += 1

    return timed


def timed_parts() -> Parts:
    """Wrap every part this checkout has with a timer; the totals are in the result."""
    parts = Parts()
    for name, (module_name, dotted) in PARTS.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        *owners, attribute = dotted.split(".")
        owner: Any = module
        for step in owners:
            owner = getattr(owner, step, None)
        function = getattr(owner, attribute, None) if owner is not None else None
        if function is None:
            continue
        wrapped = _timer(parts, name, function)
        setattr(owner, attribute, wrapped)
        if not owners:
            for user in USERS:
                try:
                    used = importlib.import_module(user)
                except ImportError:
                    continue
                if getattr(used, attribute, None) is function:
                    setattr(used, attribute, wrapped)
    return parts
