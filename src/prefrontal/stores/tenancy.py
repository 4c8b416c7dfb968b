"""Who may see what: the tenancy filter every store applies in every query.

An item belongs to one agent and, unless it is shared, to one user. A turn
runs for one ``(agent_id, user_id)`` pair and sees the agent's items that are
shared with all its users plus that user's private items, never another
agent's, never another user's private ones.

Ids are unique per ``(agent, user)``: two users of one agent may each hold
an item ``note-1`` without touching each other's. Where a call names an id
that several visible items carry (the tenant's own and items other users
shared), the tenant is given one of them, by :func:`precedence`: its own
first, else the shared one whose owner's user id sorts first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import StrEnum
from inspect import getattr_static
from typing import Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from prefrontal.ids import ID_PATTERN, Id
from prefrontal.model_reads import FastReads

__all__ = ["ID_PATTERN", "Id", "Identifier", "Scope", "Tenant"]

Identifier = str


class Scope(StrEnum):
    """Visibility of an item within its agent."""

    PRIVATE = "private"
    """Seen only by turns of the owning user."""
    SHARED = "shared"
    """Seen by turns of every user of the owning agent."""


class Tenant(FastReads):
    """The ``(agent, user)`` a store call is made for."""

    model_config = ConfigDict(frozen=True)

    agent_id: Id
    user_id: Id


class Owned(Protocol):
    """Anything stored with an owner: the fields tenancy looks at."""

    @property
    def agent_id(self) -> str: ...

    @property
    def user_id(self) -> str: ...

    @property
    def scope(self) -> Scope: ...


def visible_to(item: Owned, tenant: Tenant) -> bool:
    """True when ``tenant`` may see ``item`` (same agent; shared or own user)."""
    if item.agent_id != tenant.agent_id:
        return False
    return item.scope is Scope.SHARED or item.user_id == tenant.user_id


def owns(tenant: Tenant, item: Owned) -> bool:
    """True when ``item`` belongs to ``tenant`` itself (private or shared by it)."""
    return item.agent_id == tenant.agent_id and item.user_id == tenant.user_id


def precedence(item: Owned, tenant: Tenant) -> tuple[bool, str]:
    """Which of several visible items with one id ``tenant`` is given: the least of these.

    Ids are unique per ``(agent, user)``, so one id may name the tenant's own
    item and items other users shared. The tenant's own comes first, then
    the shared ones by their owner's user id (code-point order).
    """
    return (item.user_id != tenant.user_id, item.user_id)


OwnedT = TypeVar("OwnedT", bound=Owned)


def preferred(items: Iterable[OwnedT], tenant: Tenant) -> OwnedT | None:
    """The item ``tenant`` is given among ``items`` of one id (``None`` when none is visible)."""
    visible = [item for item in items if visible_to(item, tenant)]
    return min(visible, key=lambda item: precedence(item, tenant), default=None)


def may_see(value: object, tenant: Tenant) -> bool:
    """Whether ``tenant`` may see what a store returned: a record, a hit, or anything unowned.

    A search hit is judged by its item; a record with an agent but no user (an
    agent's profile) by its agent; one with both but no scope (a trace) as
    private. Values that name no owner (counts, ``None``) are always fine.
    Each type is judged by a screen made once for it (see :func:`screen_for`).
    """
    return screen_for(type(value))(value, tenant)


Screen = Callable[[object, Tenant], bool]
"""Judges one value of a given type for a tenant, as :func:`may_see` does."""

V = TypeVar("V")


def seen_by(values: list[V], tenant: Tenant) -> list[V]:
    """The values of ``values`` that ``tenant`` may see, each judged as :func:`may_see` judges it.

    A store's answer is a list of values of one type (its items, its hits):
    the screen is looked up once for each run of one type, a hit's item is
    judged by its own type's screen directly, and a record with an owner
    and a scope (a memory item) by its fields without a call per field.
    """
    kept: list[V] = []
    last: type | None = None
    screen: Screen = _unowned
    inner_last: type | None = None
    inner_scoped = False
    for value in values:
        cls = type(value)
        if cls is not last:
            last, screen = cls, screen_for(cls)
        if screen is _through_item:
            inner = value.item  # type: ignore[attr-defined]
            if type(inner) is not inner_last:
                inner_last = type(inner)
                inner_scoped = screen_for(inner_last) is _scoped
            visible = (
                _scoped_fields(inner, tenant) if inner_scoped else _through_item(value, tenant)
            )
        elif screen is _scoped:
            visible = _scoped_fields(value, tenant)
        else:
            visible = screen(value, tenant)
        if visible:
            kept.append(value)
    return kept


def _scoped_fields(value: object, tenant: Tenant) -> bool:
    """:func:`_scoped` of a value whose type declares ``agent_id``, ``user_id`` and ``scope``."""
    agent = value.agent_id  # type: ignore[attr-defined]
    if agent is None:
        return True
    if agent != tenant.agent_id:
        return False
    user = value.user_id  # type: ignore[attr-defined]
    return user is None or value.scope is Scope.SHARED or user == tenant.user_id  # type: ignore[attr-defined]


def screen_for(cls: type) -> Screen:
    """The screen of ``cls``'s values, made once per type (kept for the most recent types).

    A closed pydantic model that cannot hold an ``item`` is screened by the
    owner fields it has, without asking for those it cannot have; any other
    type by :func:`_judged`, which looks at what each value holds.
    """
    screen = _SCREENS.get(cls)
    if screen is None:
        if len(_SCREENS) >= _NEVER_HAS_SIZE:
            _SCREENS.clear()
        screen = _SCREENS[cls] = _made_screen(cls)
    return screen


def _made_screen(cls: type) -> Screen:
    if not _never_has(cls, "item"):
        return _through_item if _holds_item(cls) else _judged
    if _never_has(cls, "agent_id"):
        return _unowned
    if _never_has(cls, "user_id"):
        return _agents
    if _never_has(cls, "scope"):
        return _private
    return _scoped


def _unowned(value: object, tenant: Tenant) -> bool:
    """A value that names no owner: always fine."""
    return True


def _agents(value: object, tenant: Tenant) -> bool:
    """A record with an agent and no user (an agent's profile): the agent's own."""
    agent = getattr(value, "agent_id", None)
    return agent is None or agent == tenant.agent_id


def _private(value: object, tenant: Tenant) -> bool:
    """A record with an agent and a user but no scope (a trace): private to its user."""
    return _owned_by(value, tenant, Scope.PRIVATE)


def _scoped(value: object, tenant: Tenant) -> bool:
    """A record with an agent, a user and a scope: the agent's own, shared or the user's."""
    return _owned_by(value, tenant, getattr(value, "scope", Scope.PRIVATE))


def _owned_by(
    value: object,
    tenant: Tenant,
    scope: object,
    read: Callable[[object, str, object], object] = getattr,
) -> bool:
    """Whether ``tenant`` may see ``value`` of ``scope``, its owners read with ``read``."""
    agent = read(value, "agent_id", None)
    if agent is None:
        return True
    if agent != tenant.agent_id:
        return False
    user = read(value, "user_id", None)
    return user is None or scope is Scope.SHARED or user == tenant.user_id


def _holds_item(cls: type) -> bool:
    """True when every ``cls`` holds an ``item`` field: a closed pydantic model declaring one."""
    return (
        issubclass(cls, BaseModel)
        and cls.model_config.get("extra") != "allow"
        and "item" in cls.model_fields
    )


def _through_item(value: object, tenant: Tenant) -> bool:
    """:func:`_judged` for a hit (a model with an ``item`` field), by its item's own screen.

    An item of a type whose screen names its owner fields (a memory item) is
    judged by that screen, as :func:`_judged` would judge it; any other is
    left to :func:`_judged`.
    """
    inner = getattr(value, "item", None)
    screen = screen_for(type(inner))
    if screen is _judged or screen is _unowned or screen is _through_item:
        return _judged(value, tenant)
    return screen(inner, tenant)


def _judged(value: object, tenant: Tenant) -> bool:
    """:func:`may_see` for a value whose type does not tell which owner fields it holds."""
    inner = _attribute(value, "item", None)
    target = inner if hasattr(inner, "agent_id") else value
    scope = _attribute(target, "scope", Scope.PRIVATE)
    return _owned_by(target, tenant, scope, _attribute)


def _attribute(value: object, name: str, default: object) -> object:
    """``getattr(value, name, default)``, without asking a model for an attribute it cannot have.

    Asking a pydantic model for a missing attribute raises inside pydantic
    and costs ten times a present one; :func:`may_see` asks for several on
    every record a store returns.
    """
    key = (type(value), name)
    never = _NEVER_HAS.get(key)
    if never is None:
        if len(_NEVER_HAS) >= _NEVER_HAS_SIZE:
            _NEVER_HAS.clear()
        never = _NEVER_HAS[key] = _never_has(*key)
    return default if never else getattr(value, name, default)


def _never_has(cls: type, name: str) -> bool:
    """True when no instance of ``cls`` has ``name``: a closed pydantic model lacking it."""
    if not issubclass(cls, BaseModel) or cls.model_config.get("extra") == "allow":
        return False
    return name not in cls.model_fields and getattr_static(cls, name, _ABSENT) is _ABSENT


_ABSENT = object()
_NEVER_HAS: dict[tuple[type, str], bool] = {}
""":func:`_never_has` by class and name (cleared past :data:`_NEVER_HAS_SIZE` entries)."""
_NEVER_HAS_SIZE = 1_024
_SCREENS: dict[type, Screen] = {}
""":func:`screen_for` by class (cleared past :data:`_NEVER_HAS_SIZE` entries)."""
