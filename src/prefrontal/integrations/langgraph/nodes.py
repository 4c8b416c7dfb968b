"""The model's input and the end of a turn in a graph: ``start_turn`` and ``end_turn``.

:class:`PrefrontalTurn` gives:

- :meth:`~PrefrontalTurn.model_input`: runs ``start_turn`` for the newest
  user message of the graph's state and returns the model's input: the
  bundle's messages (``bundle.to_messages(user_input=...)``: prefrontal's
  system message, the recent conversation, the input), then the messages
  of this run after the input (the model's tool calls and their results),
  so the state's messages are left as they are;
- :attr:`~PrefrontalTurn.prompt`: that input as a runnable, sync and async,
  for ``create_react_agent``'s ``prompt``: it runs inside the model's node,
  before the model, with no node of its own;
- :meth:`~PrefrontalTurn.before_model`: the same input as a node's update,
  ``{"llm_input_messages": ...}``: ``create_react_agent``'s
  ``pre_model_hook`` contract (a node of its own before every model call);
  in a hand-built ``StateGraph`` (state :class:`PrefrontalState`) the model
  node reads ``state["llm_input_messages"]``;
- :meth:`~PrefrontalTurn.after_model`: once the model answers without tool
  calls, runs ``end_turn`` with the reply and the run's tool calls (each with
  its tool's result). ``create_react_agent``'s ``post_model_hook``, or the
  node after the model.

A graph run synchronously (``graph.invoke``) takes
:meth:`~PrefrontalTurn.before_model_sync` and
:meth:`~PrefrontalTurn.after_model_sync` instead (:attr:`~PrefrontalTurn.prompt`
serves both), inside ``with
turn.blocking():``, which enters the orchestrator on prefrontal's own event
loop thread (:class:`~prefrontal.integrations.blocking.BlockingLoop`) for the
block; the turns run there, whichever thread LangGraph calls the nodes from
(parallel nodes included). A sync node called on a thread whose event loop
is running (an async caller) raises
:class:`~prefrontal.integrations.blocking.SyncFromRunningLoop` rather than
block that loop: the async nodes are the ones to use there.

The session is the run's ``configurable.thread_id``. The user is the
``user_id`` fixed when the nodes were made; a run whose
``configurable.user_id`` names another user is refused
(:class:`UserMismatch`), so a run's configuration never opens another
user's memory. Nodes made without a ``user_id`` take the run's
``configurable.user_id``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NotRequired, TypedDict

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import Runnable, RunnableConfig, ensure_config
from langgraph.graph import MessagesState

from prefrontal.bundle.messages import Message
from prefrontal.exchange.models import ToolCall
from prefrontal.integrations.blocking import BlockingLoop
from prefrontal.integrations.turns import FrameworkTurns, tool_call
from prefrontal.orchestrator import Orchestrator


class PrefrontalState(MessagesState):
    """A graph state for a hand-built graph: the messages, and the model's input for this call."""

    llm_input_messages: NotRequired[list[AnyMessage]]


class Update(TypedDict, total=False):
    """What the nodes return to the graph."""

    llm_input_messages: list[BaseMessage]


def to_langchain(messages: Sequence[Message]) -> list[BaseMessage]:
    """Chat messages as LangChain messages: only ``system`` becomes a ``SystemMessage``."""
    converted: list[BaseMessage] = []
    for message in messages:
        if message["role"] == "system":
            converted.append(SystemMessage(content=message["content"]))
        elif message["role"] == "assistant":
            converted.append(AIMessage(content=message["content"]))
        else:
            converted.append(HumanMessage(content=message["content"]))
    return converted


def text_of(message: BaseMessage) -> str:
    """A message's text (the text parts of a multi-part content)."""
    if isinstance(message.content, str):
        return message.content
    parts = [
        part if isinstance(part, str) else str(part.get("text", ""))
        for part in message.content
        if isinstance(part, str) or part.get("type") == "text"
    ]
    return "".join(parts)


def _last_human(messages: Sequence[BaseMessage]) -> int:
    for index in range(len(messages) - 1, -1, -1):
        if isinstance(messages[index], HumanMessage):
            return index
    raise ValueError("the graph's state holds no user message to start a turn for")


def tool_calls_of(messages: Sequence[BaseMessage]) -> list[ToolCall]:
    """The tool calls the model made in ``messages``, each with its tool's result or error."""
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    calls: list[ToolCall] = []
    for message in messages:
        if not isinstance(message, AIMessage):
            continue
        for call in message.tool_calls:
            answer = results.get(call.get("id") or "")
            text = None if answer is None else text_of(answer)
            failed = answer is not None and answer.status == "error"
            calls.append(
                tool_call(
                    call["name"],
                    call["args"],
                    result=None if failed else text,
                    error=text if failed else None,
                )
            )
    return calls


class UserMismatch(ValueError):
    """A run's ``configurable.user_id`` names a user other than the one the nodes serve."""


