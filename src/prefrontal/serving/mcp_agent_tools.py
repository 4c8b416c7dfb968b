"""The MCP tools an agent calls to steer its own state: goals, observations, risks, confirmations.

Registered on the MCP server by :func:`register_agent_tools`. They act for the
server's tenant through ``orchestrator.agents`` and check their arguments
with the same models as the HTTP API (:mod:`prefrontal.serving.agent_models`).
A stale ``expected_version`` or an unknown id comes back as a tool error
saying what to do; the change shows in the next turn's context and trace.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from prefrontal.errors import ConflictError, NotFoundError
from prefrontal.serving.agent_models import (
    MAX_DETAIL,
    MAX_TITLE,
    GoalBody,
    GoalOut,
    GoalUpdateBody,
    ResolveBody,
    ScratchBody,
    ScratchOut,
)
from prefrontal.serving.mcp_rights import author_in, require
from prefrontal.serving.rights import Operation, needed
from prefrontal.serving.service import Service
from prefrontal.stores.frontal_cortex import FrontalKind, FrontalStatus
from prefrontal.stores.records import OwnedRecord
from prefrontal.stores.scratch_page import ScratchKind
from prefrontal.stores.tenancy import Tenant

T = TypeVar("T")

GoalId = Annotated[
    str, Field(min_length=1, max_length=256, description="The `item_id` `set_goal` returned.")
]
ExpectedVersion = Annotated[
    int | None,
    Field(
        ge=1,
        description="The `version` you last saw; if the goal changed since, the call fails and "
        "you should look again. Omit to change it as it is now.",
    ),
]
Priority = Annotated[float, Field(ge=0.0, le=1.0, description="0 (low) to 1 (urgent).")]
WRITE = ToolAnnotations(readOnlyHint=False, idempotentHint=False, openWorldHint=False)


async def _tool_call(call: Callable[[], Awaitable[T]]) -> T:
    """``call()``, with a conflict or an unknown id as a tool error the model can act on."""
    try:
        return await call()
    except ConflictError as error:
        raise ToolError(f"{error} (start a new turn to see the current state)") from None
    except NotFoundError as error:
        raise ToolError(f"{error}: use an id from your context or a previous tool call") from None


async def _may_change(
    ctx: Context[Any, Any], operation: Operation, find: Callable[[], Awaitable[OwnedRecord]]
) -> None:
    """A tool error unless the call may do ``operation`` on the item ``find()`` returns: the
    right for a private item first, then the one its scope needs (``write_shared`` if shared)."""
    require(ctx, needed(operation))
    item = await _tool_call(find)
    require(ctx, needed(operation, item.scope))


# One nested function per tool, like serving/mcp_tools.py: long, but flat.
def register_agent_tools(server: MCPServer, service: Service, tenant: Tenant) -> None:
    """Add the agent-state tools to ``server``, acting for ``tenant``."""
    agents = service.orchestrator.agents

    @server.tool(title="Set a goal", annotations=WRITE)
    async def set_goal(
        ctx: Context[Any, Any],
        title: Annotated[str, Field(min_length=1, max_length=MAX_TITLE, description="The goal.")],
        detail: Annotated[str, Field(max_length=MAX_DETAIL, description="Optional.")] = "",
        priority: Priority = 0.5,
        kind: Annotated[
            Literal["goal", "action", "question"],
            Field(description="`goal`, a pending `action`, or an open `question`."),
        ] = "goal",
    ) -> GoalOut:
        """Call when the user gives you an objective that will take more than this turn
        (or you commit to a follow-up action, or an open question must be answered later).

        It appears in your context on every later turn until you complete it. Returns its
        `item_id` and `version`.
        """
        require(ctx, needed(Operation.ADD_GOAL))
        body = GoalBody(
            user_id=tenant.user_id, title=title, detail=detail, priority=priority, kind=kind
        )
        extra = body.model_dump(include={"detail", "priority", "owner", "tags", "scope"})
        item = await _tool_call(
            lambda: agents.add_item(
                tenant, FrontalKind(body.kind), body.title, author=author_in(ctx), **extra
            )
        )
        return GoalOut.of(item)

    @server.tool(title="Update a goal", annotations=WRITE)
    async def update_goal(
        ctx: Context[Any, Any],
        goal_id: GoalId,
        progress: Annotated[
            float | None, Field(ge=0.0, le=1.0, description="How far along: 0 to 1.")
        ] = None,
        status: Annotated[
            Literal["active", "blocked"] | None,
            Field(description="`blocked` when you cannot go on without something; else `active`."),
        ] = None,
        priority: Annotated[
            float | None, Field(ge=0.0, le=1.0, description="The new priority, 0 to 1.")
        ] = None,
        detail: Annotated[
            str | None, Field(max_length=MAX_DETAIL, description="What stands now, briefly.")
        ] = None,
        expected_version: ExpectedVersion = None,
    ) -> GoalOut:
        """Call when you made progress on a goal, it became blocked or unblocked, or its
        priority changed. The next turn's context shows the goal as you leave it.
        """
        await _may_change(ctx, Operation.CHANGE_GOAL, lambda: agents.get_item(tenant, goal_id))
        body = GoalUpdateBody(
            user_id=tenant.user_id,
            progress=progress,
            status=None if status is None else FrontalStatus(status),
            priority=priority,
            detail=detail,
            expected_version=expected_version,
        )
        changes = body.changes()
        if not changes:
            raise ToolError("nothing to change: give progress, status, priority or detail")
        item = await _tool_call(
            lambda: agents.update_item(
                tenant,
                goal_id,
                expected_version=body.expected_version,
                author=author_in(ctx),
                **changes,
            )
        )
        return GoalOut.of(item)

    @server.tool(title="Complete a goal", annotations=WRITE)
    async def complete_goal(
        ctx: Context[Any, Any], goal_id: GoalId, expected_version: ExpectedVersion = None
    ) -> GoalOut:
        """Call when a goal is achieved (or an action done, a question answered).

        It leaves your context; the next turn notes it as done once.
        """
        await _may_change(ctx, Operation.CHANGE_GOAL, lambda: agents.get_item(tenant, goal_id))
        item = await _tool_call(
            lambda: agents.complete(
                tenant, goal_id, expected_version=expected_version, author=author_in(ctx)
            )
        )
        return GoalOut.of(item)

    @server.tool(title="Note an observation", annotations=WRITE)
    async def note_observation(
        ctx: Context[Any, Any],
        content: Annotated[
            str, Field(min_length=1, max_length=MAX_DETAIL, description="What you noticed.")
        ],
        priority: Priority = 0.5,
    ) -> ScratchOut:
        """Call when you notice something the next turns should keep in mind but that is not
        a durable fact about the user (use `remember` for those): e.g. 'the user seems rushed'.
        """
        require(ctx, needed(Operation.NOTE))
        body = ScratchBody(user_id=tenant.user_id, content=content, priority=priority)
        entry = await _tool_call(
            lambda: agents.note_observation(
                tenant, body.content, priority=body.priority, author=author_in(ctx)
            )
        )
        return ScratchOut.of(entry)

    @server.tool(title="Note a risk", annotations=WRITE)
    async def note_risk(
        ctx: Context[Any, Any],
        content: Annotated[
            str, Field(min_length=1, max_length=MAX_DETAIL, description="The risk, in a sentence.")
        ],
        priority: Priority = 0.8,
    ) -> ScratchOut:
        """Call when you see a risk to the user's goals (a deadline at stake, a conflict, a
        missing approval). It is shown first in your context until resolved.
        """
        require(ctx, needed(Operation.NOTE))
        body = ScratchBody(
            user_id=tenant.user_id, content=content, priority=priority, kind=ScratchKind.RISK_ALERT
        )
        entry = await _tool_call(
            lambda: agents.note_risk(
                tenant, body.content, priority=body.priority, author=author_in(ctx)
            )
        )
        return ScratchOut.of(entry)

    @server.tool(title="Ask for a confirmation", annotations=WRITE)
    async def ask_confirmation(
        ctx: Context[Any, Any],
        question: Annotated[
            str,
            Field(min_length=1, max_length=MAX_DETAIL, description="What the user must confirm."),
        ],
    ) -> ScratchOut:
        """Call before an action that needs the user's yes (a booking, a send, a purchase):
        it stays in your context as awaiting confirmation until you resolve it.
        """
        require(ctx, needed(Operation.NOTE))
        body = ScratchBody(
            user_id=tenant.user_id, content=question, kind=ScratchKind.PENDING_CONFIRMATION
        )
        entry = await _tool_call(
            lambda: agents.ask_confirmation(tenant, body.content, author=author_in(ctx))
        )
        return ScratchOut.of(entry)

    @server.tool(title="Resolve a confirmation", annotations=WRITE)
    async def resolve_confirmation(
        ctx: Context[Any, Any],
        entry_id: Annotated[
            str, Field(min_length=1, max_length=256, description="The `item_id` it returned.")
        ],
        confirmed: Annotated[bool, Field(description="Whether the user said yes.")],
        expected_version: ExpectedVersion = None,
    ) -> ScratchOut:
        """Call once the user answered a pending confirmation (yes or no)."""
        await _may_change(ctx, Operation.RESOLVE, lambda: agents.get_entry(tenant, entry_id))
        body = ResolveBody(
            user_id=tenant.user_id,
            outcome="confirmed" if confirmed else "declined",
            expected_version=expected_version,
        )
        entry = await _tool_call(
            lambda: agents.resolve(
                tenant,
                entry_id,
                outcome=body.outcome,
                expected_version=body.expected_version,
                author=author_in(ctx),
            )
        )
        return ScratchOut.of(entry)
