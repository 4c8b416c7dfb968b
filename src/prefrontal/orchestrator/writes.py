"""Writes behind the turn: what a turn stores once its context is ready.

A turn's context does not depend on its own writes: the trace, the session's
refreshed buffer and the recall counts of the memories it showed
(:func:`~prefrontal.phases.finalize.turn_writes`). They start once the
bundle is ready and run concurrently, so they add nothing to the turn's
latency and can never mark it degraded: a turn is ``degraded`` only when its
context is. Where every store they write is a reference in-memory one
(:func:`in_process`), none of them can wait, and they run one after another
in one task instead, as running them at once would gain nothing.

Durability, as the caller sees it:

- **Entered orchestrator** (``async with Orchestrator(...)``): the writes run
  in the orchestrator's own task group (structured concurrency, a
  :class:`~prefrontal.exchange.background.BackgroundRunner`) after
  ``start_turn`` returned. ``wait_background()`` waits for them, and leaving
  the orchestrator drains them before the stores close. At most
  ``config.writes.max_pending`` turns' writes run or wait at once;
  ``start_turn`` waits for a slot beyond that (nothing is dropped).
- **Not entered**: the same writes run before ``start_turn`` returns, still
  outside the phases' statuses, within the turn's time left before its
  deadline (at least ``INLINE_FLOOR_S``): a write cut there is logged and
  counted like any failed write. Enter the orchestrator to have writes that
  are never cut short of ``config.writes.timeout_s``.
- **Read your writes, in one process**: ``end_turn`` of a turn waits for
  that turn's writes (so it finds the trace, and never races it); a turn of
  the same session, or a child turn, waits for the earlier turn's writes
  before it loads, within half of its own time; the HTTP and MCP servers
  answer ``start_turn`` once the turn's writes have ended, so another
  process finds them.
- **One transaction per turn** where the stores allow it: when the stores
  written behind a turn share one database that can batch writes (SQLite's
  ``Database.batch``), a turn's writes are savepoints of one transaction,
  committed without a sync of its own (``batch(synced=False)``), in the
  worker thread of the last of them to succeed (the batch is told how many
  there are), not in a worker-thread hop of its own: the next
  synced commit, the exchange that ends the turn, syncs both, so a turn
  costs one sync. They survive a killed process once committed; a power cut
  before that next sync may lose them (the file stays sound, and a later
  write is never kept without them). A write that fails is rolled back
  alone and counted as failed; the others are counted as written only once
  the transaction has committed; when it does not commit (the time limit,
  a cancellation, a failed commit), every one of them is counted as failed
  and logged. So what is counted and logged as written is what is on disk.
- **Never lost silently**: each write is retried on transient store errors
  (``config.store_attempts``); a buffer save that loses an optimistic race
  reloads the newer state and replays the turn's changes on it (merged, up
  to ``config.writes.save_attempts`` times); behind the turn a turn's writes
  run shielded from cancellation within ``config.writes.timeout_s`` (run in
  ``start_turn``, a caller's cancellation cancels them). A write that fails
  is logged (``turn_write_failed``, with the turn, the write and the error)
  and counted in :class:`WriteStats`; one an erase of its user stopped is
  counted alike but logged at info (``turn_write_stopped_by_erase``): it was
  asked for. A process that dies loses the writes
  still in flight, as it would lose a turn a moment from its end.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import anyio
import structlog

from prefrontal.config import WritesConfig
from prefrontal.errors import ErasedTenantError, TransientStoreError
from prefrontal.exchange.background import BackgroundRunner
from prefrontal.memory.fence import Ticket
from prefrontal.phases.finalize import TurnWrite
from prefrontal.stores.durable import Batch, Committed, ExpectsWrites
from prefrontal.stores.memory.waiting import reference
from prefrontal.stores.working_memory import SessionKey

ERASED = "the user was erased"
"""Why a write an erase of its user stopped did not land (expected: logged at info)."""

_log = structlog.get_logger("prefrontal.writes")
RETRY_BACKOFF_S = 0.01
INLINE_FLOOR_S = 0.1
"""Writes run in ``start_turn`` (orchestrator not entered) get at least this long."""


@dataclass
class WriteStats:
    """What the writes behind turns have done since the orchestrator was built."""

    turns: int = 0
    """Turns whose writes were submitted."""
    written: int = 0
    """Writes that succeeded."""
    failed: int = 0
    """Writes that failed after their retries (each one logged as ``turn_write_failed``)."""
    merged: int = 0
    """Buffer saves that lost a race and merged the turn's changes into the newer state."""
    pending: int = 0
    """Turns whose writes are running or waiting now."""


