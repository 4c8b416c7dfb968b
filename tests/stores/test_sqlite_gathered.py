"""Gathered: the calls made in one pass of the event loop share one worker-thread hop,
each keeping its own result, exception, context and cancellation."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from prefrontal.errors import StoreError
from prefrontal.stores.sqlite import Database
from prefrontal.stores.sqlite.gathered import MOST_CALLS, PASSES, Gathered

pytestmark = pytest.mark.anyio
WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


def counting_hops(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the worker-thread hops ``anyio.to_thread.run_sync`` makes from now on."""
    hops: list[int] = []
    run_sync = anyio.to_thread.run_sync

    async def counted(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        hops.append(1)
        return await run_sync(fn, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    return hops


async def test_calls_of_one_pass_share_one_hop_and_keep_their_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Five calls started together run in one thread hop; each caller gets its own result."""
    hops = counting_hops(monkeypatch)
    gathered, limiter = Gathered(), anyio.CapacityLimiter(1)
    results: dict[int, tuple[int, int]] = {}

    async def ask(number: int) -> None:
        results[number] = await gathered.run(lambda: (number * 10, threading.get_ident()), limiter)

    async with anyio.create_task_group() as group:
        for number in range(5):
            group.start_soon(ask, number)
    assert {n: value for n, (value, _) in results.items()} == {n: n * 10 for n in range(5)}
    assert len({thread for _, thread in results.values()}) == 1
    assert threading.get_ident() not in {thread for _, thread in results.values()}
    assert len(hops) == 1


async def test_one_calls_exception_reaches_its_caller_only() -> None:
    """A call that raises fails its own caller; the calls beside it return."""
    gathered, limiter = Gathered(), anyio.CapacityLimiter(1)
    outcomes: dict[str, object] = {}

    def failing() -> str:
        raise ValueError("broken row")

    async def ask(name: str, fn: Callable[[], str]) -> None:
        try:
            outcomes[name] = await gathered.run(fn, limiter)
        except ValueError as error:
            outcomes[name] = error

    async with anyio.create_task_group() as group:
        group.start_soon(ask, "first", lambda: "one")
        group.start_soon(ask, "broken", failing)
        group.start_soon(ask, "last", lambda: "three")
    assert outcomes["first"] == "one" and outcomes["last"] == "three"
    assert isinstance(outcomes["broken"], ValueError)


async def test_each_call_runs_in_its_callers_context() -> None:
    """A call sees its own caller's context variables, not those of the call that hopped."""
    gathered, limiter = Gathered(), anyio.CapacityLimiter(1)
    seen: dict[str, str] = {}

    async def ask(name: str) -> None:
        WHO.set(name)
        seen[name] = await gathered.run(WHO.get, limiter)

    async with anyio.create_task_group() as group:
        for name in ("ada", "bo", "cy"):
            group.start_soon(ask, name)
    assert seen == {"ada": "ada", "bo": "bo", "cy": "cy"}


async def test_a_first_caller_cancelled_before_the_hop_leaves_the_others_their_calls() -> None:
    """When the call that would hop is cancelled first, each other caller runs its own call."""
    gathered, limiter = Gathered(), anyio.CapacityLimiter(1)
    results: list[str] = []

    async def first(scope: anyio.CancelScope) -> None:
        with scope:
            await gathered.run(lambda: "never", limiter)
            results.append("not cancelled")

    async def other(name: str) -> None:
        results.append(await gathered.run(lambda: name, limiter))

    scope = anyio.CancelScope()
    async with anyio.create_task_group() as group:
        group.start_soon(first, scope)
        group.start_soon(other, "b")
        group.start_soon(other, "c")
        await anyio.lowlevel.checkpoint()  # the three calls asked, no hop begun
        scope.cancel()
    assert sorted(results) == ["b", "c"]


async def test_a_caller_cancelled_before_its_call_began_is_cancelled_and_it_never_runs() -> None:
    """A caller cancelled while its call waits in the hop is cancelled, its call never runs
    (a write of a batch must not land), and the others return."""
    gathered, limiter = Gathered(), anyio.CapacityLimiter(1)
    started, release = threading.Event(), threading.Event()
    results: dict[str, str] = {}
    ran: list[str] = []

    def waiting_call() -> str:
        ran.append("waiting")
        return "waiting"

    def slow() -> str:
        started.set()
        release.wait(5)
        return "slow"

    async def ask(name: str, fn: Callable[[], str], scope: anyio.CancelScope) -> None:
        with scope:
            results[name] = await gathered.run(fn, limiter)

    waiting = anyio.CancelScope()
    async with anyio.create_task_group() as group:
        group.start_soon(ask, "slow", slow, anyio.CancelScope())
        group.start_soon(ask, "waiting", waiting_call, waiting)
        await anyio.to_thread.run_sync(started.wait, 5)
        waiting.cancel()
        await anyio.sleep(0.01)
        release.set()
    assert results == {"slow": "slow"}
    assert waiting.cancelled_caught
    assert ran == []


async def test_a_caller_cancelled_once_its_call_began_gets_its_outcome_first() -> None:
    """As with ``to_thread.run_sync``: a call that has begun ends before its caller's
    cancellation is raised, and its result is returned to it."""
    gathered, limiter = Gathered(), anyio.CapacityLimiter(1)
    started, release = threading.Event(), threading.Event()
    seen: list[str] = []

    def slow() -> str:
        started.set()
        release.wait(5)
        return "slow"

    async def ask(scope: anyio.CancelScope) -> None:
        with scope:
            seen.append(await gathered.run(slow, limiter))
            await anyio.lowlevel.checkpoint()
            seen.append("not cancelled")

    async def first() -> None:
        seen.append(await gathered.run(lambda: "first", limiter))

    scope = anyio.CancelScope()
    async with anyio.create_task_group() as group:
        group.start_soon(first)
        group.start_soon(ask, scope)
        await anyio.to_thread.run_sync(started.wait, 5)
        scope.cancel()
        await anyio.sleep(0.01)
        release.set()
    assert sorted(seen) == ["first", "slow"]
    assert scope.cancelled_caught


async def test_reads_started_together_match_reads_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Concurrent database reads return what each returns alone, a failed one failing alone,
    in fewer hops than reads."""
    database = Database(tmp_path / "g.db", pool_size=2)
    await database.open()

    def make(connection: Any) -> None:
        connection.execute("CREATE TABLE t (v INTEGER)")
        connection.executemany("INSERT INTO t VALUES (?)", [(n,) for n in range(20)])

    await database.write(make, store="t")

    def total(below: int) -> Callable[[Any], int]:
        return lambda c: int(c.execute("SELECT sum(v) FROM t WHERE v < ?", (below,)).fetchone()[0])

    alone = [await database.read(total(n), store="t") for n in range(1, 9)]
    hops = counting_hops(monkeypatch)
    together: dict[int, object] = {}

    async def ask(index: int, fn: Callable[[Any], object]) -> None:
        try:
            together[index] = await database.read(fn, store="t")
        except StoreError as error:
            together[index] = error

    async with anyio.create_task_group() as group:
        for index, below in enumerate(range(1, 9)):
            group.start_soon(ask, index, total(below))
        group.start_soon(ask, 99, lambda c: c.execute("SELECT * FROM nowhere").fetchall())
    assert [together[index] for index in range(8)] == alone
    assert isinstance(together[99], StoreError)
    assert len(hops) < 9
    await database.aclose()


async def test_a_call_made_while_the_hop_waits_for_its_thread_joins_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A call made after the first call's passes, while its hop waits for a limiter slot
    (or for its thread), runs in that hop: one hop, each caller its own result."""
    hops = counting_hops(monkeypatch)
    gathered, limiter = Gathered(), anyio.CapacityLimiter(1)
    results: dict[str, tuple[str, int]] = {}

    async def ask(name: str) -> None:
        results[name] = await gathered.run(lambda: (name, threading.get_ident()), limiter)

    async with anyio.create_task_group() as group:
        await limiter.acquire()  # the slot taken: the hop waits for it
        group.start_soon(ask, "first")
        for _ in range(PASSES + 3):  # the first call's passes are over: its hop waits
            await anyio.lowlevel.checkpoint()
        group.start_soon(ask, "late")
        await anyio.lowlevel.checkpoint()
        limiter.release()
    assert {name: value for name, (value, _) in results.items()} == {
        "first": "first",
        "late": "late",
    }
    assert results["first"][1] == results["late"][1]
    assert len(hops) == 1


async def test_a_call_made_once_the_hops_thread_began_hops_on_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Once a hop's thread has begun its calls, a new call is not added to it (it would wait
    for calls it does not need): it makes a hop of its own, and both return."""
    hops = counting_hops(monkeypatch)
    gathered, limiter = Gathered(), anyio.CapacityLimiter(2)
    started, release = threading.Event(), threading.Event()
    results: dict[str, str] = {}

    def slow() -> str:
        started.set()
        release.wait(5)
        return "slow"

    async def ask(name: str, fn: Callable[[], str]) -> None:
        results[name] = await gathered.run(fn, limiter)

    async with anyio.create_task_group() as group:
        group.start_soon(ask, "slow", slow)
        await anyio.to_thread.run_sync(started.wait, 5)
        await ask("after", lambda: "after")  # returns while the slow hop still runs
        assert results == {"after": "after"}
        release.set()
    assert results == {"after": "after", "slow": "slow"}
    assert len(hops) == 3  # the two hops and the test's own wait for ``started``


async def test_a_hop_takes_at_most_its_share_of_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls asked together beyond :data:`MOST_CALLS` make hops of their own (which other
    threads of the pool may run at once), each caller still getting its own result."""
    hops = counting_hops(monkeypatch)
    gathered, limiter = Gathered(), anyio.CapacityLimiter(4)
    results: dict[int, int] = {}

    async def ask(number: int) -> None:
        results[number] = await gathered.run(lambda: number * 10, limiter)

    async with anyio.create_task_group() as group:
        for number in range(2 * MOST_CALLS + 1):
            group.start_soon(ask, number)
    assert results == {n: n * 10 for n in range(2 * MOST_CALLS + 1)}
    assert len(hops) == 3


async def test_the_callers_of_a_hop_wait_on_one_event_and_a_lone_call_on_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each hop makes one event for the callers that joined it (none for a call alone): an
    event costs more CPU than most of a hop's bookkeeping."""
    made: list[object] = []
    event = anyio.Event

    def counted() -> anyio.Event:
        made.append(1)
        return event()

    monkeypatch.setattr(anyio, "Event", counted)
    gathered, limiter = Gathered(), anyio.CapacityLimiter(1)
    assert await gathered.run(lambda: "alone", limiter) == "alone"
    assert made == []
    results: list[int] = []

    async def ask(number: int) -> None:
        results.append(await gathered.run(lambda: number, limiter))

    async with anyio.create_task_group() as group:
        for number in range(4):
            group.start_soon(ask, number)
    assert sorted(results) == [0, 1, 2, 3] and len(made) == 1
