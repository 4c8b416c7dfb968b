"""The MCP tools an agent calls to steer its own state: goals, observations, risks, confirmations.

Registered on the MCP server by :func:`register_agent_tools`. They act for the
server's tenant through ``orchestrator.agents`` and check their arguments
with the same models as the HTTP API (:mod:`prefrontal.serving.agent_models`).
An item is named by the handle the context shows (``Goal #482913 (...)``)
or by its ``item_id``; the agent's own items (from its file) are changed
like the user's, with ``write_shared`` when a key is involved. A stale
``expected_version`` or an unknown handle comes back as a tool error saying
what to do; the change shows in the next turn's context and trace.
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
    Content,
    GoalBody,
    GoalOut,
    GoalUpdateBody,
    ResolveBody,
    ScratchBody,
    ScratchOut,
    Title,
)
from prefrontal.serving.goal_change import NOTHING_TO_CHANGE, change_goal
from prefrontal.serving.mcp_rights import author_in, require
from prefrontal.serving.rights import Operation, needed
from prefrontal.serving.service import Service
from prefrontal.stores.frontal_cortex import FrontalItem, FrontalKind, FrontalStatus
from prefrontal.stores.scratch_page import Observation, ScratchKind
from prefrontal.stores.tenancy import Tenant

T = TypeVar("T")

GoalId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=256,
        description="The goal's handle from your context (`#482913`) or its `item_id`.",
    ),
]
ExpectedVersion = Annotated[
    int | None,
    Field(ge=1, description="The `version` you last saw (optional); fails if it changed since."),
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
        raise ToolError(f"{error}: use a handle (#...) from your context") from None


def require_to_change(
    ctx: Context[Any, Any], item: FrontalItem | Observation, operation: Operation
) -> None:
    """A tool error unless the call may do ``operation`` on ``item`` (``write_shared`` for a
    shared one: :func:`~prefrontal.serving.rights.needed`)."""
    require(ctx, needed(operation, item.scope))


# One nested function per tool, like serving/mcp_tools.py: long, but flat.
def register_agent_tools(server: MCPServer, service: Service, tenant: Tenant) -> None:
    """Add the agent-state tools to ``server``, acting for ``tenant``."""
    agents = service.orchestrator.agents

    @server.tool(title="Set a goal", annotations=WRITE)
    async def set_goal(
        ctx: Context[Any, Any],
        title: Annotated[Title, Field(description="The goal.")],
        detail: Annotated[str, Field(max_length=MAX_DETAIL, description="More, if needed.")] = "",
        priority: Priority = 0.5,
        kind: Annotated[
            Literal["goal", "action", "question"],
            Field(description="Or a pending `action`, an open `question`."),
        ] = "goal",
        blocking: Annotated[bool, Field(description="Other work waits on it.")] = False,
    ) -> GoalOut:
        """Call when the user gives you an objective that takes more than this turn (or you
        commit to an action, or a question must be answered later). It shows in your context,
        with its handle, until done. Returns its `handle` and `version`.
        """
        require(ctx, needed(Operation.ADD_GOAL))
        body = GoalBody(
            user_id=tenant.user_id,
            title=title,
            detail=detail,
            priority=priority,
            kind=kind,
            blocking=blocking,
        )
        extra = body.model_dump(
            include={"detail", "priority", "owner", "tags", "scope", "blocking"}
        )
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
            Literal["active", "blocked", "cancelled"] | None,
            Field(description="`blocked` (you cannot go on), `active`, `cancelled` (abandoned)."),
        ] = None,
        priority: Annotated[float | None, Field(ge=0.0, le=1.0, description="0 to 1.")] = None,
        detail: Annotated[
            str | None, Field(max_length=MAX_DETAIL, description="What stands now, briefly.")
        ] = None,
        expected_version: ExpectedVersion = None,
    ) -> GoalOut:
        """Call when a goal in your context (yours or the agent's) progressed, got blocked or
        unblocked, changed priority, or is abandoned. The next context shows it as you left it.
        """
        require(ctx, needed(Operation.CHANGE_GOAL))
        body = GoalUpdateBody(
            user_id=tenant.user_id,
            progress=progress,
            status=None if status is None else FrontalStatus(status),
            priority=priority,
            detail=detail,
            expected_version=expected_version,
        )
        if not body.changes():
            raise ToolError(NOTHING_TO_CHANGE)
        item = await _tool_call(
            lambda: change_goal(
                agents,
                tenant,
                goal_id,
                body,
                author=author_in(ctx),
                allow=lambda right: require(ctx, right),
            )
        )
        return GoalOut.of(item)

    @server.tool(title="Complete a goal", annotations=WRITE)
    async def complete_goal(
        ctx: Context[Any, Any], goal_id: GoalId, expected_version: ExpectedVersion = None
    ) -> GoalOut:
        """Call when a goal is achieved (an action done, a question answered). It leaves your
        context; the next turn notes it once. Completing it again changes nothing.
        """
        require(ctx, needed(Operation.CHANGE_GOAL))
        found = await _tool_call(lambda: agents.get_item(tenant, goal_id))
        require_to_change(ctx, found, Operation.CHANGE_GOAL)
        item = await _tool_call(
            lambda: agents.complete(
                tenant, found, expected_version=expected_version, author=author_in(ctx)
            )
        )
        return GoalOut.of(item)

    @server.tool(title="Note an observation", annotations=WRITE)
    async def note_observation(
        ctx: Context[Any, Any],
        content: Annotated[Content, Field(description="What you noticed.")],
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
        content: Annotated[Content, Field(description="The risk, in a sentence.")],
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
        question: Annotated[Content, Field(description="What the user must confirm.")],
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
            str,
            Field(min_length=1, max_length=256, description="Its handle (`#482913`) or item_id."),
        ],
        confirmed: Annotated[bool, Field(description="Whether the user said yes.")],
        expected_version: ExpectedVersion = None,
    ) -> ScratchOut:
        """Call once the user answered a pending confirmation (yes or no)."""
        require(ctx, needed(Operation.RESOLVE))
        found = await _tool_call(lambda: agents.get_entry(tenant, entry_id))
        require_to_change(ctx, found, Operation.RESOLVE)
        body = ResolveBody(
            user_id=tenant.user_id,
            outcome="confirmed" if confirmed else "declined",
            expected_version=expected_version,
        )
        entry = await _tool_call(
            lambda: agents.resolve(
                tenant,
                found,
                outcome=body.outcome,
                expected_version=body.expected_version,
                author=author_in(ctx),
            )
        )
        return ScratchOut.of(entry)
