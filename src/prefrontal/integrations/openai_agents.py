"""The OpenAI Agents SDK: a ``Session`` over prefrontal's stores, and its instructions.

:class:`PrefrontalSession` is one user's session of one agent. It plugs
into three of the SDK's seats::

    session = PrefrontalSession(orchestrator, agent_id="atlas", user_id="maya", session_id="s-42")
    agent = Agent(name="atlas", instructions=session.instructions, model=...)
    result = await Runner.run(agent, "Where is the wedding?", session=session,
                              run_config=session.run_config())

- the ``Session`` protocol, as ``SQLiteSession`` keeps it: every item the
  SDK (or anyone) adds is kept as given (messages with their content parts,
  function calls and their outputs, reasoning items, ids), in order, in the
  stores' session-items store (:mod:`prefrontal.stores.session_items`: in
  memory, the SQLite file, the PostgreSQL schema), so every session object
  of one id, in any process over the same database, reads the same items;
  ``get_items(limit)``, ``pop_item`` and ``clear_session`` read and change
  them as ``SQLiteSession`` does. They are the user's records: erasing the
  user (``orchestrator.memory.erase``) removes them;
- ``run_config()`` sets ``session_input_callback``: it starts the turn for
  the run's user input and gives the model prefrontal's context (the
  non-system messages of ``bundle.to_messages()``: what it labels as data,
  and the recent conversation it chose within the token budget), then the
  run's input items as given. With a ``session_input_callback`` of the
  caller's own, or a ``SessionSettings.limit`` (on the session or in the
  run config), the caller chooses the history instead: the model gets
  prefrontal's data, then what the callback returns from the history the
  SDK read with that limit (every item as stored) and the new input;
- ``instructions`` (dynamic instructions) returns only the system part of
  the turn's ``to_messages()``: text users and tools wrote never takes the
  system seat. It refuses (:class:`SessionNotPlaced`, before the first
  model call) a run whose input does not hold what ``run_config()``
  placed: a run without it would reach the model without the owner's
  instructions and with the stored history replayed raw.

In a placed run, when the SDK saves the final assistant message (every
tool call answered), ``end_turn`` records the exchange: the input and the
reply as conversation, the tool calls, episodic memory. Recorded exchanges
are memory, apart from the session's items: ``pop_item`` and
``clear_session`` change the items only. A run without ``run_config()``
whose agent does not use ``session.instructions`` works as with any SDK
session (the history replayed raw) and records no turn.

Needs the ``openai-agents`` extra (``pip install 'prefrontal[openai-agents]'``).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast
from weakref import WeakKeyDictionary

from prefrontal.integrations.extras import require

require("agents", "openai-agents")

from agents import Agent, RunConfig, RunContextWrapper  # noqa: E402
from agents.exceptions import UserError  # noqa: E402
from agents.items import TResponseInputItem  # noqa: E402
from agents.memory import SessionABC, SessionSettings  # noqa: E402
from agents.memory.session_settings import (  # noqa: E402
    coerce_session_settings,
    resolve_session_limit,
)

from prefrontal.bundle.messages import data_text  # noqa: E402
from prefrontal.exchange.models import EndTurnResult, ToolCall  # noqa: E402
from prefrontal.integrations.turns import FrameworkTurns, tool_call  # noqa: E402
from prefrontal.orchestrator import Orchestrator  # noqa: E402
from prefrontal.stores.working_memory import SessionKey  # noqa: E402
from prefrontal.turn import TurnResult  # noqa: E402

Items = list[TResponseInputItem]
InputCallback = Callable[[Items, Items], Any]
"""A ``session_input_callback``: ``(history, new_items)`` to the model's input (or awaitable)."""


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


def tool_calls_of(items: Sequence[Any]) -> list[ToolCall]:
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


def _answered(items: Sequence[Any]) -> bool:
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


def _said(items: Sequence[Any]) -> list[tuple[str, str]]:
    """The messages among ``items`` as ``(role, text)`` pairs (other items left out)."""
    return [
        (str(i.get("role")), text_of(i))
        for i in items
        if isinstance(i, dict) and i.get("role") in ("user", "assistant", "system", "developer")
    ]


def _within(placed: list[tuple[str, str]], given: list[tuple[str, str]]) -> bool:
    """Whether ``placed`` occurs in ``given`` in order (other messages may come between)."""
    found = iter(given)
    return all(any(pair == other for other in found) for pair in placed)


