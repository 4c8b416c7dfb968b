"""What a key may change: a user's private memory needs ``write``, shared memory ``write_shared``.

A shared memory reaches every user's turns, so writing one is a right of
its own (:class:`~prefrontal.serving.keys.Right`). A key that holds it may
change and forget any shared memory of its agent that its users see,
whoever wrote it; a key without it may change and forget only its users'
private memories. A turn in another mode than the agent's current one
needs ``administer`` or a grant naming the mode (:func:`check_mode`). The
rights come from the one table, :data:`prefrontal.serving.rights.RULES`.
"""

from __future__ import annotations

from fastapi import HTTPException

from prefrontal.errors import NotFoundError
from prefrontal.serving.echo import quoted
from prefrontal.serving.http.auth import require
from prefrontal.serving.keys import KeyGrant, Right
from prefrontal.serving.rights import Operation, may_choose_mode, needed
from prefrontal.serving.service import Service
from prefrontal.stores.tenancy import Scope, Tenant

__all__ = ["check_mode", "may_change", "right_to_write"]


def right_to_write(scope: Scope) -> Right:
    """The right writing a memory of ``scope`` needs."""
    return needed(Operation.REMEMBER, scope)


async def check_mode(service: Service, grant: KeyGrant, tenant: Tenant, mode: str | None) -> None:
    """403 unless ``grant`` may start ``tenant``'s turn in ``mode`` (:func:`may_choose_mode`)."""
    if mode is None:
        return
    profile = await service.orchestrator.agents.get_profile(tenant)
    current = None if profile is None else profile.current_mode
    if not may_choose_mode(grant, mode, current):
        raise HTTPException(
            403,
            f"This API key may not choose the mode {quoted(mode)}: another mode than the "
            "agent's current one needs the 'administer' right or a grant naming the mode.",
        )


async def may_change(service: Service, grant: KeyGrant, tenant: Tenant, item_id: str) -> bool:
    """Whether changing ``item_id`` changes shared memory (``True``) or private (``False``).

    404 when ``tenant`` sees no memory of that id; 403 when ``grant`` lacks
    the right to write memory of its scope.
    """
    scope = await service.scope_of(tenant, item_id)
    if scope is None:
        raise NotFoundError(f"no memory {quoted(item_id)} for this user")
    require(grant, needed(Operation.CHANGE_MEMORY, scope))
    return scope is Scope.SHARED
