"""The store conformance suite: every contract of every store Protocol, as tests.

A backend author subclasses the suite of each store kind they implement and
overrides one fixture, ``store``, returning a fresh, empty store::

    from prefrontal.testing.conformance import MemoryStoreSuite

    class TestMyEpisodicStore(MemoryStoreSuite):
        @pytest.fixture
        async def store(self, tmp_path):
            store = MyEpisodicStore(tmp_path / "db")
            yield store
            await store.aclose()

Each suite includes the ownership checks of its kind
(:mod:`prefrontal.testing.conformance.ownership`): ids unique per agent and
user, which record a shared id gives, ``delete`` and ``erase``.

The suites run on anyio's pytest plugin (asyncio); they need ``pytest`` and
``anyio``, nothing else. Every backend shipped with prefrontal passes them.
"""

from prefrontal.testing.conformance.memory import MemoryStoreSuite
from prefrontal.testing.conformance.records import (
    ConsciousnessStoreSuite,
    ConversationStoreSuite,
    FrontalCortexStoreSuite,
    ScratchPageStoreSuite,
)
from prefrontal.testing.conformance.sessions import TraceStoreSuite, WorkingMemoryStoreSuite
from prefrontal.testing.conformance.versioned import (
    VersionedFrontalSuite,
    VersionedProfileSuite,
    VersionedScratchSuite,
)

__all__ = [
    "ConsciousnessStoreSuite",
    "ConversationStoreSuite",
    "FrontalCortexStoreSuite",
    "MemoryStoreSuite",
    "ScratchPageStoreSuite",
    "TraceStoreSuite",
    "VersionedFrontalSuite",
    "VersionedProfileSuite",
    "VersionedScratchSuite",
    "WorkingMemoryStoreSuite",
]
