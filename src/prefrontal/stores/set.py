"""``Stores``: the set of store backends one orchestrator reads and writes."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prefrontal.stores.consciousness import ConsciousnessStore
from prefrontal.stores.conversation import ConversationStore
from prefrontal.stores.frontal_cortex import FrontalCortexStore
from prefrontal.stores.long_term import MemoryStore
from prefrontal.stores.scratch_page import ScratchPageStore
from prefrontal.stores.session_items import SessionItemStore
from prefrontal.stores.traces import TraceStore
from prefrontal.stores.working_memory import WorkingMemoryStore

if TYPE_CHECKING:
    from prefrontal.retrieval.embedder import Embedder

STORE_KINDS = (
    "consciousness",
    "frontal_cortex",
    "conversation",
    "episodic",
    "semantic",
    "scratch_page",
    "working_memory",
    "traces",
    "session_items",
)


@dataclass(frozen=True, slots=True)
class Stores:
    """One backend per store kind.

    :meth:`in_memory` builds the reference set; each durable backend package
    builds its own (``prefrontal.stores.sqlite.open_stores(path)``,
    ``prefrontal.stores.postgres.open_stores(dsn)``), so this class knows no
    backend but the reference. Backends may be mixed freely:
    ``stores.replace(episodic=my_store)`` swaps one and keeps the rest.
    """

    consciousness: ConsciousnessStore
    frontal_cortex: FrontalCortexStore
    conversation: ConversationStore
    episodic: MemoryStore
    semantic: MemoryStore
    scratch_page: ScratchPageStore
    working_memory: WorkingMemoryStore
    traces: TraceStore
    session_items: SessionItemStore
    """A framework session's items as given (the Agents SDK's): no turn reads them."""

    @classmethod
    def in_memory(cls, *, embedder: Embedder | None = None) -> Stores:
        """Every store in process memory: fast, isolated, gone at exit. For tests.

        With an ``embedder``, episodic and semantic search fuse vector
        similarity with BM25.
        """
        from prefrontal.stores import memory as m

        return cls(
            consciousness=m.InMemoryConsciousnessStore(),
            frontal_cortex=m.InMemoryFrontalCortexStore(),
            conversation=m.InMemoryConversationStore(),
            episodic=m.InMemoryMemoryStore("episodic", embedder=embedder),
            semantic=m.InMemoryMemoryStore("semantic", embedder=embedder),
            scratch_page=m.InMemoryScratchPageStore(),
            working_memory=m.InMemoryWorkingMemoryStore(),
            traces=m.InMemoryTraceStore(),
            session_items=m.InMemorySessionItemStore(),
        )

    def replace(self, **backends: Any) -> Stores:
        """A copy with the named backends swapped (``ValueError`` for an unknown kind)."""
        unknown = set(backends) - set(STORE_KINDS)
        if unknown:
            raise ValueError(f"unknown store kinds {sorted(unknown)}; known: {list(STORE_KINDS)}")
        return dataclasses.replace(self, **backends)

    def items(self) -> list[tuple[str, object]]:
        """``(kind, backend)`` pairs in a fixed order."""
        return [(kind, getattr(self, kind)) for kind in STORE_KINDS]

    def never_wait(self) -> bool:
        """Whether no read or write of a turn can suspend (:mod:`prefrontal.stores.memory.waiting`).

        True for the reference set :meth:`in_memory` builds without an
        embedder; a turn over it has nothing to overlap, so the orchestrator
        runs its phases one after another even in ``graph`` mode.
        """
        from prefrontal.stores.memory.waiting import never_wait

        return never_wait(backend for _, backend in self.items())

    async def open(self) -> None:
        """Open every backend that can be opened ahead of its first call (an ``open()``
        method), each once: its connections, files and mapped vectors, so that the first
        turn does not pay for them. Optional: a backend also opens at its first call.
        ``async with Orchestrator(...)`` calls it (see :mod:`prefrontal.orchestrator.opening`)."""
        for opener in self._each_once("open"):
            await opener()

    async def aclose(self) -> None:
        """Close every backend that holds resources (each one once)."""
        for close in self._each_once("aclose"):
            await close()

    def _each_once(self, method: str) -> list[Callable[[], Awaitable[object]]]:
        """Each backend's ``method``, where it has one, once per backend (one backend may
        serve several kinds of store)."""
        found: list[Callable[[], Awaitable[object]]] = []
        seen: set[int] = set()
        for _, backend in self.items():
            bound = getattr(backend, method, None)
            if bound is not None and id(backend) not in seen:
                seen.add(id(backend))
                found.append(bound)
        return found
