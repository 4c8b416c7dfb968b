"""pydantic-ai: instructions and a history processor fed by the turn's bundle; the run recorded.

:class:`PrefrontalMemory` serves one agent's runs; the user and session of
a run come from its ``deps`` (any object with ``user_id`` and
``session_id``, such as :class:`PrefrontalDeps`)::

    memory = PrefrontalMemory(orchestrator, agent_id="atlas")
    agent = Agent(model, instructions=memory.instructions, capabilities=memory.capabilities())
    result = await agent.run("Where is the wedding?", deps=PrefrontalDeps("maya", "s-42"))

- :meth:`~PrefrontalMemory.instructions` (an instructions function) starts
  the turn for the run's prompt, or reuses it, and returns only the system
  part of ``bundle.to_messages()``: text users and tools wrote never takes
  the system seat;
- :meth:`~PrefrontalMemory.history` replaces the history before the run's
  prompt with the rest of ``to_messages(user_input=...)`` (the recent
  conversation prefrontal chose, what it labels as data) and the prompt as
  ``to_messages`` words it, keeping the run's own messages after it (tool
  calls and their returns). :meth:`~PrefrontalMemory.capabilities` applies
  it to each model request (a ``before_model_request`` hook), so only the
  model's input changes: ``result.all_messages()`` stays the run's own
  transcript (a ``ProcessHistory`` processor would rewrite it);
- after the run (an ``after_run`` hook), ``end_turn`` records the output
  and the run's tool calls with their returns; a run that fails (an
  ``on_run_error`` hook) is recorded too, its user message with the reply
  :data:`FAILED_REPLY` and the outcome ``failed: <error type>``, and the
  error goes on;
- :meth:`~PrefrontalMemory.toolset` (``Agent(toolsets=[...])``): the memory
  tools for the model, ``remember``, ``recall`` and ``update_goal``
  (:class:`~prefrontal.integrations.memory_tools.MemoryTools`: the MCP
  tools' rights with a ``grant``, fenced results) for the run's user and
  session; a refusal reaches the model as a retry prompt with its sentence
  (``ModelRetry``).

Needs the ``pydantic-ai`` extra (``pip install 'prefrontal[pydantic-ai]'``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from prefrontal.integrations.extras import require

require("pydantic_ai", "pydantic-ai")

import anyio  # noqa: E402
from pydantic_ai import ModelRetry, RunContext  # noqa: E402
from pydantic_ai.capabilities import Hooks  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestContext  # noqa: E402
from pydantic_ai.run import AgentRunResult  # noqa: E402
from pydantic_ai.toolsets import FunctionToolset  # noqa: E402

from prefrontal.bundle.messages import Message  # noqa: E402
from prefrontal.exchange.models import ToolCall  # noqa: E402
from prefrontal.integrations.memory_tools import (  # noqa: E402
    RECALL_DOC,
    REMEMBER_DOC,
    UPDATE_GOAL_DOC,
    MemoryTools,
    ToolRefused,
)
from prefrontal.integrations.turns import FrameworkTurns, Placed, tool_call  # noqa: E402
from prefrontal.orchestrator import Orchestrator  # noqa: E402
from prefrontal.serving.keys import KeyGrant  # noqa: E402

FAILED_REPLY = "(no reply: the run failed)"
"""The reply a failed run is recorded with (prefrontal's words; the error's text is never kept)."""


@dataclass(frozen=True)
class PrefrontalDeps:
    """A run's dependencies naming its user and session."""

    user_id: str
    session_id: str


def prompt_text(prompt: str | Sequence[Any] | None) -> str:
    """A run's prompt as text (the text parts of a multi-part prompt)."""
    if prompt is None:
        return ""
    if isinstance(prompt, str):
        return prompt
    return "\n".join(part for part in prompt if isinstance(part, str))


def to_model_messages(messages: Sequence[Message]) -> list[ModelMessage]:
    """Chat messages as pydantic-ai messages: assistant turns as responses, others as prompts."""
    converted: list[ModelMessage] = []
    for message in messages:
        if message["role"] == "assistant":
            converted.append(ModelResponse(parts=[TextPart(content=message["content"])]))
        else:
            converted.append(ModelRequest(parts=[UserPromptPart(content=message["content"])]))
    return converted


def _prompt_index(messages: Sequence[ModelMessage]) -> int | None:
    """The index of the newest request holding a user prompt (the run's prompt)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, ModelRequest) and any(
            isinstance(part, UserPromptPart) for part in message.parts
        ):
            return index
    return None


def tool_calls_of(messages: Sequence[ModelMessage]) -> list[ToolCall]:
    """The tool calls of ``messages``, each with its tool's return."""
    returns = {
        part.tool_call_id: part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    }
    calls: list[ToolCall] = []
    for message in messages:
        if not isinstance(message, ModelResponse):
            continue
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                answer = returns.get(part.tool_call_id)
                result = None if answer is None else answer.model_response_str()
                calls.append(tool_call(part.tool_name, part.args_as_dict(), result=result))
    return calls


