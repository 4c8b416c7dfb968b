"""An opt-in setting for the garbage collector, for processes that run many turns.

A turn allocates thousands of short-lived objects (models, fragments,
dicts), and CPython's default first-generation threshold (700 allocations)
makes the collector run several times a turn, each time walking the young
objects and, every tenth and hundredth run, the older ones: the stores'
items and traces of an in-memory process. A higher first-generation
threshold lets most turns end before a collection; the objects a turn
drops are freed by reference counting either way. Importing prefrontal
changes nothing: an application calls :func:`tune_gc` once at start-up
if it wants it (``docs/performance.md`` has the figures).

A server can also call :func:`freeze_start_up` once it has started: the
objects alive then (modules, classes, the application, the opened stores)
are never garbage, yet every full collection would walk them again.
"""

from __future__ import annotations

import gc

__all__ = ["RAISED_THRESHOLD", "freeze_start_up", "tune_gc"]

RAISED_THRESHOLD = 50_000
"""The first-generation threshold :func:`tune_gc` sets unless told otherwise."""


def tune_gc(threshold: int = RAISED_THRESHOLD) -> tuple[int, int, int]:
    """Set the collector's first-generation threshold to ``threshold``; return the old thresholds.

    The older generations' thresholds are kept. Restore the old setting with
    ``gc.set_threshold(*returned)``. ``threshold`` must be at least 1 (0 would
    turn automatic collection off, which this helper does not do).
    """
    if threshold < 1:
        raise ValueError(f"threshold must be at least 1, got {threshold}")
    before = gc.get_threshold()
    gc.set_threshold(threshold, *before[1:])
    return before


def freeze_start_up() -> int:
    """Collect, then move every object alive to the collector's permanent generation; how many.

    For a process that has finished starting (imports done, stores opened):
    no later collection walks those objects again, so a full collection
    costs what was allocated since, not the whole heap. A frozen object is
    never collected, even if it later becomes unreachable in a cycle: call
    it once, after start-up, not per turn. ``gc.unfreeze()`` undoes it.
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
