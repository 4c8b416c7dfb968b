"""Versioned saves of an agent's own state: its profile, goals and work items, scratch entries.

Two writers can race on one goal (the agent's tool call and an operator's
HTTP call). Each of these saves is a compare-and-set: the caller names the
version it read, and the store writes only if that is still the stored
version, else it raises :class:`~prefrontal.errors.ConflictError` and writes
nothing. Never a silent overwrite.

Contract, the same for the three kinds: ``expected_version=None`` creates, and
conflicts when a record with that key exists; otherwise the record with that
key must exist at ``expected_version``. The record saved carries version
``(expected_version or 0) + 1`` (``ValueError`` otherwise). The check and the
write are one transaction on SQLite and PostgreSQL. ``get`` returns the
tenant's own record of that id (agent, user and id), or ``None``.

Every backend shipped with prefrontal implements these; the conformance suite
(:mod:`prefrontal.testing.conformance.versioned`) checks them.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from prefrontal.errors import ConflictError
from prefrontal.stores.consciousness import AgentProfile
from prefrontal.stores.frontal_cortex import FrontalItem
from prefrontal.stores.scratch_page import Observation
from prefrontal.stores.tenancy import Tenant


@runtime_checkable
class VersionedProfiles(Protocol):
    """A consciousness store that saves a profile only over the version the caller read."""

    async def save_profile(self, profile: AgentProfile, *, expected_version: int | None) -> None:
        """Create (``None``) or replace the profile at ``expected_version``; else conflict."""
        ...


@runtime_checkable
class VersionedFrontal(Protocol):
    """A frontal-cortex store with versioned saves of the tenant's own items."""

    async def get(self, tenant: Tenant, item_id: str) -> FrontalItem | None:
        """The tenant's own item of that id, or ``None``."""
        ...

    async def save(self, item: FrontalItem, *, expected_version: int | None) -> None:
        """Create (``None``) or replace the item at ``expected_version``; else conflict."""
        ...


@runtime_checkable
class VersionedScratch(Protocol):
    """A scratch page with versioned saves of the tenant's own entries."""

    async def get(self, tenant: Tenant, item_id: str) -> Observation | None:
        """The tenant's own entry of that id, or ``None``."""
        ...

    async def save(self, observation: Observation, *, expected_version: int | None) -> None:
        """Create (``None``) or replace the entry at ``expected_version``; else conflict."""
        ...


def check_next(version: int, expected_version: int | None) -> None:
    """``ValueError`` unless ``version`` is the one after ``expected_version``."""
    if version != (expected_version or 0) + 1:
        raise ValueError(f"version {version} does not follow {expected_version}")


def check_stored(
    stored: int | None, expected_version: int | None, *, what: str, store: str
) -> None:
    """:class:`ConflictError` unless the stored version (``None``: none) is the expected one."""
    if stored == expected_version:
        return
    if expected_version is None:
        raise ConflictError(f"{what} exists already (version {stored})", store=store)
    if stored is None:
        raise ConflictError(
            f"{what} no longer exists (expected version {expected_version})", store=store
        )
    raise ConflictError(
        f"{what} is at version {stored}, not {expected_version}: reload and try again",
        store=store,
    )
