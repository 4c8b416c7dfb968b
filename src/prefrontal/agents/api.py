"""``AgentStateAPI``: set and steer an agent's own state, the state phases 2, 3 and 7 read.

The profile (identity, values, rules and mandates, modes, capabilities) is
one per agent. Goals, pending actions and open questions (phase 3) and
scratch-page entries (phase 7) belong either to one user of the agent (the
tenant that wrote them, private or shared) or to the agent itself (written
by its owner: the agent file or ``for_agent=True``; shared with every user).
A change names the item by its id or by the handle the context shows
(:mod:`prefrontal.handles`) and acts on an item the tenant sees: its
own, the agent's, or one another user shared. Deciding who may change a
shared one is the servers' job (the ``write_shared`` right); an item the
tenant cannot see raises :class:`~prefrontal.errors.NotFoundError`.

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

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, TypeVar

from prefrontal.agents.merge_patch import merge_patch
from prefrontal.errors import ConfigurationError, ConflictError, NotFoundError
from prefrontal.handles import as_handle, only_with_handle
from prefrontal.memory.api import new_ulid
from prefrontal.stores.authors import HOLDER
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

AGENT_HOLDER = HOLDER
"""Where the agent's own items are kept (a user id no caller may act as: the servers refuse it)."""

LOOKUP_LIMIT = 1_000
"""How many visible items a handle is looked for among."""


def agent_tenant(agent_id: str) -> Tenant:
    """The tenant that holds ``agent_id``'s own goals, actions, questions and entries."""
    return Tenant(agent_id=agent_id, user_id=AGENT_HOLDER)


