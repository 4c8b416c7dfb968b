"""The collector setting is opt-in: importing changes nothing, calling sets and returns."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from prefrontal import tune_gc
from prefrontal.gc_tuning import RAISED_THRESHOLD


def test_importing_prefrontal_leaves_the_collector_as_it_was() -> None:
    """A fresh interpreter has CPython's thresholds after importing prefrontal."""
    code = "import gc; before = gc.get_threshold(); import prefrontal; print(before == gc.get_threshold())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_tune_gc_raises_the_first_threshold_and_returns_the_old_ones() -> None:
    """The first generation's threshold is set, the others kept, and the old setting returned."""
    original = gc.get_threshold()
    try:
        before = tune_gc()
        assert before == original
        assert gc.get_threshold() == (RAISED_THRESHOLD, *original[1:])
        assert tune_gc(1_000) == (RAISED_THRESHOLD, *original[1:])
    finally:
        gc.set_threshold(*original)


def test_tune_gc_refuses_to_turn_collection_off() -> None:
    """A threshold of 0 would disable automatic collection: refused, nothing changed."""
    original = gc.get_threshold()
    with pytest.raises(ValueError, match="at least 1"):
        tune_gc(0)
    assert gc.get_threshold() == original


def test_freeze_start_up_moves_what_is_alive_out_of_the_collections() -> None:
    """After it, the objects alive are frozen (no generation holds them) and garbage is not.

    Run in a fresh interpreter: freezing the test process's heap would outlive the test.
    """
    code = (
        "import gc, weakref\n"
        "from prefrontal.gc_tuning import freeze_start_up\n"
        "class Node: pass\n"
        "kept = Node(); kept.me = kept\n"
        "dropped = Node(); dropped.me = dropped; gone = weakref.ref(dropped); del dropped\n"
        "frozen = freeze_start_up()\n"
        "assert frozen == gc.get_freeze_count() > 0, frozen\n"
        "assert gone() is None\n"
        "assert all(o is not kept for o in gc.get_objects())\n"
        "gc.unfreeze()\n"
        "assert any(o is kept for o in gc.get_objects())\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"