def run_user(config: RunnableConfig, fixed: str | None) -> str | None:
    """The run's user: ``fixed`` when given (a run naming another is refused), else the run's."""
    configurable = config.get("configurable") or {}
    asked = configurable.get("user_id")
    if fixed is not None and asked is not None and str(asked) != fixed:
        raise UserMismatch(
            f"this PrefrontalTurn serves user {fixed!r}; the run's "
            f"configurable.user_id names {str(asked)!r}"
        )
    user_id = fixed if fixed is not None else asked
    return None if not user_id else str(user_id)


def run_thread(config: RunnableConfig) -> str | None:
    """The run's ``configurable.thread_id`` (its session), if it has one."""
    thread = (config.get("configurable") or {}).get("thread_id")
    return None if not thread else str(thread)


class ModelInput(Runnable[Any, list[BaseMessage]]):
    """A turn's :meth:`PrefrontalTurn.model_input` as a runnable, for ``invoke`` and ``ainvoke``.

    A plain runnable (no run of its own in the callbacks): the step before
    the model in ``create_react_agent``'s model node.
    """

    def __init__(self, turn: PrefrontalTurn) -> None:
        self.turn = turn

    def invoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[BaseMessage]:
        """:meth:`PrefrontalTurn.model_input_sync` of the state ``input``."""
        return self.turn.model_input_sync(input, ensure_config(config))

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[BaseMessage]:
        """:meth:`PrefrontalTurn.model_input` of the state ``input``."""
        return await self.turn.model_input(input, ensure_config(config))


class PrefrontalTurn:
    """Starts a prefrontal turn before the model and ends it after, inside a graph."""

    def __init__(
        self,
        orchestrator: Orchestrator,
        *,
        agent_id: str,
        user_id: str | None = None,
        token_budget: int | None = None,
    ) -> None:
        self.turns = FrameworkTurns(orchestrator, agent_id=agent_id, token_budget=token_budget)
        self.user_id = user_id
        self.loop = BlockingLoop()
        """The event loop thread the sync nodes run the turns on."""
        self.prompt: Runnable[Any, list[BaseMessage]] = ModelInput(self)
        """:meth:`model_input` as ``create_react_agent``'s ``prompt`` (sync and async runs)."""

    def _ids(self, config: RunnableConfig) -> tuple[str, str]:
        user_id = run_user(config, self.user_id)
        session_id = run_thread(config)
        if not user_id or not session_id:
            raise ValueError("a prefrontal turn needs configurable user_id and thread_id")
        return user_id, session_id

    @contextmanager
    def blocking(self) -> Iterator[PrefrontalTurn]:
        """For sync runs: the orchestrator entered on :attr:`loop`'s thread for the block.

        Leaving drains the turns' writes, closes the stores and stops the thread.
        """
        try:
            with self.loop.entered(self.turns.orchestrator):
                yield self
        finally:
            self.loop.close()

    def model_input_sync(self, state: Any, config: RunnableConfig) -> list[BaseMessage]:
        """:meth:`model_input` for a graph run synchronously (inside :meth:`blocking`)."""
        return self.loop.call(lambda: self.model_input(state, config), instead="model_input")

    def before_model_sync(self, state: Any, config: RunnableConfig) -> Update:
        """:meth:`before_model` for a graph run synchronously (inside :meth:`blocking`)."""
        return self.loop.call(lambda: self.before_model(state, config), instead="before_model")

    def after_model_sync(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        """:meth:`after_model` for a graph run synchronously (inside :meth:`blocking`)."""
        return self.loop.call(lambda: self.after_model(state, config), instead="after_model")

    async def model_input(self, state: Any, config: RunnableConfig) -> list[BaseMessage]:
        """Start (or reuse) the turn of the newest user message; the model's input messages.

        ``state`` is any graph state with ``messages`` (LangChain messages);
        they are read, never changed.
        """
        messages: Sequence[BaseMessage] = state["messages"]
        index = _last_human(messages)
        user_input = text_of(messages[index])
        user_id, session_id = self._ids(config)
        await self.turns.start(user_id, session_id, user_input)
        framed = to_langchain(self.turns.messages(user_id, session_id, user_input))
        framed.extend(messages[index + 1 :])
        return framed

    async def before_model(self, state: Any, config: RunnableConfig) -> Update:
        """:meth:`model_input` as a node's update: ``{"llm_input_messages": ...}``."""
        return {"llm_input_messages": await self.model_input(state, config)}

    async def after_model(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        """End the turn once the model's newest message is a reply without tool calls."""
        messages: Sequence[BaseMessage] = state["messages"]
        last = messages[-1] if messages else None
        if not isinstance(last, AIMessage) or last.tool_calls:
            return {}
        user_id, session_id = self._ids(config)
        run = messages[_last_human(messages) + 1 :]
        await self.turns.end(user_id, session_id, text_of(last), tool_calls_of(run))
        return {}
