"""Opening the stores when the orchestrator starts, before the first turn is accepted.

``async with Orchestrator(...)`` (and so every server, which enters its
orchestrator at start-up) calls :func:`open_ahead`: each backend that can
open ahead of its first call does (:meth:`~prefrontal.stores.Stores.open`):
a SQLite file's writer, migrations and read connections, and the mapped
vector files of its memory stores. Without it the first turn of a process
pays for them; with it the first turn costs what a later one does
(``docs/performance.md``, "The first turn of a fresh process").

Opening is an optimisation, never a condition of starting: when a store
cannot be opened (a database that is not reachable yet), the failure is
logged and the orchestrator starts all the same; each store then opens at
its first call, and the servers' readiness check reports the stores as
unavailable (:mod:`prefrontal.serving.readiness`). Cancellation is never
caught.
"""

from __future__ import annotations

import time

import structlog

from prefrontal.errors import StoreError
from prefrontal.stores.set import Stores

_log = structlog.get_logger("prefrontal.orchestrator")


async def open_ahead(stores: Stores) -> float | None:
    """Open ``stores`` ahead of their first call; the seconds it took, ``None`` if it failed."""
    started = time.perf_counter()
    try:
        await stores.open()
    except (StoreError, OSError) as error:
        _log.warning("stores_not_opened_ahead", error=str(error), type=type(error).__name__)
        return None
    return time.perf_counter() - started
