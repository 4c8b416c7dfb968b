"""Conformance of the versioned saves (:mod:`prefrontal.stores.versioned`).

Every backend shipped with prefrontal implements them on its consciousness,
frontal-cortex and scratch-page stores: a create conflicts with an existing
record, a save over a stale version conflicts and writes nothing, two
concurrent savers of one version see exactly one win.
"""

from __future__ import annotations

import anyio
import pytest

from prefrontal.errors import ConflictError
from prefrontal.stores.consciousness import ConsciousnessStore
from prefrontal.stores.frontal_cortex import (
    FrontalCortexStore,
    FrontalItem,
    FrontalKind,
    FrontalQuery,
    FrontalStatus,
)
from prefrontal.stores.scratch_page import Observation, ScratchKind, ScratchPageStore
from prefrontal.stores.versioned import VersionedFrontal, VersionedProfiles, VersionedScratch
from prefrontal.testing.conformance.base import ALICE, BOB, STRANGER, StoreSuite, at
from prefrontal.testing.conformance.records import profile


def goal(version: int = 1, **fields: object) -> FrontalItem:
    """ALICE's goal ``g1`` at ``version``."""
    base: dict[str, object] = {
        "item_id": "g1",
        "agent_id": ALICE.agent_id,
        "user_id": ALICE.user_id,
        "kind": FrontalKind.GOAL,
        "title": f"ship v{version}",
        "created_at": at(0),
        "updated_at": at(version),
        "version": version,
    }
    return FrontalItem.model_validate(base | fields)


def entry(version: int = 1, **fields: object) -> Observation:
    """ALICE's pending confirmation ``s1`` at ``version``."""
    base: dict[str, object] = {
        "item_id": "s1",
        "agent_id": ALICE.agent_id,
        "user_id": ALICE.user_id,
        "kind": ScratchKind.PENDING_CONFIRMATION,
        "content": f"book the flight? (v{version})",
        "created_at": at(0),
        "version": version,
    }
    return Observation.model_validate(base | fields)


async def _race(save_a: object, save_b: object) -> list[str]:
    """Run two saves at once; ``"ok"`` or ``"conflict"`` for each."""
    outcomes: list[str] = []

    async def one(save: object) -> None:
        try:
            await save  # type: ignore[misc]
            outcomes.append("ok")
        except ConflictError:
            outcomes.append("conflict")

    async with anyio.create_task_group() as group:
        group.start_soon(one, save_a)
        group.start_soon(one, save_b)
    return sorted(outcomes)


class VersionedProfileSuite(StoreSuite):
    """``save_profile``: create once, replace only over the version read."""

    async def test_create_then_replace_in_order(self, store: ConsciousnessStore) -> None:
        assert isinstance(store, VersionedProfiles)
        await store.save_profile(profile(version=1), expected_version=None)
        await store.save_profile(profile(version=2, name="Bea"), expected_version=1)
        got = await store.get_profile(ALICE)
        assert got is not None
        assert (got.name, got.version) == ("Bea", 2)

    async def test_stale_version_conflicts_and_writes_nothing(
        self, store: ConsciousnessStore
    ) -> None:
        assert isinstance(store, VersionedProfiles)
        await store.save_profile(profile(version=1), expected_version=None)
        with pytest.raises(ConflictError):
            await store.save_profile(profile(version=1, name="Bea"), expected_version=None)
        await store.save_profile(profile(version=2, name="Cy"), expected_version=1)
        with pytest.raises(ConflictError):
            await store.save_profile(profile(version=2, name="Dee"), expected_version=1)
        got = await store.get_profile(ALICE)
        assert got is not None
        assert (got.name, got.version) == ("Cy", 2)

    async def test_version_must_follow_expected(self, store: ConsciousnessStore) -> None:
        assert isinstance(store, VersionedProfiles)
        with pytest.raises(ValueError, match="does not follow"):
            await store.save_profile(profile(version=3), expected_version=None)
        assert await store.get_profile(ALICE) is None

    async def test_one_of_two_concurrent_savers_wins(self, store: ConsciousnessStore) -> None:
        assert isinstance(store, VersionedProfiles)
        await store.save_profile(profile(version=1), expected_version=None)
        outcomes = await _race(
            store.save_profile(profile(version=2, name="Bea"), expected_version=1),
            store.save_profile(profile(version=2, name="Cy"), expected_version=1),
        )
        assert outcomes == ["conflict", "ok"]
        got = await store.get_profile(ALICE)
        assert got is not None
        assert got.version == 2
        assert got.name in {"Bea", "Cy"}