def _take(pool: list[dict[str, str]], item: Any) -> bool:
    """Remove one item equal to ``item`` from ``pool``; whether there was one."""
    for index, candidate in enumerate(pool):
        if candidate == item:
            del pool[index]
            return True
    return False


@dataclass
class _Shared:
    """The run in progress of one (orchestrator, agent, user, session id), in this process."""

    placed: list[dict[str, str]] = field(default_factory=list)
    """The context messages the callback placed before the run's input."""
    unsaved: list[dict[str, str]] = field(default_factory=list)
    """Those of them the SDK has not offered to save yet (never saved: they are not items)."""
    run_items: Items = field(default_factory=list)
    """The items saved during the placed run, until its turn ends."""
    user_input: str = ""
    """The text the run's turn was started for."""
    turns: FrameworkTurns | None = None


_SHARED: WeakKeyDictionary[Orchestrator, dict[tuple[str, str, str], _Shared]] = WeakKeyDictionary()
"""The run state of each session id, per orchestrator: shared by its session objects."""


class PrefrontalSession(SessionABC):
    """One user's session of one agent, with prefrontal's memory in the SDK's seats.

    The items are in the stores, shared by every session object of the id
    (in any process on a durable backend). Every ``PrefrontalSession`` of one
    orchestrator, agent, user and session id in a process also shares the
    run in progress: the started turn and what was placed for it.
    ``session_settings`` (a ``SessionSettings`` or its dictionary) as
    ``SQLiteSession`` takes it; its ``limit`` is the default of
    :meth:`get_items`.
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
        session_settings: SessionSettings | dict[str, Any] | None = None,
    ) -> None:
        self.session_id = session_id
        self.user_id = user_id
        self.session_settings = (
            SessionSettings()
            if session_settings is None
            else coerce_session_settings(session_settings)
        )
        sessions = _SHARED.setdefault(orchestrator, {})
        self._shared = sessions.setdefault((agent_id, user_id, session_id), _Shared())
        if turns is not None:
            self._shared.turns = turns
        elif self._shared.turns is None or self._shared.turns.token_budget != token_budget:
            self._shared.turns = FrameworkTurns(
                orchestrator, agent_id=agent_id, token_budget=token_budget
            )
        self.turns: FrameworkTurns = self._shared.turns
        self._items = orchestrator.stores.session_items
        self._key = SessionKey(agent_id=agent_id, user_id=user_id, session_id=session_id)
        self.ended: EndTurnResult | None = None
        """What the last ``end_turn`` of this session returned."""

    # -- the seats ------------------------------------------------------------

    def run_config(self, **settings: Any) -> RunConfig:
        """A ``RunConfig`` whose ``session_input_callback`` starts the turn, with ``settings``.

        A ``session_input_callback`` among ``settings`` is the caller's own:
        it chooses the history (see :meth:`session_input`); so does a
        ``session_settings`` with a ``limit``. Otherwise prefrontal chooses
        it, and the config's ``session_settings.limit`` is ``0``: the SDK
        reads no stored items for the run's input.
        """
        theirs: InputCallback | None = settings.pop("session_input_callback", None)
        config = RunConfig(**settings)
        chosen = theirs is not None or self._limit(config.session_settings) is not None
        if not chosen:
            # Prefrontal chooses the history: the SDK reads (and copies) none of the items.
            config.session_settings = dataclasses.replace(
                config.session_settings or SessionSettings(), limit=0
            )

        async def placed(history: Items, new_items: Items) -> Items:
            return await self.session_input(history, new_items, theirs=theirs, chosen=chosen)

        config.session_input_callback = placed
        return config

    def _limit(self, override: SessionSettings | None) -> int | None:
        own = self.session_settings or SessionSettings()
        return (own.resolve(override) if override is not None else own).limit

    async def session_input(
        self,
        history: Items,
        new_items: Items,
        *,
        theirs: InputCallback | None = None,
        chosen: bool = False,
    ) -> Items:
        """Start the turn for the run's user input; the model's input.

        Prefrontal's context (its data, and unless ``chosen`` its choice of
        the recent conversation), then: ``new_items`` as given; or, when
        ``chosen``, what ``theirs`` returns for ``(history, new_items)``
        (``history`` followed by ``new_items`` without it).
        """
        user_input = "\n\n".join(
            text_of(item)
            for item in new_items
            if isinstance(item, dict) and item.get("role", "user") == "user"
        ).strip()
        if not user_input:
            raise ValueError("the run has no user input to start a turn for")
        rest: Items = list(new_items)
        if theirs is not None:
            prepared = theirs(history, new_items)
            if inspect.isawaitable(prepared):
                prepared = await prepared
            if not isinstance(prepared, list):
                raise UserError("Session input callback must return a list of input items.")
            rest = prepared
        elif chosen:
            rest = [*history, *new_items]
        result = await self.turns.start(self.user_id, self.session_id, user_input)
        context = self._context(result, chosen=chosen)
        shared = self._shared
        shared.placed = context
        shared.unsaved = [dict(message) for message in context]
        shared.run_items = []
        shared.user_input = user_input
        self.ended = None
        return [*cast(Items, [dict(message) for message in context]), *rest]

    def _context(self, result: TurnResult, *, chosen: bool) -> list[dict[str, str]]:
        if chosen:
            data = data_text(result.bundle.fragments)
            return [{"role": "user", "content": data}] if data else []
        placed = self.turns.placed(self.user_id, self.session_id)
        return [{"role": m["role"], "content": m["content"]} for m in placed.messages]

    async def instructions(self, context: RunContextWrapper[Any], agent: Agent[Any]) -> str:
        """The system part of the turn's messages; refuses a run this session did not place.

        Raises :class:`SessionNotPlaced` when no turn is started, or when the
        run's input does not hold what :meth:`session_input` placed, in
        order, before the user's input (a run without
        ``run_config=session.run_config()``).
        """
        result = self.turns.pending(self.user_id, self.session_id)
        given = _said(list(context.turn_input))
        asked = [text for role, text in given if role == "user"]
        if (
            result is None
            or not asked
            or not _within(_said(self._shared.placed), given)
            or not asked[-1].strip()
            or asked[-1].strip() not in self._shared.user_input
        ):
            raise SessionNotPlaced(
                "a PrefrontalSession run needs run_config=session.run_config(): without it "
                "the model would get neither the owner's instructions nor a fenced history"
            )
        return self.turns.placed(self.user_id, self.session_id).instructions

    # -- the Session protocol -------------------------------------------------

    async def get_items(self, limit: int | None = None) -> Items:
        """The session's items as they were given, oldest first.

        ``limit`` as ``SQLiteSession`` reads it: ``None`` takes
        ``session_settings.limit`` (``None`` there: every item); a positive
        limit the newest that many; ``0`` none; a negative one every item.
        """
        wanted = resolve_session_limit(limit, self.session_settings)
        if wanted == 0:
            return []
        found = await self._items.items(self._key, limit=wanted if wanted and wanted > 0 else None)
        return cast(Items, found)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Keep ``items`` as given; in a placed run, end the turn once the reply is in.

        The context messages :meth:`session_input` placed are not the
        session's items: the SDK offers them to be saved with the run's
        input, and they are left out. When the run's final assistant
        message arrives (every tool call answered), ``end_turn`` records
        the exchange.
        """
        shared = self._shared
        kept = [item for item in items if not _take(shared.unsaved, item)]
        if kept:
            await self._items.append(self._key, cast(list[dict[str, Any]], kept))
        if self.turns.pending(self.user_id, self.session_id) is None:
            return
        shared.run_items.extend(kept)
        last = shared.run_items[-1] if shared.run_items else None
        if _is_reply(last) and _answered(shared.run_items):
            self.ended = await self.turns.end(
                self.user_id, self.session_id, text_of(last), tool_calls_of(shared.run_items)
            )
            self._forget_run()

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the newest item (``None`` when the session has none)."""
        popped = await self._items.pop(self._key)
        run = self._shared.run_items
        if popped is not None and run and run[-1] == popped:
            run.pop()
        return cast(TResponseInputItem | None, popped)

    def close(self) -> None:
        """Nothing to release, unlike ``SQLiteSession.close``: the stores are the orchestrator's."""

    async def clear_session(self) -> None:
        """Remove the session's items and forget the run in progress (recorded turns stay)."""
        await self._items.clear(self._key)
        self._shared.run_items = []

    def _forget_run(self) -> None:
        shared = self._shared
        shared.placed, shared.unsaved, shared.run_items, shared.user_input = [], [], [], ""