def belongs_to(item: FrontalItem | Observation) -> str:
    """``agent`` for the agent's own item, ``user`` for one a user wrote."""
    return "agent" if item.user_id == AGENT_HOLDER else "user"


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
        """Create or change the agent's profile with ``fields`` (see :data:`PROFILE_FIELDS`).

        Fields not given keep their stored value (or the default on
        creation); ``name`` is required to create. Returns the saved
        profile, its version one past the one it replaced. A
        ``current_mode`` that is not one of the modes raises ``ValueError``
        naming the modes there are.
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

    async def patch_profile(
        self, tenant: Tenant, patch: dict[str, Any], *, expected_version: int | None = None
    ) -> AgentProfile:
        """Apply the JSON merge patch ``patch`` (RFC 7396) to the agent's stored profile.

        Only the fields ``patch`` names change: an object merges into the
        stored one (``governance``), anything else replaces it (lists such
        as ``modes`` whole), ``None`` resets a field to its default. A mode
        switch is ``{"current_mode": "act"}``. ``NotFoundError`` when the
        agent has no profile yet.
        """
        unknown = sorted(set(patch) - set(PROFILE_FIELDS))
        if unknown:
            raise ValueError(f"unknown profile field(s): {', '.join(unknown)}")
        current = await self.get_profile(tenant)
        if current is None:
            raise NotFoundError(f"agent {tenant.agent_id!r} has no profile to change")
        _expect(current.version, expected_version, "the profile")
        stored = current.model_dump(mode="json", include=set(PROFILE_FIELDS))
        merged = merge_patch(stored, patch)
        fields = {key: merged[key] for key in PROFILE_FIELDS if key in merged}
        replaced = AgentProfile.model_validate({"agent_id": tenant.agent_id, **fields})
        return await self.set_profile(
            tenant,
            expected_version=current.version,
            **{key: getattr(replaced, key) for key in PROFILE_FIELDS},
        )

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
        for_agent: bool = False,
        author: str | None = None,
        **fields: Any,
    ) -> FrontalItem:
        """Add a frontal-cortex item written by ``author``; ``ConflictError`` if ``item_id`` is
        taken.

        ``for_agent=True`` makes it the agent's own, shared with every user
        (what the owner declares); a blank ``title`` raises ``ValueError``.
        """
        _not_blank(title, "title")
        holder = agent_tenant(tenant.agent_id) if for_agent else tenant
        now = self._clock()
        item = FrontalItem.model_validate(
            {
                **fields,
                "item_id": item_id or self._ids(),
                "agent_id": tenant.agent_id,
                "user_id": holder.user_id,
                "scope": Scope.SHARED if for_agent else scope,
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

    async def own_item(self, holder: Tenant, item_id: str) -> FrontalItem | None:
        """The item of exactly this id ``holder`` holds (see :func:`agent_tenant`), or ``None``."""
        return await _frontal(self.stores).get(holder, item_id)

    async def find_item(self, tenant: Tenant, item_id: str) -> FrontalItem | None:
        """The goal, action or question ``item_id`` (id or handle) ``tenant`` sees, or ``None``.

        An id is looked for among the tenant's own items, then the agent's;
        a handle among every item the tenant sees. A handle two items share
        raises ``NotFoundError`` saying to use the id.
        """
        found = await _own_or_shared(_frontal(self.stores).get, tenant, item_id)
        handle = as_handle(item_id)
        if found is not None or handle is None:
            return found
        return only_with_handle(await self.list_items(tenant, limit=LOOKUP_LIMIT), handle)

    async def get_item(self, tenant: Tenant, item_id: str | FrontalItem) -> FrontalItem:
        """The goal, action or question ``item_id`` the tenant sees; ``NotFoundError`` if none.

        Given the item itself, returns it.
        """
        if isinstance(item_id, FrontalItem):
            return item_id
        found = await self.find_item(tenant, item_id)
        if found is None:
            raise NotFoundError(f"no goal, action or question {item_id!r} visible to this user")
        return found

    async def update_item(
        self,
        tenant: Tenant,
        item_id: str | FrontalItem,
        *,
        expected_version: int | None = None,
        author: str | None = None,
        **changes: Any,
    ) -> FrontalItem:
        """Change ``title``, ``detail``, ``priority``, ``progress``, ``status``, ``due_at``...

        ``item_id`` is an id, a handle, or the item itself (as
        :meth:`get_item` found it); ``author`` (when given) is recorded as who
        wrote the item now. Returns the saved item, its version one past the
        one it replaced.
        """
        refused = sorted(set(changes) & _FIXED)
        if refused:
            raise ValueError(f"cannot change {', '.join(refused)}")
        if "title" in changes:
            _not_blank(changes["title"], "title")
        current = await self.get_item(tenant, item_id)
        return await self._save_change(current, expected_version, changes, author)

    async def _save_change(
        self,
        current: FrontalItem,
        expected_version: int | None,
        changes: dict[str, Any],
        author: str | None,
    ) -> FrontalItem:
        _expect(current.version, expected_version, f"{current.kind.value} {current.item_id!r}")
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
        item_id: str | FrontalItem,
        *,
        expected_version: int | None = None,
        author: str | None = None,
    ) -> FrontalItem:
        """Mark a goal done (progress 1.0), an action done, a question answered.

        Idempotent: an item already done is returned as it is (same version).
        """
        current = await self.get_item(tenant, item_id)
        if current.status is FrontalStatus.DONE and current.progress == 1.0:
            return current
        changes = {"status": FrontalStatus.DONE, "progress": 1.0}
        return await self._save_change(current, expected_version, changes, author)

    async def abandon(
        self,
        tenant: Tenant,
        item_id: str | FrontalItem,
        *,
        expected_version: int | None = None,
        author: str | None = None,
    ) -> FrontalItem:
        """Mark an item cancelled: it leaves the context (phase 3 reports the change once).

        Idempotent: an item already cancelled is returned as it is.
        """
        current = await self.get_item(tenant, item_id)
        if current.status is FrontalStatus.CANCELLED:
            return current
        return await self._save_change(
            current, expected_version, {"status": FrontalStatus.CANCELLED}, author
        )

    # -- scratch page ----------------------------------------------------------------------

    async def note(
        self,
        tenant: Tenant,
        content: str,
        *,
        kind: ScratchKind = ScratchKind.OBSERVATION,
        item_id: str | None = None,
        for_agent: bool = False,
        **fields: Any,
    ) -> Observation:
        """Add a scratch-page entry (``priority``, ``tags``, ``expires_at``, ``owner``...).

        ``for_agent=True`` makes it the agent's own, shared with every user;
        blank ``content`` raises ``ValueError``.
        """
        _not_blank(content, "content")
        if for_agent:
            fields["scope"] = Scope.SHARED
        holder = agent_tenant(tenant.agent_id) if for_agent else tenant
        entry = Observation.model_validate(
            {
                **fields,
                "item_id": item_id or self._ids(),
                "agent_id": tenant.agent_id,
                "user_id": holder.user_id,
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

    async def find_entry(self, tenant: Tenant, item_id: str) -> Observation | None:
        """The scratch entry ``item_id`` (an id or a handle) ``tenant`` sees, or ``None``.

        An id is looked for among the tenant's own entries, then the agent's;
        a handle among the active entries the tenant sees.
        """
        found = await _own_or_shared(_scratch(self.stores).get, tenant, item_id)
        handle = as_handle(item_id)
        if found is not None or handle is None:
            return found
        return only_with_handle(await self.active_entries(tenant, limit=LOOKUP_LIMIT), handle)

    async def get_entry(self, tenant: Tenant, item_id: str | Observation) -> Observation:
        """The scratch entry ``item_id`` the tenant sees; ``NotFoundError`` if none.

        Given the entry itself, returns it.
        """
        if isinstance(item_id, Observation):
            return item_id
        found = await self.find_entry(tenant, item_id)
        if found is None:
            raise NotFoundError(f"no scratch entry {item_id!r} visible to this user")
        return found

    async def resolve(
        self,
        tenant: Tenant,
        item_id: str | Observation,
        *,
        outcome: str = "resolved",
        expected_version: int | None = None,
        author: str | None = None,
    ) -> Observation:
        """Resolve an entry with ``outcome`` (by ``author``): it leaves the scratch page of
        later turns.

        Idempotent: an entry already resolved with ``outcome`` is returned as it is.
        """
        current = await self.get_entry(tenant, item_id)
        if current.resolved and current.outcome == outcome:
            return current
        _expect(current.version, expected_version, f"scratch entry {current.item_id!r}")
        resolved = current.model_copy(
            update={"resolved": True, "outcome": outcome, "version": current.version + 1}
            | _written_by(author)
        )
        resolved = Observation.model_validate(resolved.model_dump())
        await _scratch(self.stores).save(resolved, expected_version=current.version)
        return resolved

    async def confirm(
        self, tenant: Tenant, item_id: str | Observation, *, expected_version: int | None = None
    ) -> Observation:
        """Resolve a pending confirmation as confirmed."""
        return await self.resolve(
            tenant, item_id, outcome="confirmed", expected_version=expected_version
        )

    async def decline(
        self, tenant: Tenant, item_id: str | Observation, *, expected_version: int | None = None
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


def _not_blank(text: object, field: str) -> None:
    """``ValueError`` when ``text`` is empty or only whitespace."""
    if isinstance(text, str) and not text.strip():
        raise ValueError(f"{field} must not be blank")


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


Stored = TypeVar("Stored", FrontalItem, Observation)


async def _own_or_shared(
    get: Callable[[Tenant, str], Awaitable[Stored | None]], tenant: Tenant, item_id: str
) -> Stored | None:
    """The item ``item_id`` among ``tenant``'s own, else among the agent's shared ones."""
    for holder in (tenant, agent_tenant(tenant.agent_id)):
        found = await get(holder, item_id)
        if found is not None and (holder == tenant or found.scope is Scope.SHARED):
            return found
    return None


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
