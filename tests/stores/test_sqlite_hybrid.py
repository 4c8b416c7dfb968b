"""The pieces of SQLite hybrid search: the scan beside the search, fusion by row id."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from prefrontal.stores.memory_search import best_hits
from prefrontal.stores.sqlite.hybrid import Fused, beside


def test_the_scan_runs_in_another_thread_and_gives_its_result() -> None:
    """The work runs beside the block, in a thread of its own, and its result is handed over."""
    ran_in: list[threading.Thread] = []

    def work() -> int:
        ran_in.append(threading.current_thread())
        return 42

    with beside(work) as scanning:
        assert scanning.result() == 42
    assert ran_in and ran_in[0] is not threading.current_thread()


def test_the_scan_has_finished_when_the_block_fails() -> None:
    """A block that raises leaves only once the work is done: no scan outlives its search."""
    release, done = threading.Event(), threading.Event()

    def work() -> None:
        release.wait(5)
        done.set()

    def failing() -> None:
        with beside(work):
            release.set()
            raise RuntimeError("the lexical leg failed")

    with pytest.raises(RuntimeError, match="lexical leg"):
        failing()
    assert done.is_set()


def test_what_the_scan_raised_is_raised_by_its_result() -> None:
    def work() -> None:
        raise ValueError("scan failed")

    with pytest.raises(ValueError, match="scan failed"), beside(work) as scanning:
        scanning.result()


def test_fusing_by_row_id_gives_the_scores_fusing_by_key_gives() -> None:
    """The same arithmetic: each row's fused score equals its item's, to the bit."""
    bm25 = {1: 3.25, 2: 1.5, 5: 0.75, 9: 2.0}
    vector = {1: 0.31, 2: 0.62, 3: 0.12, 7: 0.57, 9: 0.2}
    fused = Fused({"bm25": bm25, "vector": vector})
    by_rowid = dict(zip(fused.rowids.tolist(), fused.scores.tolist(), strict=True))
    keyed = {
        name: {f"item-{rowid}": value for rowid, value in values.items()}
        for name, values in (("bm25", bm25), ("vector", vector))
    }
    expected = {key: score for key, score, _ in best_hits(keyed, 100)}
    assert {f"item-{rowid}": score for rowid, score in by_rowid.items() if score > 0} == expected


def test_the_rows_reaching_the_last_place_include_every_tie_and_no_zero() -> None:
    """The rows kept for the top k are those at or above the k-th score, ties included,
    none scoring 0."""
    scores = Fused({"bm25": {1: 0.9, 2: 0.5, 3: 0.5, 4: 0.5, 5: 0.1, 6: 0.0}})
    assert sorted(scores.reaching(2)) == [1, 2, 3, 4]
    assert sorted(scores.reaching(5)) == [1, 2, 3, 4, 5]
    assert sorted(scores.reaching(10)) == [1, 2, 3, 4, 5]
    assert Fused({"bm25": {1: 0.0}}).reaching(3) == {}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_scans_with_threads_of_its_own() -> None:
    """A process forked after a scan (a worker started from a warm parent) scans too."""
    with beside(lambda: 1) as scanning:
        assert scanning.result() == 1
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's exit code is the assertion
        code = 1
        try:
            with beside(lambda: 7) as scanning:
                code = 0 if scanning.result(timeout=10) == 7 else 1
        finally:
            os._exit(code)
    deadline = time.monotonic() + 20
    while (done := os.waitpid(child, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    if done[0] == 0:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        pytest.fail("the child's scan never ran")
    assert os.waitstatus_to_exitcode(done[1]) == 0


def test_fusing_in_arrays_gives_fuse_s_scores_to_the_bit() -> None:
    """Row by row, the array fusion scores what ``fuse`` does (ties, zeros, negative cosines,
    rows in one signal only, a flat vector signal), and keeps the rows reaching the k-th."""
    import heapq
    import random

    from prefrontal.retrieval.fusion import fuse
    from prefrontal.stores.sqlite.hybrid import Fused

    rng = random.Random(41)
    for case in range(60):
        rows = rng.sample(range(10_000), rng.randint(1, 400))
        lexical = {r: rng.choice([0.0, rng.uniform(0, 30), 7.5]) for r in rows[: len(rows) // 2]}
        flat = case % 10 == 0
        vector = {r: 0.3 if flat else rng.choice([rng.uniform(-0.2, 1), 0.25]) for r in rows[3:]}
        signals = {"bm25": lexical, "vector": vector}
        keyed = {name: {str(r): v for r, v in scored.items()} for name, scored in signals.items()}
        want = {int(key): value for key, value in fuse(keyed, {}).items()}
        fused = Fused(signals)
        assert dict(zip(fused.rowids.tolist(), fused.scores.tolist(), strict=True)) == want
        limit = rng.choice([1, 5, 10, 50])
        positive = [value for value in want.values() if value > 0]
        least = heapq.nlargest(limit, positive)[-1] if len(positive) > limit else 0.0
        reached = {row: value for row, value in want.items() if value > 0 and value >= least}
        assert fused.reaching(limit) == reached
