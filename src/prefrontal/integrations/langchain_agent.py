"""LangChain's ``create_agent``: prefrontal as an agent middleware.

:class:`PrefrontalMiddleware` is a LangChain v1 ``AgentMiddleware``::

    memory = PrefrontalMiddleware(orchestrator, agent_id="atlas", user_id="maya")
    agent = create_agent(model, tools=[...], middleware=[memory])
    await agent.ainvoke({"messages": [...]}, {"configurable": {"thread_id": "s-42"}})

- before every model call (``wrap_model_call``) it starts the turn of the
  newest user message, or reuses it for the run's later calls, and gives
  the model prefrontal's placing: the system part of
  ``bundle.to_messages(user_input=...)`` as the system message (followed
  by the agent's own ``system_prompt``, if it has one), then the rest (the
  recent conversation prefrontal chose, what it labels as data, the
  input) and the run's messages after the input (tool calls and their
  results). Only the model's input changes: the agent's state keeps the
  messages as they were;
- after the agent (``after_agent``) it ends the turn with the reply and
  the run's tool calls, each with its result, which records the exchange.

The session is the run's ``configurable.thread_id``; the user is the
``user_id`` given here (a run naming another in ``configurable.user_id`` is
refused, :class:`~prefrontal.integrations.langgraph.UserMismatch`) or the
run's ``configurable.user_id``. An agent run synchronously (``invoke``)
runs inside ``with memory.blocking():``, as LangGraph's sync turn nodes do.
Memory tools for the model: :func:`~prefrontal.integrations.langgraph.memory_tools`.

Needs the ``langchain`` extra (``pip install 'prefrontal[langchain]'``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, cast

from prefrontal.integrations.extras import require

require("langchain", "langchain")

from langchain.agents.middleware import AgentMiddleware, AgentState  # noqa: E402
from langchain.agents.middleware.types import ModelRequest, ModelResponse  # noqa: E402
from langchain_core.messages import AnyMessage, BaseMessage, SystemMessage  # noqa: E402
from langchain_core.runnables import RunnableConfig  # noqa: E402
from langgraph.config import get_config  # noqa: E402
from langgraph.runtime import Runtime  # noqa: E402

from prefrontal.integrations.langgraph.nodes import PrefrontalTurn, text_of  # noqa: E402
from prefrontal.orchestrator import Orchestrator  # noqa: E402

__all__ = ["PrefrontalMiddleware"]


class PrefrontalMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Starts a prefrontal turn before the model call and records the exchange after the agent."""

    def __init__(
        self,
        orchestrator: Orchestrator,
        *,
        agent_id: str,
        user_id: str | None = None,
        token_budget: int | None = None,
    ) -> None:
        super().__init__()
        self.turn = PrefrontalTurn(
            orchestrator, agent_id=agent_id, user_id=user_id, token_budget=token_budget
        )
        """The turn nodes this middleware runs (their turns, their sync loop)."""

    @contextmanager
    def blocking(self) -> Iterator[PrefrontalMiddleware]:
        """For sync runs: the orchestrator entered on prefrontal's loop thread for the block."""
        with self.turn.blocking():
            yield self

    async def _placed(
        self, request: ModelRequest[Any], config: RunnableConfig
    ) -> ModelRequest[Any]:
        update = await self.turn.before_model({"messages": request.messages}, config)
        given: list[BaseMessage] = update.get("llm_input_messages", [])
        system = [text_of(m) for m in given if isinstance(m, SystemMessage)]
        if request.system_message is not None:
            system.append(text_of(request.system_message))
        rest = [cast(AnyMessage, m) for m in given if not isinstance(m, SystemMessage)]
        return request.override(
            system_message=SystemMessage(content="\n\n".join(system)) if system else None,
            messages=rest,
        )

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """Call the model with prefrontal's placing of the turn (the state is left as is)."""
        return await handler(await self._placed(request, get_config()))

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        """:meth:`awrap_model_call` for an agent run synchronously (inside :meth:`blocking`)."""
        config = get_config()
        placed = self.turn.loop.call(
            lambda: self._placed(request, config), instead="awrap_model_call"
        )
        return handler(placed)

    async def aafter_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """End the turn with the agent's reply and the run's tool calls."""
        await self.turn.after_model(state, get_config())
        return None

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """:meth:`aafter_agent` for an agent run synchronously (inside :meth:`blocking`)."""
        self.turn.after_model_sync(state, get_config())
        return None
