"""Which backends never wait: the reference in-memory stores run every call to its end.

A call to one of them never suspends (dictionaries, no I/O, no thread), so
running several at once gains nothing and costs a task each. Only the
reference classes themselves count: a subclass or a wrapper (a proxy that
delays, retries or records) may wait, even one that forwards every
attribute to a reference store. A memory store with an embedder may wait
too: embedding a query is the embedder's call, and it may be a model in a
thread or a remote service.
"""

from __future__ import annotations

from collections.abc import Iterable

from prefrontal.stores.memory.consciousness import InMemoryConsciousnessStore
from prefrontal.stores.memory.conversation import InMemoryConversationStore
from prefrontal.stores.memory.frontal_cortex import InMemoryFrontalCortexStore
from prefrontal.stores.memory.memory import InMemoryMemoryStore
from prefrontal.stores.memory.scratch_page import InMemoryScratchPageStore
from prefrontal.stores.memory.session_items import InMemorySessionItemStore
from prefrontal.stores.memory.traces import InMemoryTraceStore
from prefrontal.stores.memory.working_memory import InMemoryWorkingMemoryStore

__all__ = ["REFERENCE_BACKENDS", "never_wait", "reference"]

REFERENCE_BACKENDS: tuple[type, ...] = (
    InMemoryConsciousnessStore,
    InMemoryConversationStore,
    InMemoryFrontalCortexStore,
    InMemoryMemoryStore,
    InMemoryScratchPageStore,
    InMemorySessionItemStore,
    InMemoryTraceStore,
    InMemoryWorkingMemoryStore,
)


def reference(backend: object) -> bool:
    """Whether ``backend`` is one of the reference in-memory stores, of that exact class."""
    return type(backend) in REFERENCE_BACKENDS


def never_wait(backends: Iterable[object]) -> bool:
    """Whether no call to any of ``backends`` can suspend: all reference stores, none embedding."""
    return all(
        reference(backend) and getattr(backend, "embedder", None) is None for backend in backends
    )
