"""The SQLite database's worker-thread hop keeps ``anyio.to_thread.run_sync``'s contract."""

from __future__ import annotations

import contextvars
import os
import threading

import anyio
import anyio.to_thread
import pytest

from prefrontal.stores.sqlite import hop

pytestmark = pytest.mark.anyio
WHO: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")


async def test_a_call_runs_in_another_thread_in_the_callers_context_and_returns() -> None:
    """The call runs off the loop's thread, sees the caller's context variables, returns its
    result; its exception is raised to the caller."""
    WHO.set("maya")
    here = threading.get_ident()

    def where(suffix: str) -> tuple[bool, str]:
        return threading.get_ident() != here, WHO.get() + suffix

    assert await hop.run_sync(where, "!") == (True, "maya!")

    def broken() -> None:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        await hop.run_sync(broken)


async def test_a_caller_cancelled_before_its_call_began_never_runs_it() -> None:
    """A cancelled caller gets its cancellation, and its call does not run."""
    ran: list[int] = []
    with anyio.CancelScope() as scope:
        scope.cancel()
        await hop.run_sync(ran.append, 1)
    assert scope.cancelled_caught and ran == []


async def test_a_call_that_began_ends_before_its_cancelled_caller_goes_on() -> None:
    """Once begun, the call runs to its end; the cancellation reaches the caller after."""
    started, release = threading.Event(), threading.Event()
    ended: list[str] = []

    def slow() -> None:
        started.set()
        release.wait(5)
        ended.append("ended")

    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as group:
            group.start_soon(hop.run_sync, slow)
            await anyio.to_thread.run_sync(started.wait, 5)
            scope.cancel()
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.05)
            assert ended == []
            release.set()
    assert scope.cancelled_caught and ended == ["ended"]


async def test_calls_under_a_limiter_run_at_most_its_tokens_at_once() -> None:
    """Five calls under a limiter of two: never more than two run at once, each returns."""
    limiter = anyio.CapacityLimiter(2)
    lock = threading.Lock()
    running, most = [0], [0]

    def call(number: int) -> int:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        threading.Event().wait(0.02)
        with lock:
            running[0] -= 1
        return number

    results: list[int] = []

    async def ask(number: int) -> None:
        results.append(await hop.run_sync(call, number, limiter=limiter))

    async with anyio.create_task_group() as group:
        for number in range(5):
            group.start_soon(ask, number)
    assert sorted(results) == [0, 1, 2, 3, 4] and 1 <= most[0] <= 2
    assert limiter.borrowed_tokens == 0


def _forked_answer() -> bytes:
    """Fork (from a thread running no loop); the child runs a loop of its own with one hop
    and writes its answer (or its error) to the parent, which returns it."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write, str(anyio.run(hop.run_sync, lambda: 2)).encode())
        except BaseException as error:
            os.write(write, repr(error).encode()[:200])
        finally:
            os._exit(0)
    os.close(write)
    try:
        return os.read(read, 256)
    finally:
        os.close(read)
        os.waitpid(pid, 0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
async def test_a_forked_child_hops_on_threads_of_its_own() -> None:
    """A child forked after hops were made (their threads idle in the parent) still hops:
    the parent's threads do not exist in it."""
    assert await hop.run_sync(lambda: 1) == 1
    assert await anyio.to_thread.run_sync(_forked_answer) == b"2"
