"""Memory tools for a LangGraph (or LangChain) agent's model: remember, recall, update_goal.

LangMem-style tools over :class:`~prefrontal.integrations.memory_tools.MemoryTools`::

    tools = memory_tools(MemoryTools(orchestrator, agent_id="atlas"), user_id="maya")
    agent = create_react_agent(model, tools=[*tools, ...], pre_model_hook=turn.before_model)

Each call's user is the ``user_id`` fixed here (a run whose
``configurable.user_id`` names another is refused, as
:class:`~prefrontal.integrations.langgraph.PrefrontalTurn` refuses it), or
the run's ``configurable.user_id``; ``recall``'s session is the run's
``configurable.thread_id``. A refusal (a right the key lacks, an unknown
goal) comes back to the model as the tool's error message
(``ToolException``, ``status="error"``); the results are fenced text.
The tools are async; with ``loop`` (a sync graph's
:attr:`PrefrontalTurn.loop <prefrontal.integrations.langgraph.PrefrontalTurn.loop>`)
they run synchronously too, on that loop's thread.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Annotated, Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import Field

from prefrontal.integrations.blocking import BlockingLoop
from prefrontal.integrations.langgraph.nodes import run_thread, run_user
from prefrontal.integrations.memory_tools import (
    RECALL_DOC,
    REMEMBER_DOC,
    UPDATE_GOAL_DOC,
    MemoryTools,
    ToolRefused,
)

__all__ = ["memory_tools"]


def memory_tools(
    tools: MemoryTools, *, user_id: str | None = None, loop: BlockingLoop | None = None
) -> list[BaseTool]:
    """``remember``, ``recall`` and ``update_goal`` as LangChain tools acting through ``tools``."""

    def user(config: RunnableConfig) -> str:
        found = run_user(config, user_id)
        if found is None:
            raise ToolException("no user: the run needs configurable.user_id")
        return found

    async def guarded(call: Callable[[], Awaitable[str]]) -> str:
        try:
            return await call()
        except ToolRefused as refused:
            raise ToolException(str(refused)) from None

    async def remember(
        content: Annotated[str, Field(description="The memory, as one sentence.")],
        config: RunnableConfig,
        importance: Annotated[float, Field(ge=0, le=1, description="0 to 1 (vital).")] = 0.5,
    ) -> str:
        return await guarded(lambda: tools.remember(user(config), content, importance=importance))

    async def recall(
        query: Annotated[str, Field(description="What to look for.")],
        config: RunnableConfig,
        top_k: Annotated[int, Field(ge=1, le=50, description="At most this many.")] = 5,
    ) -> str:
        return await guarded(
            lambda: tools.recall(user(config), query, session_id=run_thread(config), top_k=top_k)
        )

    async def update_goal(
        goal_id: Annotated[str, Field(description="The goal's handle (#482913) or item id.")],
        config: RunnableConfig,
        progress: Annotated[float | None, Field(ge=0, le=1)] = None,
        status: Literal["active", "blocked", "cancelled"] | None = None,
        detail: str | None = None,
        expected_version: int | None = None,
    ) -> str:
        return await guarded(
            lambda: tools.update_goal(
                user(config),
                goal_id,
                progress=progress,
                status=status,
                detail=detail,
                expected_version=expected_version,
            )
        )

    made: list[BaseTool] = []
    for coroutine, description in (
        (remember, REMEMBER_DOC),
        (recall, RECALL_DOC),
        (update_goal, UPDATE_GOAL_DOC),
    ):
        tool = StructuredTool.from_function(
            coroutine=coroutine,
            name=coroutine.__name__,
            description=description,
            handle_tool_error=True,
        )
        if loop is not None:
            tool.func = _in(loop, coroutine)
        made.append(tool)
    return made


def _in(loop: BlockingLoop, coroutine: Callable[..., Awaitable[str]]) -> Callable[..., str]:
    """``coroutine`` as a sync function run on ``loop``'s thread."""

    @functools.wraps(coroutine)
    def sync(*args: object, **kwargs: object) -> str:
        return loop.call(lambda: coroutine(*args, **kwargs), instead=coroutine.__name__)

    return sync