class _Pending:
    """Counts of writes in flight by key (a turn id, a session), with an event per key."""

    def __init__(self) -> None:
        self._counts: dict[Hashable, int] = {}
        self._ended: dict[Hashable, anyio.Event] = {}

    def add(self, key: Hashable) -> None:
        if key not in self._counts:
            self._ended[key] = anyio.Event()
        self._counts[key] = self._counts.get(key, 0) + 1

    def remove(self, key: Hashable) -> None:
        left = self._counts[key] - 1
        if left:
            self._counts[key] = left
            return
        del self._counts[key]
        self._ended.pop(key).set()

    def __contains__(self, key: Hashable) -> bool:
        return key in self._counts

    async def wait(self, key: Hashable) -> None:
        ended = self._ended.get(key)
        if ended is not None:
            await ended.wait()


class _OwnTransactions:
    """Writes not batched: each is its own transaction, committed once it is done."""

    committed: bool = True


_OWN_TRANSACTIONS = _OwnTransactions()


def in_process(backends: Iterable[object]) -> bool:
    """Whether every backend in ``backends`` is a reference in-memory one (of that exact class).

    Writes to such stores never wait for anything, so running them at once
    would gain nothing and cost a task each. A subclass or a wrapper may
    wait, so it does not count (:mod:`prefrontal.stores.memory.waiting`).
    """
    return all(reference(backend) for backend in backends)


