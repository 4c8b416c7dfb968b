"""The OpenAI Agents SDK: a ``Session`` over prefrontal's conversation, and its instructions.

:class:`PrefrontalSession` is one user's session of one agent. It plugs
into three of the SDK's seats::

    session = PrefrontalSession(orchestrator, agent_id="atlas", user_id="maya", session_id="s-42")
    agent = Agent(name="atlas", instructions=session.instructions, model=...)
    result = await Runner.run(agent, "Where is the wedding?", session=session,
                              run_config=session.run_config())

- ``run_config()`` sets ``session_input_callback``: it starts the turn for
  the run's user input and gives the model, as input messages, the
  non-system part of ``bundle.to_messages(user_input=...)`` (the recent
  conversation prefrontal chose, what it labels as data, the input); the
  SDK's raw history is not replayed, as prefrontal's selection holds it
  within the token budget;
- ``instructions`` (dynamic instructions) returns only the system part of
  the turn's ``to_messages()``: text users and tools wrote never takes the
  system seat. It refuses (:class:`SessionNotPlaced`, before the first
  model call) a run whose input is not the one ``run_config()`` placed: a
  run without it would reach the model without the owner's instructions
  and with the stored history replayed raw;
- the ``Session`` protocol: ``get_items`` is the session's conversation in
  prefrontal's conversation store, then the items of the run in progress;
  ``add_items`` collects the run's items, and when the run completes (the
  SDK saves the final assistant message, every tool call answered) calls
  ``end_turn`` with the reply and the tool calls, which records the
  exchange (input and reply as conversation, episodic memory);
  ``pop_item`` and ``clear_session`` act on the run in progress: recorded
  exchanges are memory, removed only by erasure
  (``orchestrator.memory.erase``).

Needs the ``openai-agents`` extra (``pip install 'prefrontal[openai-agents]'``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

from prefrontal.integrations.extras import require

require("agents", "openai-agents")

from agents import Agent, RunConfig, RunContextWrapper  # noqa: E402
from agents.exceptions import UserError  # noqa: E402
from agents.items import TResponseInputItem  # noqa: E402
from agents.memory import SessionABC, SessionSettings  # noqa: E402
from agents.memory.session_settings import resolve_session_limit  # noqa: E402

from prefrontal.exchange.models import EndTurnResult, ToolCall  # noqa: E402
from prefrontal.integrations.turns import FrameworkTurns, split, tool_call  # noqa: E402
from prefrontal.orchestrator import Orchestrator  # noqa: E402
from prefrontal.stores.tenancy import Tenant  # noqa: E402

MAX_ITEMS = 10_000
"""``get_items()`` without a limit returns at most this many stored messages."""


def text_of(item: Any) -> str:
    """The text of a message item (a string content, or its text parts joined)."""
    content = item.get("content") if isinstance(item, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _is_reply(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and item.get("role") == "assistant"
        and item.get("type", "message") == "message"
    )


def tool_calls_of(items: list[Any]) -> list[ToolCall]:
    """The function calls among ``items``, each with its output."""
    outputs = {
        item.get("call_id"): item.get("output")
        for item in items
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    }
    calls = []
    for item in items:
        if not isinstance(item, dict) or item.get("type") != "function_call":
            continue
        try:
            arguments = json.loads(item.get("arguments") or "{}")
        except json.JSONDecodeError:
            arguments = {"arguments": item.get("arguments")}
        output = outputs.get(item.get("call_id"))
        result = output if isinstance(output, str) or output is None else json.dumps(output)
        calls.append(
            tool_call(
                str(item.get("name") or "tool"),
                arguments if isinstance(arguments, dict) else {"arguments": arguments},
                result=result,
            )
        )
    return calls


def _answered(items: list[Any]) -> bool:
    """Whether every function call among ``items`` has its output."""
    called = {
        i.get("call_id") for i in items if isinstance(i, dict) and i.get("type") == "function_call"
    }
    answered = {
        i.get("call_id")
        for i in items
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    }
    return called <= answered


class SessionNotPlaced(UserError):
    """A run reached the model without the input ``PrefrontalSession.run_config()`` places."""


def _pairs(items: list[Any]) -> list[tuple[str, str]]:
    return [
        (str(i.get("role")), text_of(i)) if isinstance(i, dict) else ("", repr(i)) for i in items
    ]


@dataclass
class _Shared:
    """What every session object of one (orchestrator, agent, user, session id) shares."""

    context: list[dict[str, str]] = field(default_factory=list)
    pending: list[TResponseInputItem] = field(default_factory=list)
    turns: FrameworkTurns | None = None


_SHARED: WeakKeyDictionary[Orchestrator, dict[tuple[str, str, str], _Shared]] = WeakKeyDictionary()
"""The run state of each session id, per orchestrator: shared by its session objects."""


class PrefrontalSession(SessionABC):
    """One user's session of one agent, with prefrontal's memory in the SDK's seats.

    Every ``PrefrontalSession`` of one orchestrator, agent, user and session
    id shares one state: the started turn, the run's placed input and its
    items, so a session object made for the same id mid-run sees them.
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        orchestrator: Orchestrator,
        *,
        agent_id: str,
        user_id: str,
        session_id: str,
        token_budget: int | None = None,
        turns: FrameworkTurns | None = None,
    ) -> None:
        self.session_id = session_id
        self.user_id = user_id
        sessions = _SHARED.setdefault(orchestrator, {})
        self._shared = sessions.setdefault((agent_id, user_id, session_id), _Shared())
        if turns is not None:
            self._shared.turns = turns
        elif self._shared.turns is None or self._shared.turns.token_budget != token_budget:
            self._shared.turns = FrameworkTurns(
                orchestrator, agent_id=agent_id, token_budget=token_budget
            )
        self.turns: FrameworkTurns = self._shared.turns
        self._tenant = Tenant(agent_id=agent_id, user_id=user_id)
        self.ended: EndTurnResult | None = None
        """What the last ``end_turn`` of this session returned."""

    # -- the seats ------------------------------------------------------------

    def run_config(self, **settings: Any) -> RunConfig:
        """A ``RunConfig`` whose ``session_input_callback`` starts the turn, with ``settings``."""
        return RunConfig(session_input_callback=self.session_input, **settings)

    async def session_input(
        self, history: list[TResponseInputItem], new_items: list[TResponseInputItem]
    ) -> list[TResponseInputItem]:
        """Start the turn for the run's user input; the model's input: the turn's messages."""
        user_input = "\n\n".join(
            text_of(item)
            for item in new_items
            if isinstance(item, dict) and item.get("role", "user") == "user"
        ).strip()
        if not user_input:
            raise ValueError("the run has no user input to start a turn for")
        result = await self.turns.start(self.user_id, self.session_id, user_input)
        placed = split(result.bundle.to_messages(user_input=user_input))
        self._shared.context = [
            {"role": m["role"], "content": m["content"]} for m in placed.messages
        ]
        self._shared.pending = []
        self.ended = None
        return [dict(item) for item in self._shared.context]  # type: ignore[misc]

    async def instructions(self, context: RunContextWrapper[Any], agent: Agent[Any]) -> str:
        """The system part of the turn's messages; refuses a run this session did not place.

        Raises :class:`SessionNotPlaced` when no turn is started, or when the
        run's input does not begin with what :meth:`session_input` placed
        (a run without ``run_config=session.run_config()``).
        """
        result = self.turns.pending(self.user_id, self.session_id)
        placed = _pairs(list(self._shared.context))
        given = _pairs(list(context.turn_input))
        if result is None or not placed or given[: len(placed)] != placed:
            raise SessionNotPlaced(
                "a PrefrontalSession run needs run_config=session.run_config(): without it "
                "the model would get neither the owner's instructions nor a fenced history"
            )
        return split(result.bundle.to_messages()).instructions

    # -- the Session protocol -------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The stored conversation, oldest first, then the run's items: the newest ``limit``.

        ``limit`` as the SDK's sessions read it: ``None`` takes
        ``session_settings.limit`` (``None`` there: every item, up to
        :data:`MAX_ITEMS` stored ones); a positive limit the newest that
        many; ``0`` none; a negative one every item.
        """
        wanted = resolve_session_limit(limit, self.session_settings)
        if wanted == 0:
            return []
        stored = await self.turns.orchestrator.stores.conversation.recent(
            self._tenant,
            limit=wanted if wanted is not None and wanted > 0 else MAX_ITEMS,
            session_id=self.session_id,
        )
        items: list[TResponseInputItem] = [
            {"role": str(turn.role.value), "content": turn.content}  # type: ignore[misc]
            for turn in stored
            if turn.role.value in ("user", "assistant")
        ]
        items.extend(self._shared.pending)
        return items[-wanted:] if wanted is not None and wanted > 0 else items

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Collect the run's items; once the reply is in, end the turn with it and the tools."""
        for item in items:
            if isinstance(item, dict) and item in self._shared.context:
                continue  # the turn's own context, given as input: already memory
            self._shared.pending.append(item)
        last = self._shared.pending[-1] if self._shared.pending else None
        if _is_reply(last) and _answered(list(self._shared.pending)):
            self.ended = await self.turns.end(
                self.user_id,
                self.session_id,
                text_of(last),
                tool_calls_of(list(self._shared.pending)),
            )
            self._shared.pending = []
            self._shared.context = []

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the newest item of the run in progress (``None`` when it has none)."""
        return self._shared.pending.pop() if self._shared.pending else None

    def close(self) -> None:
        """Nothing to release, unlike ``SQLiteSession.close``: the stores are the orchestrator's."""

    async def clear_session(self) -> None:
        """Forget the run in progress (recorded exchanges stay memory)."""
        self._shared.pending = []
        self._shared.context = []
