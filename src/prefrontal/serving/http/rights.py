"""What a key may change: a user's private memory needs ``write``, shared memory ``write_shared``.

A shared memory reaches every user's turns, so writing one is a right of
its own (:class:`~prefrontal.serving.keys.Right`). A key that holds it may
change and forget any shared memory of its agent that its users see,
whoever wrote it; a key without it may change and forget only its users'
private memories.
"""

from __future__ import annotations

from prefrontal.errors import NotFoundError
from prefrontal.serving.echo import quoted
from prefrontal.serving.http.auth import require
from prefrontal.serving.keys import KeyGrant, Right
from prefrontal.serving.service import Service
from prefrontal.stores.tenancy import Scope, Tenant

__all__ = ["may_change", "right_to_write"]


def right_to_write(scope: Scope) -> Right:
    """The right writing a memory of ``scope`` needs."""
    return Right.WRITE_SHARED if scope is Scope.SHARED else Right.WRITE


async def may_change(service: Service, grant: KeyGrant, tenant: Tenant, item_id: str) -> bool:
    """Whether changing ``item_id`` changes shared memory (``True``) or private (``False``).

    404 when ``tenant`` sees no memory of that id; 403 when ``grant`` lacks
    the right to write memory of its scope.
    """
    scope = await service.scope_of(tenant, item_id)
    if scope is None:
        raise NotFoundError(f"no memory {quoted(item_id)} for this user")
    require(grant, right_to_write(scope))
    return scope is Scope.SHARED
