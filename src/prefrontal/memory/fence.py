"""``TenantFence``: erase is a barrier for the work of one user in this process.

Work done for a tenant (an agent and one of its users) off or on the
caller's path — the writes behind a turn, ``end_turn``, an extraction, a
memory write — holds a :class:`Ticket` while it runs. A ticket remembers
the tenant's *epoch*, the number of erasures the tenant has seen, at the
moment the work began (a turn's writes carry the epoch of the turn's
start). :meth:`TenantFence.erasing` is the barrier:

- it raises the tenant's epoch, so work begun before it that has not yet
  started (queued for a slot, or submitted later by a turn begun before)
  never runs: :meth:`Ticket.run` returns ``False`` and counts it cancelled;
- it cancels the cancellable work of the tenant in flight (writes behind
  turns, extractions) and waits for the rest (``end_turn``, memory writes)
  to end, so whatever they wrote is there for the erase to remove;
- work that begins while the erase runs waits until it has ended.

So a write of the tenant begun before an erase never lands after it.

:meth:`TenantFence.stopping` is the same barrier for one subject: forgetting
a turn's message stops that turn's extraction (queued or running, waited
for until it has ended), so no fact drawn from the forgotten text and no
copy of the turn's trace lands after the forget.

The fence is in-process: it knows the work of one :class:`Orchestrator` (and
its :class:`~prefrontal.memory.MemoryAPI`), not that of other processes
over the same database.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio

from prefrontal.stores.tenancy import Tenant

TURN_MEMORY = 100_000
"""Turns whose starting epoch the fence remembers (the oldest are forgotten first)."""


@dataclass
class _State:
    """One tenant's epoch, erase in progress and tickets held."""

    epoch: int = 0
    erasing: anyio.Event | None = None
    tickets: set[Ticket] = field(default_factory=set)
    changed: anyio.Event = field(default_factory=anyio.Event)

    def touch(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()


@dataclass
class Cancelled:
    """What an erase stopped: work cancelled in flight or before it started, by kind."""

    counts: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1


class Ticket:
    """One piece of work of a tenant, begun at an epoch; see :meth:`run`."""

    def __init__(
        self,
        fence: TenantFence,
        tenant: Tenant,
        kind: str,
        epoch: int,
        *,
        cancellable: bool,
        subject: str | None = None,
    ) -> None:
        self.fence, self.tenant, self.kind, self.epoch = fence, tenant, kind, epoch
        self.cancellable, self.subject = cancellable, subject
        self.scope: anyio.CancelScope | None = None
        self.released = False
        self.counted = False
        """Counted as cancelled by an erase."""
        self.stopped = False
        """Stopped by :meth:`TenantFence.stopping`: it never runs, or is cancelled."""

    async def run(self, work: Callable[[], Awaitable[object]]) -> bool:
        """Run ``work`` unless the tenant was erased since this work began (or the work
        was stopped); ``True`` if it ran.

        Waits for an erase in progress. Cancelled by an erase that begins
        while it runs (when cancellable), or stopped, it returns ``False``:
        the cancellation is the fence's own and ends here; any other goes
        on. Releases the ticket.
        """
        try:
            state = await self.fence.settled(self.tenant)
            if state.epoch != self.epoch:
                self.fence.skipped(self)
                return False
            if self.stopped:
                return False
            with anyio.CancelScope() as scope:
                self.scope = scope
                await work()
            return not scope.cancelled_caught
        finally:
            self.release()

    def release(self) -> None:
        """The work is over (run or never to run); idempotent."""
        if not self.released:
            self.released = True
            self.fence.released(self)


class TenantFence:
    """Epochs and in-flight work per tenant; :meth:`erasing` is the barrier."""

    def __init__(self) -> None:
        self._states: dict[Tenant, _State] = {}
        self._turns: OrderedDict[str, int] = OrderedDict()
        self._cancelled: dict[Tenant, Cancelled] = {}

    def state(self, tenant: Tenant) -> _State:
        state = self._states.get(tenant)
        if state is None:
            state = self._states[tenant] = _State()
        return state

    def epoch(self, tenant: Tenant) -> int:
        """How many erasures ``tenant`` has begun in this process."""
        state = self._states.get(tenant)
        return 0 if state is None else state.epoch

    def began_turn(self, turn_id: str, tenant: Tenant) -> int:
        """Remember the epoch turn ``turn_id`` of ``tenant`` began in; return it."""
        epoch = self.epoch(tenant)
        self._turns[turn_id] = epoch
        while len(self._turns) > TURN_MEMORY:
            self._turns.popitem(last=False)
        return epoch

    def turn_epoch(self, turn_id: str, tenant: Tenant) -> int:
        """The epoch turn ``turn_id`` began in (the current one for a turn not remembered)."""
        return self._turns.get(turn_id, self.epoch(tenant))

    def ended_turn(self, turn_id: str) -> None:
        """Forget turn ``turn_id`` (its exchange was recorded)."""
        self._turns.pop(turn_id, None)

    def ticket(
        self,
        tenant: Tenant,
        kind: str,
        *,
        epoch: int | None = None,
        cancellable: bool = True,
        subject: str | None = None,
    ) -> Ticket:
        """A ticket for work of ``tenant`` begun at ``epoch`` (default: now), held from now.

        ``subject`` names what the work is about (a turn id), for :meth:`stopping`.
        """
        state = self.state(tenant)
        began = state.epoch if epoch is None else epoch
        ticket = Ticket(self, tenant, kind, began, cancellable=cancellable, subject=subject)
        state.tickets.add(ticket)
        return ticket

    async def stopping(self, tenant: Tenant, kind: str, subject: str) -> int:
        """Stop ``tenant``'s cancellable work of ``kind`` on ``subject``; how many were stopped.

        Queued work never runs; running work is cancelled. Returns once all
        of it has ended (a shielded step in it, such as a trace update, has
        finished). Work on the subject submitted afterwards is not stopped:
        the caller marks the subject first (a forgotten turn is not
        extracted again).
        """
        state = self.state(tenant)
        stopped = 0
        while mine := [
            t for t in state.tickets if t.kind == kind and t.subject == subject and t.cancellable
        ]:
            for ticket in mine:
                if not ticket.stopped:
                    ticket.stopped = True
                    stopped += 1
                    if ticket.scope is None:
                        ticket.release()  # queued: when its slot comes it skips itself
                    else:
                        ticket.scope.cancel()
            if any(t in state.tickets for t in mine):
                await state.changed.wait()
        return stopped

    @asynccontextmanager
    async def holding(
        self, tenant: Tenant, kind: str, *, epoch: int | None = None
    ) -> AsyncIterator[bool]:
        """Hold a ticket that an erase waits for (never cancels) around the block.

        Yields ``False`` when the tenant was erased since ``epoch``: the
        caller must then write nothing.
        """
        state = await self.settled(tenant)
        began = state.epoch if epoch is None else epoch
        ticket = self.ticket(tenant, kind, epoch=began, cancellable=False)
        try:
            yield state.epoch == began
        finally:
            ticket.release()

    async def settled(self, tenant: Tenant) -> _State:
        """``tenant``'s state once no erase of theirs is in progress."""
        state = self.state(tenant)
        while state.erasing is not None:
            await state.erasing.wait()
        return state

    def skipped(self, ticket: Ticket) -> None:
        """``ticket``'s work will never run: its tenant was erased since it began."""
        cancelled = self._cancelled.get(ticket.tenant)
        if cancelled is not None and not ticket.counted:
            ticket.counted = True
            cancelled.add(ticket.kind)

    def released(self, ticket: Ticket) -> None:
        """``ticket`` holds no more; a tenant never erased and holding nothing is forgotten."""
        state = self.state(ticket.tenant)
        state.tickets.discard(ticket)
        state.touch()
        if not state.tickets and state.epoch == 0 and state.erasing is None:
            del self._states[ticket.tenant]

    @asynccontextmanager
    async def erasing(self, tenant: Tenant) -> AsyncIterator[Cancelled]:
        """The barrier: inside it, no work of ``tenant`` begun before it runs or will run.

        Yields what was cancelled (filled in as work stops; complete once
        the block is entered). Another erase of the tenant in progress is
        waited for first.
        """
        state = await self.settled(tenant)
        state.erasing = anyio.Event()
        state.epoch += 1
        cancelled = self._cancelled[tenant] = Cancelled()
        try:
            while old := [t for t in state.tickets if t.epoch < state.epoch]:
                for ticket in old:
                    self._stop(ticket, cancelled)
                if any(t in state.tickets for t in old):
                    await state.changed.wait()
            yield cancelled
        finally:
            done, state.erasing = state.erasing, None
            self._cancelled.pop(tenant, None)
            done.set()

    @staticmethod
    def _stop(ticket: Ticket, cancelled: Cancelled) -> None:
        """Cancel ``ticket``'s work if it may be: queued, it is dropped; running, cancelled."""
        if not ticket.cancellable or ticket.counted:
            return
        ticket.counted = True
        cancelled.add(ticket.kind)
        if ticket.scope is None:
            ticket.release()  # queued, never started: when its turn comes it skips itself
        else:
            ticket.scope.cancel()
