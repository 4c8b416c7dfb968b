"""The right to erasure: every record of one user removed from every store kind.

:func:`erase` asks each store kind that holds a user's records to remove
those the ``(agent, user)`` owns, private or shared by that user, and
reports how many each removed. The consciousness store is not asked: a
profile belongs to the agent, not to one of its users.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from prefrontal.forgetting import forget_everything
from prefrontal.memory.buffers import drop_dangling_copies
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Tenant

ERASED_KINDS = (
    "frontal_cortex",
    "conversation",
    "episodic",
    "semantic",
    "scratch_page",
    "working_memory",
    "session_items",
    "traces",
)
"""The store kinds that hold records owned by one user, in the order they are erased."""


class ErasureReport(BaseModel):
    """What :func:`erase` removed: the number of records of each store kind."""

    model_config = ConfigDict(frozen=True)

    agent_id: str
    user_id: str
    removed: dict[str, int] = Field(default_factory=dict)
    """Records removed per store kind (a conversation's summary counts as one record)."""
    cancelled: dict[str, int] = Field(default_factory=dict)
    """The user's work in flight that the erase cancelled or dropped before it began, by kind
    (``turn_writes``, ``extraction``); work it waited for instead (``end_turn``, memory
    writes) ended before anything was removed, so what it wrote is counted in ``removed``."""
    copies_dropped: int = 0
    """Retrieved copies of the user's shared memories taken out of the other users'
    working-memory sessions (:func:`prefrontal.memory.buffers.drop_dangling_copies`)."""

    @property
    def total(self) -> int:
        """Records removed from every store together."""
        return sum(self.removed.values())


async def scrub(stores: Stores, kinds: tuple[str, ...]) -> None:
    """Ask the backends of ``kinds`` that can to leave no copy of what was removed on disk.

    A backend with a ``scrub()`` method (SQLite's memory stores rewrite their
    full-text indexes; its trace store, erased last, truncates the log) is
    called once, in the order of ``kinds``.
    """
    seen: set[int] = set()
    for kind in kinds:
        backend = getattr(stores, kind)
        method = getattr(backend, "scrub", None)
        if method is not None and id(backend) not in seen:
            seen.add(id(backend))
            await method()


async def forget_statistics(stores: Stores, kinds: tuple[str, ...]) -> None:
    """Have each database of ``kinds`` that keeps planner statistics count again without the
    rows removed (PostgreSQL analyses its tables:
    :mod:`prefrontal.stores.postgres.planner_statistics`); once per database."""
    seen: set[int] = set()
    for kind in kinds:
        database = getattr(getattr(stores, kind), "database", None)
        method = getattr(database, "forget_statistics", None)
        if method is not None and id(database) not in seen:
            seen.add(id(database))
            await method()


def _databases(stores: Stores, kinds: tuple[str, ...], method: str) -> list[Any]:
    """The distinct databases behind ``kinds`` that offer ``method``, in the order of ``kinds``."""
    found: dict[int, Any] = {}
    for kind in kinds:
        database = getattr(getattr(stores, kind), "database", None)
        if getattr(database, method, None) is not None:
            found.setdefault(id(database), database)
    return list(found.values())


async def record_erasure(stores: Stores, tenant: Tenant, erased_at: datetime) -> None:
    """Record ``tenant`` as erased in each database that keeps erasure records: from then
    on every insert of theirs there is refused, whichever process makes it
    (:mod:`prefrontal.stores.erasures`)."""
    now_us = int(erased_at.timestamp() * 1_000_000)
    for database in _databases(stores, ERASED_KINDS, "record_erasure"):
        await database.record_erasure(tenant, now_us)


async def readmit(stores: Stores, tenant: Tenant) -> bool:
    """Remove ``tenant``'s erasure records, so its id may be written again; ``True`` if any
    database held one."""
    found = False
    for database in _databases(stores, ERASED_KINDS, "readmit"):
        found = await database.readmit(tenant) or found
    return found


async def erase(
    stores: Stores, tenant: Tenant, *, erased_at: datetime | None = None
) -> ErasureReport:
    """Record the erasure, remove every record ``tenant`` owns from every store kind that
    holds any, then the copies of its shared memories in other users' sessions, then scrub.

    The record comes first (``erased_at``, default now): a write of the user
    by any process over the same database either commits before it, and is
    removed here, or is refused.

    The copies go before the scrub: their sessions are rewritten then, and
    the scrub's checkpoint carries those pages into the database file too
    (after it, an old image of such a page would stay in the file until a
    later checkpoint).

    Idempotent: after a failure part-way (a store down), calling it again
    removes what is left, and a second call on an erased user removes 0.
    Records of other users, the agent's other users' shared items included,
    are never touched.
    """
    await record_erasure(stores, tenant, erased_at or datetime.now(UTC))
    removed: dict[str, int] = {}
    for kind in ERASED_KINDS:
        store = getattr(stores, kind)
        removed[kind] = await store.erase(tenant)
    copies = await drop_dangling_copies(stores, tenant)
    await scrub(stores, ERASED_KINDS)
    await forget_statistics(stores, ERASED_KINDS)
    forget_everything()
    return ErasureReport(
        agent_id=tenant.agent_id, user_id=tenant.user_id, removed=removed, copies_dropped=copies
    )