class TurnWrites:
    """Runs each turn's writes behind it, and lets later calls wait for the ones they read."""

    def __init__(
        self,
        config: WritesConfig,
        *,
        attempts: int,
        batch: Batch | None = None,
        in_process: bool = False,
    ) -> None:
        self.config = config
        self.batch = batch
        self.in_process = in_process
        """Whether no write can wait (see :func:`in_process`): then they run one after another."""
        self.stats = WriteStats()
        self.runner = BackgroundRunner(config.max_pending)
        self._attempts = attempts
        self._pending = _Pending()

    async def submit(
        self,
        turn_id: str,
        session: SessionKey,
        writes: Sequence[TurnWrite],
        *,
        inline_limit_s: float,
        ticket: Ticket | None = None,
    ) -> None:
        """Run ``writes`` of ``turn_id`` behind it; here and now when the runner is not entered.

        Run here, they are bounded by ``inline_limit_s`` (the turn's time left)
        rather than ``config.timeout_s``. With a ``ticket`` (the erase fence,
        :mod:`prefrontal.memory.fence`), they run only if the user was not
        erased since the turn began, and an erase cancels them.
        """
        keys = (turn_id, session)
        for key in keys:
            self._pending.add(key)
        self.stats.turns += 1
        self.stats.pending += 1
        running = self.runner.running
        limit_s = self.config.timeout_s if running else min(inline_limit_s, self.config.timeout_s)

        async def job() -> None:
            try:
                await self._run(turn_id, writes, limit_s, running, ticket)
            finally:
                self._ended(keys)

        if not running:
            await job()
            return
        try:
            await self.runner.submit(job)
        except BaseException:  # cancelled while waiting for a slot: the job never started
            self._ended(keys)
            if ticket is not None:
                ticket.release()
            raise

    def _ended(self, keys: Sequence[Hashable]) -> None:
        """A turn's writes are over (run or never started): no longer pending."""
        self.stats.pending -= 1
        for key in keys:
            self._pending.remove(key)

    def pending(self, key: str | SessionKey) -> bool:
        """Whether writes of this turn id, or of this session, are running or waiting."""
        return key in self._pending

    async def turn_written(self, turn_id: str) -> None:
        """Return once the writes of turn ``turn_id`` have ended (at once when none is pending)."""
        await self._pending.wait(turn_id)

    async def session_written(self, key: SessionKey) -> None:
        """Return once the writes of the session's earlier turns have ended."""
        await self._pending.wait(key)

    async def wait(self) -> None:
        """Return once no turn's writes are running or waiting."""
        await self.runner.wait()

    async def _run(
        self,
        turn_id: str,
        writes: Sequence[TurnWrite],
        limit_s: float,
        shield: bool,
        ticket: Ticket | None,
    ) -> None:
        """``writes`` within one limit of ``limit_s``; each counted written or failed once.

        In one transaction when there is a batch: then counted written only
        once it has committed. A cancellation from the caller is counted
        against the writes it stopped, then goes on; one by an erase (through
        ``ticket``, inside the shield) is counted against them and ends here.
        """
        done: list[tuple[TurnWrite, int]] = []
        failed: list[TurnWrite] = []
        opened: Committed = _OWN_TRANSACTIONS

        async def together() -> None:
            nonlocal opened
            if self.batch is None:
                await self._together(turn_id, writes, done, failed)
            else:
                async with self.batch() as opened:
                    if isinstance(opened, ExpectsWrites):  # it commits with the last write
                        opened.expect_writes(len(writes))
                    await self._together(turn_id, writes, done, failed)

        try:
            with anyio.fail_after(limit_s, shield=shield):
                if ticket is None:
                    await together()
                elif not await ticket.run(together):
                    self._settle(turn_id, writes, done, failed, opened, ERASED)
                    return
        except anyio.get_cancelled_exc_class():
            self._settle(turn_id, writes, done, failed, opened, "cancelled by the caller")
            raise
        except Exception as error:
            reason = f"{type(error).__name__}: {error}".rstrip(": ")
            self._settle(turn_id, writes, done, failed, opened, reason)
            return
        self._settle(turn_id, writes, done, failed, opened, "not committed")

    async def _together(
        self,
        turn_id: str,
        writes: Sequence[TurnWrite],
        done: list[tuple[TurnWrite, int]],
        failed: list[TurnWrite],
    ) -> None:
        """Run ``writes``: one after another in this task where none can wait, else at once.

        At once, the first runs in this task and each other in a task of its own.
        """
        if self.in_process or len(writes) < 2:
            for write in writes:
                await self._attempt(turn_id, write, done, failed)
            return
        first, *others = writes
        async with anyio.create_task_group() as group:
            for write in others:
                group.start_soon(self._attempt, turn_id, write, done, failed)
            await self._attempt(turn_id, first, done, failed)

    async def _attempt(
        self,
        turn_id: str,
        write: TurnWrite,
        done: list[tuple[TurnWrite, int]],
        failed: list[TurnWrite],
    ) -> None:
        try:
            merged = await self._retried(write)
        except ErasedTenantError:  # the database's erasure record refused it: asked for
            failed.append(write)
            self._failed(turn_id, write, ERASED)
            return
        except Exception as error:
            failed.append(write)
            self._failed(turn_id, write, f"{type(error).__name__}: {error}".rstrip(": "))
            return
        done.append((write, merged))

    def _settle(
        self,
        turn_id: str,
        writes: Sequence[TurnWrite],
        done: list[tuple[TurnWrite, int]],
        failed: list[TurnWrite],
        opened: Committed,
        reason: str,
    ) -> None:
        """Count ``writes``: those done are written if their transaction committed, else failed.

        Each write is counted once: one that failed on its own was counted
        then, and one that never ended fails with ``reason``.
        """
        written = done if opened.committed else []
        self.stats.written += len(written)
        self.stats.merged += sum(merged for _, merged in written)
        for write in writes:
            counted = any(write is gone for gone in failed) or any(write is w for w, _ in written)
            if not counted:
                self._failed(turn_id, write, reason)

    def _failed(self, turn_id: str, write: TurnWrite, error: str) -> None:
        self.stats.failed += 1
        if error == ERASED:  # asked for: the erase stopped it, nothing went wrong
            _log.info("turn_write_stopped_by_erase", turn_id=turn_id, write=write.kind)
            return
        _log.error("turn_write_failed", turn_id=turn_id, write=write.kind, error=error[:500])

    async def _retried(self, write: TurnWrite) -> int:
        for attempt in range(1, self._attempts + 1):
            try:
                return await write.call()
            except TransientStoreError:
                if attempt == self._attempts:
                    raise
            await anyio.sleep(RETRY_BACKOFF_S * 2 ** (attempt - 1))
        raise AssertionError("unreachable")  # pragma: no cover
