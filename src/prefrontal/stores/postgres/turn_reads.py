"""A turn's state reads in one round trip: read together when the turn starts, served once each.

A turn reads the same state every time: the session's buffer, the agent's
profile, its frontal-cortex items, the recent conversation and its summary,
the scratch page, the parent turn's trace. Each is a :class:`StateRead` (a
statement the store runs as it always has) sent through
:meth:`TurnReads.rows`. When a turn starts, :meth:`TurnReads.prefetch`
sends the reads the tenant's previous turn made, as one statement (each
read an ``ARRAY(SELECT ROW(...) ...)`` column, its parameters renumbered,
so tenancy is each store's own SQL), with the previous turn's session,
parent turn and clock replaced by this turn's. The answers are kept in the
turn's context (a context variable: the turn's phases and the reads they
start see them, nothing else does), and each read whose statement and
parameters are exactly one prefetched is served from it, once.

An answer is served only while nothing was written through the database
since the prefetch began (:meth:`TurnReads.wrote`: any write, whoever's),
and only until the turn's deadline: a read after a write reads the
database. Served or not, each read is what it was; the prefetch only moves
it to the turn's start, where the turn's other reads are.

A read the turn makes twice with one answer (a memory store's lexical search
probed with a small limit, then searched with a larger one:
:meth:`TurnReads.reused`) is sent once: its answer is kept in the turn's
context and given to the next read of it on the same terms (then forgotten: a
search is probed once, then run once), while nothing was written through the
database since the first read began and until the turn's deadline.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import anyio

from prefrontal.stores.postgres.coalesced import renumbered

T = TypeVar("T")

KEPT_TENANTS = 4096
"""Tenants whose last turn's reads are remembered (the least recent forgotten first)."""


@dataclass(frozen=True, slots=True)
class StateRead:
    """A read of a turn's state: ``SELECT {columns} {source}`` (``source`` from ``FROM`` on,
    its parameters ``$1``...). The rows come back as tuples of ``columns``."""

    columns: str
    source: str

    @property
    def statement(self) -> str:
        return f"SELECT {self.columns} {self.source}"


Asked = tuple[StateRead, tuple[Any, ...]]
"""A read with its parameters."""


@dataclass(frozen=True, slots=True)
class TurnKey:
    """Who a turn is for and what changes from one turn to the next: its session, its parent
    turn and its clock."""

    agent_id: str
    user_id: str
    session_id: str
    parent_turn_id: str | None
    now: datetime


@dataclass
class Asking:
    """What one turn asked: its key and its state reads, in order (what the tenant's next
    turn prefetches)."""

    key: TurnKey
    asked: list[Asked] = field(default_factory=list)


@dataclass
class Prefetched:
    """One turn's prefetched answers (served once each), held by the turn's context only."""

    owner: TurnReads
    record: Asking
    generation: int
    until: float
    answers: dict[Asked, list[tuple[Any, ...]]] = field(default_factory=dict)
    kept: dict[Hashable, tuple[int, Any]] = field(default_factory=dict)
    """Answers read in this turn and not given again yet, by what was read, with the write
    counter when each read began (:meth:`TurnReads.reused`)."""

    def good(self, generation: int) -> bool:
        """Whether an answer read from ``generation`` on may be served: no write began since
        and the turn's deadline has not passed."""
        return self.owner.generation == generation and anyio.current_time() <= self.until

    def take(self, asked: Asked) -> list[tuple[Any, ...]] | None:
        """The prefetched answer to ``asked`` (then forgotten), if it is still good."""
        self.record.asked.append(asked)
        found = self.answers.pop(asked, None)
        if found is None:
            return None
        if not self.good(self.generation):
            self.answers.clear()
            return None
        return found


CURRENT: ContextVar[Prefetched | None] = ContextVar("prefrontal_postgres_turn", default=None)
"""The prefetch of the turn this context runs."""


