"""One goal changed by a tool call: the same steps for the MCP tool and the frameworks' tools.

:func:`change_goal` finds the goal (by its handle or ``item_id``, own or
shared), asks ``allow`` for the right changing it needs (``write_shared``
for a shared one, :func:`~prefrontal.serving.rights.needed`), then
abandons it when the only change is ``status: cancelled``, or applies the
changes with the version the caller last saw. A stale version raises
:class:`~prefrontal.errors.ConflictError`, an unknown goal
:class:`~prefrontal.errors.NotFoundError`: each caller words them for its model.
"""

from __future__ import annotations

from collections.abc import Callable

from prefrontal.agents import AgentStateAPI
from prefrontal.serving.agent_models import GoalUpdateBody
from prefrontal.serving.keys import Right
from prefrontal.serving.rights import Operation, needed
from prefrontal.stores.frontal_cortex import FrontalItem, FrontalStatus
from prefrontal.stores.tenancy import Tenant

__all__ = ["NOTHING_TO_CHANGE", "change_goal"]

NOTHING_TO_CHANGE = "nothing to change: give progress, status, priority or detail"
"""What a tool says when a goal update names no change."""


async def change_goal(
    agents: AgentStateAPI,
    tenant: Tenant,
    goal_id: str,
    body: GoalUpdateBody,
    *,
    author: str,
    allow: Callable[[Right], None],
) -> FrontalItem:
    """The goal ``goal_id`` names after ``body``'s changes, written by ``author``.

    ``allow(right)`` returns when the caller may act with ``right`` and
    raises (the caller's refusal) otherwise; it is asked before anything
    is written. ``body`` must name at least one change (ValueError).
    """
    changes = body.changes()
    if not changes:
        raise ValueError(NOTHING_TO_CHANGE)
    found = await agents.get_item(tenant, goal_id)
    allow(needed(Operation.CHANGE_GOAL, found.scope))
    if changes == {"status": FrontalStatus.CANCELLED}:
        return await agents.abandon(
            tenant, found, expected_version=body.expected_version, author=author
        )
    return await agents.update_item(
        tenant, found, expected_version=body.expected_version, author=author, **changes
    )