class VersionedFrontalSuite(StoreSuite):
    """``get`` and ``save`` of the tenant's own goals, actions and questions."""

    async def test_save_get_and_query_agree(self, store: FrontalCortexStore) -> None:
        assert isinstance(store, VersionedFrontal)
        await store.save(goal(1), expected_version=None)
        await store.save(goal(2, status=FrontalStatus.DONE, progress=1.0), expected_version=1)
        got = await store.get(ALICE, "g1")
        assert got is not None
        assert (got.version, got.status, got.progress) == (
            2,
            FrontalStatus.DONE,
            1.0,
        )
        listed = await store.query(ALICE, FrontalQuery())
        assert [(i.item_id, i.version) for i in listed] == [("g1", 2)]

    async def test_get_is_the_tenants_own(self, store: FrontalCortexStore) -> None:
        assert isinstance(store, VersionedFrontal)
        await store.save(goal(1), expected_version=None)
        assert await store.get(BOB, "g1") is None
        assert await store.get(STRANGER, "g1") is None
        assert await store.get(ALICE, "nope") is None

    async def test_stale_version_conflicts_and_writes_nothing(
        self, store: FrontalCortexStore
    ) -> None:
        assert isinstance(store, VersionedFrontal)
        await store.save(goal(1), expected_version=None)
        with pytest.raises(ConflictError):
            await store.save(goal(1, title="again"), expected_version=None)
        await store.save(goal(2), expected_version=1)
        with pytest.raises(ConflictError):
            await store.save(goal(2, title="stale"), expected_version=1)
        with pytest.raises(ConflictError):
            await store.save(goal(6, item_id="missing"), expected_version=5)
        got = await store.get(ALICE, "g1")
        assert got is not None
        assert (got.title, got.version) == ("ship v2", 2)
        assert await store.get(ALICE, "missing") is None

    async def test_one_of_two_concurrent_savers_wins(self, store: FrontalCortexStore) -> None:
        assert isinstance(store, VersionedFrontal)
        await store.save(goal(1), expected_version=None)
        outcomes = await _race(
            store.save(goal(2, progress=0.3), expected_version=1),
            store.save(goal(2, progress=0.6), expected_version=1),
        )
        assert outcomes == ["conflict", "ok"]
        got = await store.get(ALICE, "g1")
        assert got is not None
        assert got.version == 2
        assert got.progress in {0.3, 0.6}


class VersionedScratchSuite(StoreSuite):
    """``get`` and ``save`` of the tenant's own scratch entries."""

    async def test_resolving_save_leaves_the_active_page(self, store: ScratchPageStore) -> None:
        assert isinstance(store, VersionedScratch)
        await store.save(entry(1), expected_version=None)
        assert [e.item_id for e in await store.active(ALICE, now=at(1), limit=10)] == ["s1"]
        await store.save(entry(2, resolved=True, outcome="confirmed"), expected_version=1)
        assert await store.active(ALICE, now=at(1), limit=10) == []
        got = await store.get(ALICE, "s1")
        assert got is not None
        assert (got.version, got.outcome) == (2, "confirmed")
        assert await store.get(BOB, "s1") is None

    async def test_stale_version_conflicts_and_writes_nothing(
        self, store: ScratchPageStore
    ) -> None:
        assert isinstance(store, VersionedScratch)
        await store.save(entry(1), expected_version=None)
        with pytest.raises(ConflictError):
            await store.save(entry(1), expected_version=None)
        await store.save(entry(2, resolved=True), expected_version=1)
        with pytest.raises(ConflictError):
            await store.save(entry(2, resolved=False), expected_version=1)
        got = await store.get(ALICE, "s1")
        assert got is not None
        assert got.resolved

    async def test_one_of_two_concurrent_savers_wins(self, store: ScratchPageStore) -> None:
        assert isinstance(store, VersionedScratch)
        await store.save(entry(1), expected_version=None)
        outcomes = await _race(
            store.save(entry(2, resolved=True, outcome="confirmed"), expected_version=1),
            store.save(entry(2, resolved=True, outcome="declined"), expected_version=1),
        )
        assert outcomes == ["conflict", "ok"]