class TurnReads:
    """One database's prefetches: the reads each tenant's last turn made, and a write counter."""

    def __init__(self) -> None:
        self.generation = 0
        """Writes begun through the database (answers fetched before one are not served)."""
        self._last: OrderedDict[tuple[str, str], Asking] = OrderedDict()
        """What each tenant's last turn asked (no answer: those live in the turn's context)."""

    def wrote(self) -> None:
        """A write begins: no answer prefetched before it is served."""
        self.generation += 1

    async def prefetch(
        self,
        key: TurnKey,
        seconds: float,
        fetch: Callable[[str, tuple[Any, ...]], Awaitable[Any]],
    ) -> int:
        """Start ``key``'s turn in this context: read what the tenant's last turn read, as this
        turn would ask it, in one statement (``fetch(statement, args)``, one row); the reads
        sent."""
        tenant = (key.agent_id, key.user_id)
        last = self._last.pop(tenant, None)
        record = Asking(key)
        turn = Prefetched(self, record, self.generation, anyio.current_time() + seconds)
        self._last[tenant] = record
        while len(self._last) > KEPT_TENANTS:
            self._last.popitem(last=False)
        CURRENT.set(turn)
        if last is None:
            return 0
        wanted = list(dict.fromkeys(_moved(asked, last.key, key) for asked in last.asked))
        reads = [asked for asked in wanted if asked is not None]
        if not reads:
            return 0
        statement, args = together(reads)
        row = await fetch(statement, args)
        if row is None:
            return 0
        for at, asked in enumerate(reads):
            turn.answers[asked] = [tuple(found) for found in row[at]]
        return len(reads)

    async def rows(
        self,
        read: StateRead,
        args: tuple[Any, ...],
        fetch: Callable[[], Awaitable[Sequence[Any]]],
    ) -> Sequence[Any]:
        """The rows of ``read``: prefetched for this turn, else ``fetch()``."""
        turn = CURRENT.get()
        if turn is None or turn.owner is not self:
            return await fetch()
        found = turn.take((read, args))
        return found if found is not None else await fetch()

    async def reused(
        self, asked: Hashable, fetch: Callable[[], Awaitable[T]], whole: Callable[[T], bool]
    ) -> T:
        """The answer to the read ``asked`` (a key naming the statement and everything its
        answer depends on): the one this turn's earlier read of ``asked`` gave, while it is
        good (:meth:`Prefetched.good`), else ``fetch()``, kept for the turn's next read of
        ``asked`` when ``whole(answer)``. An answer kept is given once, then forgotten (a read
        of ``asked`` after that fetches again). Outside a turn begun here, ``fetch()``, kept
        for no one."""
        turn = CURRENT.get()
        if turn is None or turn.owner is not self:
            return await fetch()
        found = turn.kept.pop(asked, None)
        if found is not None and turn.good(found[0]):
            answer: T = found[1]
            return answer
        generation = self.generation
        answer = await fetch()
        if whole(answer):
            turn.kept[asked] = (generation, answer)
        return answer


def together(reads: Sequence[Asked]) -> tuple[str, tuple[Any, ...]]:
    """One statement answering every read of ``reads``: a column each, the array of its rows."""
    columns: list[str] = []
    args: list[Any] = []
    for read, values in reads:
        source = renumbered(read.source, len(args))
        columns.append(f"ARRAY(SELECT ROW({read.columns}) {source})")
        args += values
    return "SELECT " + ", ".join(columns), tuple(args)


def _moved(asked: Asked, before: TurnKey, now: TurnKey) -> Asked | None:
    """``asked`` as the turn ``now`` would ask it, the turn ``before`` having asked it: its
    session, parent turn and clock replaced; ``None`` when this turn has no parent turn for it."""
    read, args = asked
    swaps: dict[Any, Any] = {before.now: now.now, before.session_id: now.session_id}
    if before.parent_turn_id is not None:
        if now.parent_turn_id is None and before.parent_turn_id in args:
            return None
        swaps[before.parent_turn_id] = now.parent_turn_id
    return read, tuple(swaps.get(value, value) if _swappable(value) else value for value in args)


def _swappable(value: Any) -> bool:
    return isinstance(value, str | datetime)