class PrefrontalMemory:
    """Prefrontal's turns in a pydantic-ai agent: instructions, history, recording."""

    def __init__(
        self, orchestrator: Orchestrator, *, agent_id: str, token_budget: int | None = None
    ) -> None:
        self.turns = FrameworkTurns(orchestrator, agent_id=agent_id, token_budget=token_budget)

    def toolset(self, *, grant: KeyGrant | None = None) -> FunctionToolset[Any]:
        """The memory tools for the model, for each run's user (``grant``: the key's rights)."""
        orchestrator = self.turns.orchestrator
        tools = MemoryTools(orchestrator, agent_id=self.turns.agent_id, grant=grant)
        toolset: FunctionToolset[Any] = FunctionToolset()

        async def guarded(call: Awaitable[str]) -> str:
            try:
                return await call
            except ToolRefused as refused:
                raise ModelRetry(str(refused)) from None

        async def remember(ctx: RunContext[Any], content: str, importance: float = 0.5) -> str:
            user_id, _ = self._ids(ctx)
            return await guarded(tools.remember(user_id, content, importance=importance))

        async def recall(ctx: RunContext[Any], query: str, top_k: int = 5) -> str:
            user_id, session_id = self._ids(ctx)
            return await guarded(tools.recall(user_id, query, session_id=session_id, top_k=top_k))

        async def update_goal(
            ctx: RunContext[Any],
            goal_id: str,
            progress: float | None = None,
            status: Literal["active", "blocked", "cancelled"] | None = None,
            detail: str | None = None,
            expected_version: int | None = None,
        ) -> str:
            user_id, _ = self._ids(ctx)
            return await guarded(
                tools.update_goal(
                    user_id,
                    goal_id,
                    progress=progress,
                    status=status,
                    detail=detail,
                    expected_version=expected_version,
                )
            )

        toolset.add_function(remember, description=REMEMBER_DOC)
        toolset.add_function(recall, description=RECALL_DOC)
        toolset.add_function(update_goal, description=UPDATE_GOAL_DOC)
        return toolset

    def capabilities(self) -> list[Any]:
        """The capabilities to give the agent: the model's input per request, the recording."""
        return [
            Hooks(
                before_model_request=self.before_model_request,
                after_run=self.after_run,
                run_error=self.on_run_error,
            )
        ]

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """The request with :meth:`history` of its messages (the run's transcript is left as is).

        The request's messages are replaced by a new list: the run's history
        (``result.all_messages()``) is not written through it.
        """
        request_context.messages = await self.history(ctx, list(request_context.messages))
        return request_context

    @staticmethod
    def _ids(ctx: RunContext[Any]) -> tuple[str, str]:
        user_id = getattr(ctx.deps, "user_id", None)
        session_id = getattr(ctx.deps, "session_id", None)
        if not user_id or not session_id:
            raise ValueError("a prefrontal turn needs deps with user_id and session_id")
        return str(user_id), str(session_id)

    async def _placed(self, ctx: RunContext[Any]) -> Placed:
        user_input = prompt_text(ctx.prompt).strip()
        if not user_input:
            raise ValueError("the run has no prompt to start a turn for")
        user_id, session_id = self._ids(ctx)
        await self.turns.start(user_id, session_id, user_input)
        return self.turns.placed(user_id, session_id, user_input)

    async def instructions(self, ctx: RunContext[Any]) -> str:
        """The system part of the turn's messages."""
        return (await self._placed(ctx)).instructions

    async def history(
        self, ctx: RunContext[Any], messages: list[ModelMessage]
    ) -> list[ModelMessage]:
        """The turn's messages in place of the history before the run's prompt, the run's after."""
        placed = await self._placed(ctx)
        index = _prompt_index(messages)
        if index is None or not placed.messages:
            return messages
        request = messages[index]
        assert isinstance(request, ModelRequest)
        *context, last = placed.messages
        others = [part for part in request.parts if not isinstance(part, UserPromptPart)]
        prompt = dataclasses.replace(
            request, parts=[*others, UserPromptPart(content=last["content"])]
        )
        return [*to_model_messages(context), prompt, *messages[index + 1 :]]

    async def after_run(
        self, ctx: RunContext[Any], *, result: AgentRunResult[Any]
    ) -> AgentRunResult[Any]:
        """End the turn with the run's output and its tool calls."""
        user_id, session_id = self._ids(ctx)
        new = result.new_messages()
        await self.turns.end(user_id, session_id, str(result.output), tool_calls_of(new))
        return result

    async def on_run_error(self, ctx: RunContext[Any], *, error: BaseException) -> Any:
        """Record a failed run's user message, with :data:`FAILED_REPLY`; re-raise the error.

        The outcome is ``failed: <error type>``.

        A cancelled run is not recorded: the cancellation goes on at once.
        """
        user_id = getattr(ctx.deps, "user_id", None)
        session_id = getattr(ctx.deps, "session_id", None)
        cancelled = isinstance(error, anyio.get_cancelled_exc_class())
        if user_id and session_id and not cancelled:
            failed = f"failed: {type(error).__name__}"
            await self.turns.end(str(user_id), str(session_id), FAILED_REPLY, (), outcome=failed)
        raise error
