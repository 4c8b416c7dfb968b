"""The OpenAI Agents SDK: memory tools for the model (remember, recall, update_goal).

Function tools over :class:`~prefrontal.integrations.memory_tools.MemoryTools`::

    tools = memory_function_tools(MemoryTools(orchestrator, agent_id="atlas"))
    agent = Agent(name="atlas", tools=[*tools, ...], instructions=session.instructions, ...)
    await Runner.run(agent, text, session=session, context=session, run_config=...)

Each call's user and session are the ``user_id`` and ``session_id`` given
here, else those of the run's context (any object with ``user_id`` and
``session_id``, such as a
:class:`~prefrontal.integrations.openai_agents.PrefrontalSession`). A
refusal (a right the key lacks, an unknown goal) reaches the model as the
tool's output, its one sentence (the SDK's ``failure_error_function``);
the results are fenced text.

Needs the ``openai-agents`` extra (``pip install 'prefrontal[openai-agents]'``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from prefrontal.integrations.extras import require

require("agents", "openai-agents")

from agents import FunctionTool, RunContextWrapper, function_tool  # noqa: E402
from pydantic import Field  # noqa: E402

from prefrontal.integrations.memory_tools import (  # noqa: E402
    RECALL_DOC,
    REMEMBER_DOC,
    UPDATE_GOAL_DOC,
    MemoryTools,
    ToolRefused,
)

__all__ = ["memory_function_tools", "refusal_text"]


def refusal_text(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """What the model is told when a memory tool fails: a refusal's sentence, else nothing more."""
    if isinstance(error, ToolRefused):
        return f"Refused: {error}"
    return "An error occurred while running the tool. Please try again."


def memory_function_tools(
    tools: MemoryTools, *, user_id: str | None = None, session_id: str | None = None
) -> list[FunctionTool]:
    """``remember``, ``recall`` and ``update_goal`` as the SDK's function tools."""

    def ids(ctx: RunContextWrapper[Any]) -> tuple[str, str | None]:
        user = user_id or getattr(ctx.context, "user_id", None)
        session = session_id or getattr(ctx.context, "session_id", None)
        if not user:
            raise ToolRefused("no user: give user_id, or run with a context that has one")
        return str(user), None if session is None else str(session)

    @function_tool(description_override=REMEMBER_DOC, failure_error_function=refusal_text)
    async def remember(
        ctx: RunContextWrapper[Any],
        content: Annotated[str, Field(description="The memory, as one sentence.")],
        importance: Annotated[float, Field(ge=0, le=1, description="0 to 1 (vital).")] = 0.5,
    ) -> str:
        user, _ = ids(ctx)
        return await tools.remember(user, content, importance=importance)

    @function_tool(description_override=RECALL_DOC, failure_error_function=refusal_text)
    async def recall(
        ctx: RunContextWrapper[Any],
        query: Annotated[str, Field(description="What to look for.")],
        top_k: Annotated[int, Field(ge=1, le=50, description="At most this many.")] = 5,
    ) -> str:
        user, session = ids(ctx)
        return await tools.recall(user, query, session_id=session, top_k=top_k)

    @function_tool(description_override=UPDATE_GOAL_DOC, failure_error_function=refusal_text)
    async def update_goal(
        ctx: RunContextWrapper[Any],
        goal_id: Annotated[str, Field(description="The goal's handle (#482913) or item id.")],
        progress: Annotated[float | None, Field(ge=0, le=1)] = None,
        status: Literal["active", "blocked", "cancelled"] | None = None,
        detail: str | None = None,
        expected_version: int | None = None,
    ) -> str:
        user, _ = ids(ctx)
        return await tools.update_goal(
            user,
            goal_id,
            progress=progress,
            status=status,
            detail=detail,
            expected_version=expected_version,
        )

    return [remember, recall, update_goal]
