"""``AgentStateAPI``: set and steer an agent's own state, the state phases 2, 3 and 7 read.

The profile (identity, values, rules and mandates, modes, capabilities) is
one per agent. Goals, pending actions and open questions (phase 3) and
scratch-page entries (phase 7) belong to a tenant, an agent and one of its
users, exactly like a memory: a call acts on the tenant's own records only,
and an id the tenant does not own raises
:class:`~prefrontal.errors.NotFoundError`.

Every change is a versioned save (:mod:`prefrontal.stores.versioned`): pass
``expected_version`` (the version you read) to make a read-modify-write
safe across processes; without it the call reads the current version and
saves over exactly that one. Either way, a writer that saved first makes the
later save raise :class:`~prefrontal.errors.ConflictError`, and nothing is
overwritten silently. Each change is visible to the next turn, and that
turn's trace (phase 3's and 7's ``changed`` detail) names it.

Who wrote an item is recorded with it (``author``: a key's name, or a
reserved author of :mod:`prefrontal.stores.authors`), and a change by a
writer that names itself records the new author; without one (the
application in process) a change keeps the stored author. The servers pass
the caller's key, never a name from the request's body.

Bad input raises ``ValueError`` (pydantic's ``ValidationError`` where a model
field refuses it) naming the field.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from prefrontal.errors import ConfigurationError, ConflictError, NotFoundError
from prefrontal.memory.api import new_ulid
from prefrontal.stores.consciousness import AgentProfile
from prefrontal.stores.frontal_cortex import (
    FrontalItem,
    FrontalKind,
    FrontalQuery,
    FrontalStatus,
    Owner,
)
from prefrontal.stores.records import utc_now
from prefrontal.stores.scratch_page import Observation, ScratchKind
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Scope, Tenant
from prefrontal.stores.versioned import VersionedFrontal, VersionedProfiles, VersionedScratch

Clock = Callable[[], datetime]

PROFILE_FIELDS = (
    "name",
    "description",
    "values",
    "mandates",
    "governance",
    "modes",
    "current_mode",
    "capabilities",
)
"""The fields of a profile a caller sets (the rest, version and time, the API sets)."""


class AgentStateAPI:
    """The agent's profile, goals, pending actions, questions and scratch page, versioned.

    ``clock`` stamps every change (``updated_at``; phase 3 reports items
    changed since the session's last turn by it); ``ids`` makes the ids of
    new records (ULIDs by default).
    """

    def __init__(
        self, stores: Stores, *, clock: Clock = utc_now, ids: Callable[[], str] = new_ulid
    ) -> None:
        self.stores = stores
        self._clock = clock
        self._ids = ids

    # -- profile ---------------------------------------------------------------------------

    async def get_profile(self, tenant: Tenant) -> AgentProfile | None:
        """The profile of ``tenant.agent_id``, or ``None``."""
        return await self.stores.consciousness.get_profile(tenant)

    async def set_profile(
        self, tenant: Tenant, *, expected_version: int | None = None, **fields: Any
    ) -> AgentProfile:
        """Create or replace the agent's profile with ``fields`` (see :data:`PROFILE_FIELDS`).

        Fields not given keep their stored value (or the default on
        creation); ``name`` is required to create. Returns the saved
        profile, its version one past the one it replaced.
        """
        unknown = sorted(set(fields) - set(PROFILE_FIELDS))
        if unknown:
            raise ValueError(f"unknown profile field(s): {', '.join(unknown)}")
        current = await self.get_profile(tenant)
        _expect(None if current is None else current.version, expected_version, "the profile")
        base = {} if current is None else current.model_dump(include=set(PROFILE_FIELDS))
        profile = AgentProfile.model_validate(
            base
            | fields
            | {
                "agent_id": tenant.agent_id,
                "version": (current.version + 1) if current else 1,
                "updated_at": self._clock(),
            }
        )
        await _profiles(self.stores).save_profile(
            profile, expected_version=current.version if current else None
        )
        return profile

    # -- goals, pending actions, open questions ----------------------------------------

    async def add_goal(self, tenant: Tenant, title: str, **fields: Any) -> FrontalItem:
        """Add an active goal of ``tenant`` (``detail``, ``priority``, ``due_at``, ``tags``...)."""
        return await self.add_item(tenant, FrontalKind.GOAL, title, **fields)

    async def add_action(self, tenant: Tenant, title: str, **fields: Any) -> FrontalItem:
        """Add a pending action (``owner`` ``agent`` or ``user``, ``blocking``...)."""
        return await self.add_item(tenant, FrontalKind.ACTION, title, **fields)

    async def add_question(self, tenant: Tenant, title: str, **fields: Any) -> FrontalItem:
        """Add an open question."""
        return await self.add_item(tenant, FrontalKind.QUESTION, title, **fields)

    async def add_item(
        self,
        tenant: Tenant,
        kind: FrontalKind,
        title: str,
        *,
        item_id: str | None = None,
        scope: Scope = Scope.PRIVATE,
        author: str | None = None,
        **fields: Any,
    ) -> FrontalItem:
        """Add an item written by ``author``; ``ConflictError`` if ``item_id`` is taken."""
        now = self._clock()
        item = FrontalItem.model_validate(
            {
                **fields,
                "item_id": item_id or self._ids(),
                "agent_id": tenant.agent_id,
                "user_id": tenant.user_id,
                "scope": scope,
                "author": author,
                "kind": kind,
                "title": title,
                "created_at": now,
                "updated_at": now,
                "version": 1,
            }
        )
        await _frontal(self.stores).save(item, expected_version=None)
        return item

    async def list_items(self, tenant: Tenant, *, limit: int = 200) -> list[FrontalItem]:
        """The goals, actions and questions ``tenant`` sees (its own and shared), newest first."""
        query = FrontalQuery(kinds=(FrontalKind.GOAL, FrontalKind.ACTION, FrontalKind.QUESTION))
        return await self.stores.frontal_cortex.query(
            tenant, query.model_copy(update={"limit": limit})
        )

    async def find_item(self, tenant: Tenant, item_id: str) -> FrontalItem | None:
        """The tenant's own goal, action or question ``item_id``, or ``None``."""
        return await _frontal(self.stores).get(tenant, item_id)

    async def get_item(self, tenant: Tenant, item_id: str) -> FrontalItem:
        """The tenant's own goal, action or question ``item_id``; ``NotFoundError`` if none."""
        found = await self.find_item(tenant, item_id)
        if found is None:
            raise NotFoundError(f"no goal, action or question {item_id!r} of this user")
        return found

    async def update_item(
        self,
        tenant: Tenant,
        item_id: str,
        *,
        expected_version: int | None = None,
        author: str | None = None,
        **changes: Any,
    ) -> FrontalItem:
        """Change ``title``, ``detail``, ``priority``, ``progress``, ``status``, ``due_at``...

        ``author`` (when given) is recorded as who wrote the item now. Returns
        the saved item, its version one past the one it replaced.
        """
        refused = sorted(set(changes) & _FIXED)
        if refused:
            raise ValueError(f"cannot change {', '.join(refused)}")
        current = await self.get_item(tenant, item_id)
        _expect(current.version, expected_version, f"{current.kind.value} {item_id!r}")
        updated = FrontalItem.model_validate(
            current.model_dump()
            | changes
            | _written_by(author)
            | {"version": current.version + 1, "updated_at": self._clock()}
        )
        await _frontal(self.stores).save(updated, expected_version=current.version)
        return updated

    async def complete(
        self,
        tenant: Tenant,
        item_id: str,
        *,
        expected_version: int | None = None,
        author: str | None = None,
    ) -> FrontalItem:
        """Mark a goal done (progress 1.0), an action done, a question answered."""
        return await self.update_item(
            tenant,
            item_id,
            expected_version=expected_version,
            author=author,
            status=FrontalStatus.DONE,
            progress=1.0,
        )

    async def abandon(
        self,
        tenant: Tenant,
        item_id: str,
        *,
        expected_version: int | None = None,
        author: str | None = None,
    ) -> FrontalItem:
        """Mark an item cancelled: it leaves the context (phase 3 reports the change once)."""
        return await self.update_item(
            tenant,
            item_id,
            expected_version=expected_version,
            author=author,
            status=FrontalStatus.CANCELLED,
        )

    # -- scratch page ----------------------------------------------------------------------

    async def note(
        self,
        tenant: Tenant,
        content: str,
        *,
        kind: ScratchKind = ScratchKind.OBSERVATION,
        item_id: str | None = None,
        **fields: Any,
    ) -> Observation:
        """Add a scratch-page entry (``priority``, ``tags``, ``expires_at``, ``owner``...)."""
        entry = Observation.model_validate(
            {
                **fields,
                "item_id": item_id or self._ids(),
                "agent_id": tenant.agent_id,
                "user_id": tenant.user_id,
                "kind": kind,
                "content": content,
                "created_at": self._clock(),
                "version": 1,
            }
        )
        await _scratch(self.stores).save(entry, expected_version=None)
        return entry

    async def note_observation(self, tenant: Tenant, content: str, **fields: Any) -> Observation:
        """Note something noticed that the next turns should keep in mind."""
        return await self.note(tenant, content, kind=ScratchKind.OBSERVATION, **fields)

    async def note_risk(self, tenant: Tenant, content: str, **fields: Any) -> Observation:
        """Note a risk alert (shown first in phase 7 at its priority, default 0.8)."""
        fields.setdefault("priority", 0.8)
        return await self.note(tenant, content, kind=ScratchKind.RISK_ALERT, **fields)

    async def ask_confirmation(self, tenant: Tenant, content: str, **fields: Any) -> Observation:
        """Record a pending confirmation the user owes (resolve it with :meth:`confirm`)."""
        fields.setdefault("owner", Owner.USER)
        return await self.note(tenant, content, kind=ScratchKind.PENDING_CONFIRMATION, **fields)

    async def active_entries(self, tenant: Tenant, *, limit: int = 200) -> list[Observation]:
        """The scratch entries ``tenant`` sees that are unresolved and unexpired now."""
        return await self.stores.scratch_page.active(tenant, now=self._clock(), limit=limit)

    async def get_entry(self, tenant: Tenant, item_id: str) -> Observation:
        """The tenant's own scratch entry ``item_id``; ``NotFoundError`` if none."""
        found = await _scratch(self.stores).get(tenant, item_id)
        if found is None:
            raise NotFoundError(f"no scratch entry {item_id!r} of this user")
        return found

    async def resolve(
        self,
        tenant: Tenant,
        item_id: str,
        *,
        outcome: str = "resolved",
        expected_version: int | None = None,
        author: str | None = None,
    ) -> Observation:
        """Resolve an entry with ``outcome`` (by ``author``): it leaves the scratch page of later
        turns."""
        current = await self.get_entry(tenant, item_id)
        _expect(current.version, expected_version, f"scratch entry {item_id!r}")
        resolved = current.model_copy(
            update={"resolved": True, "outcome": outcome, "version": current.version + 1}
            | _written_by(author)
        )
        resolved = Observation.model_validate(resolved.model_dump())
        await _scratch(self.stores).save(resolved, expected_version=current.version)
        return resolved

    async def confirm(
        self, tenant: Tenant, item_id: str, *, expected_version: int | None = None
    ) -> Observation:
        """Resolve a pending confirmation as confirmed."""
        return await self.resolve(
            tenant, item_id, outcome="confirmed", expected_version=expected_version
        )

    async def decline(
        self, tenant: Tenant, item_id: str, *, expected_version: int | None = None
    ) -> Observation:
        """Resolve a pending confirmation as declined."""
        return await self.resolve(
            tenant, item_id, outcome="declined", expected_version=expected_version
        )


_FIXED = frozenset(
    {
        "item_id",
        "agent_id",
        "user_id",
        "scope",
        "kind",
        "author",
        "created_at",
        "updated_at",
        "version",
    }
)
"""What an update may not change: identity, ownership, scope, kind, author and the versioning."""


def _written_by(author: str | None) -> dict[str, str]:
    """The change that records ``author`` as the item's writer (none without one)."""
    return {} if author is None else {"author": author}


def _expect(stored: int | None, expected: int | None, what: str) -> None:
    """``ConflictError`` when the caller read another version than the one stored now."""
    if expected is not None and stored != expected:
        raise ConflictError(
            f"{what} is at version {stored}, not {expected}: reload and try again",
            store="agent_state",
        )


def _profiles(stores: Stores) -> VersionedProfiles:
    store = stores.consciousness
    if not isinstance(store, VersionedProfiles):
        raise _unversioned(store, "consciousness")
    return store


def _frontal(stores: Stores) -> VersionedFrontal:
    store = stores.frontal_cortex
    if not isinstance(store, VersionedFrontal):
        raise _unversioned(store, "frontal_cortex")
    return store


def _scratch(stores: Stores) -> VersionedScratch:
    store = stores.scratch_page
    if not isinstance(store, VersionedScratch):
        raise _unversioned(store, "scratch_page")
    return store


def _unversioned(store: object, name: str) -> ConfigurationError:
    return ConfigurationError(
        f"the {name} store {type(store).__name__} has no versioned saves"
        " (see prefrontal.stores.versioned)"
    )
