"""The versioned-save conformance suite on every backend: in memory, SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from prefrontal.stores import ConsciousnessStore, FrontalCortexStore, ScratchPageStore, Stores
from prefrontal.testing.conformance.versioned import (
    VersionedFrontalSuite,
    VersionedProfileSuite,
    VersionedScratchSuite,
)


class TestVersionedProfiles(VersionedProfileSuite):
    @pytest.fixture
    def store(self, stores: Stores) -> ConsciousnessStore:
        return stores.consciousness


class TestVersionedFrontal(VersionedFrontalSuite):
    @pytest.fixture
    def store(self, stores: Stores) -> FrontalCortexStore:
        return stores.frontal_cortex


class TestVersionedScratch(VersionedScratchSuite):
    @pytest.fixture
    def store(self, stores: Stores) -> ScratchPageStore:
        return stores.scratch_page
