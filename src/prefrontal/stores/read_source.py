"""Where a store's last read in this task was served from: the primary, or a replica and how stale.

A backend with read replicas (:mod:`prefrontal.stores.postgres.replicas`)
records each search it serves in a context variable of the task that asked;
a phase copies it into its trace detail (:func:`read_detail`), so a trace
shows which server answered and the replica's staleness bound at the time.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class ReadSource:
    """One read's server: ``primary`` or ``replica <n>``; the replica's staleness (ms) when
    it answered (0 when caught up with what it received), or why the primary did."""

    server: str
    staleness_ms: float = 0.0
    reason: str = ""


LAST_READ: ContextVar[ReadSource | None] = ContextVar("prefrontal_last_read", default=None)
"""The server of the last read this task made through a backend with replicas."""


def read_detail() -> dict[str, object]:
    """The trace detail of the task's last read (empty when no backend has replicas)."""
    found = LAST_READ.get()
    if found is None:
        return {}
    detail: dict[str, object] = {"read_from": found.server}
    if found.server != "primary":
        detail["staleness_ms"] = round(found.staleness_ms, 1)
    if found.reason:
        detail["read_reason"] = found.reason
    return detail
