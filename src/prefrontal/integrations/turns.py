"""What every framework integration does around the model: start a turn, place it, end it.

:class:`FrameworkTurns` keeps one started turn per session between the
framework's hook before the model and its hook after the run: it starts a
turn for a user message once (a second call for the same message reuses
it, as a framework may call its hook before every model request of one
run), renders its bundle's messages once however many hooks ask for them
(:meth:`FrameworkTurns.messages`, :meth:`FrameworkTurns.placed`), and ends
it with the reply and the tool calls. :func:`split` divides
``bundle.to_messages()`` into what may take a system seat (its system
messages: prefrontal's framing and the owner's profile) and what is placed
as input or history (everything else, which holds text users and tools
wrote); an integration never puts the latter in a system seat.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prefrontal.bundle.messages import Message
from prefrontal.exchange.models import EndTurnResult, ToolCall
from prefrontal.orchestrator import Orchestrator
from prefrontal.stores.records import MAX_LINE_CHARS
from prefrontal.turn import TurnRequest, TurnResult


@dataclass(frozen=True)
class Placed:
    """A turn's context as the framework places it: the system part and the rest."""

    instructions: str
    """The system messages of ``to_messages()``, joined: for a system seat (instructions)."""
    messages: list[Message]
    """Every other message, the user's input last: for the input or the history."""


def split(messages: Sequence[Message]) -> Placed:
    """``messages`` (from ``bundle.to_messages()``) as a system part and the rest.

    The rest keep their roles, ``assistant`` or ``user``; any other role is
    placed as ``user`` (never raised to the system seat).
    """
    system = [m["content"] for m in messages if m["role"] == "system"]
    rest = [
        m if m["role"] in ("user", "assistant") else Message(role="user", content=m["content"])
        for m in messages
        if m["role"] != "system"
    ]
    return Placed(instructions="\n\n".join(system), messages=rest)


def tool_call(
    name: str, arguments: Mapping[str, Any], result: str | None = None, error: str | None = None
) -> ToolCall:
    """A :class:`ToolCall` from a framework's call: nested or long arguments kept as JSON text."""
    flat: dict[str, str | int | float | bool] = {}
    for key, value in list(arguments.items())[:64]:
        if isinstance(value, (str, int, float, bool)) and not (
            isinstance(value, str) and len(value) > MAX_LINE_CHARS
        ):
            flat[str(key)[:256]] = value
        else:
            flat[str(key)[:256]] = json.dumps(value, ensure_ascii=False, default=str)[
                :MAX_LINE_CHARS
            ]
    return ToolCall(name=name[:256] or "tool", arguments=flat, result=result, error=error)


@dataclass
class _Pending:
    user_input: str
    result: TurnResult
    rendered: dict[str | None, list[Message]] = field(default_factory=dict)
    """``to_messages(user_input=key)`` of the result, by the ``user_input`` asked for."""
    placed: dict[str | None, Placed] = field(default_factory=dict)
    """:func:`split` of those messages, by the same key."""


class FrameworkTurns:
    """Started turns of one agent, one pending per session, until they end.

    ``token_budget`` is passed to every turn (``None``: the orchestrator's
    default). ``last`` keeps each session's latest started turn (its bundle
    and fragments, with provenance) after it ended, and ``ended`` what its
    ``end_turn`` returned, for inspection.
    """

    def __init__(
        self, orchestrator: Orchestrator, *, agent_id: str, token_budget: int | None = None
    ) -> None:
        self.orchestrator = orchestrator
        self.agent_id = agent_id
        self.token_budget = token_budget
        self._pending: dict[tuple[str, str], _Pending] = {}
        self.last: dict[tuple[str, str], TurnResult] = {}
        self.ended: dict[tuple[str, str], EndTurnResult] = {}

    async def start(self, user_id: str, session_id: str, user_input: str) -> TurnResult:
        """The session's turn for ``user_input``: started now, or the pending one for that input."""
        key = (user_id, session_id)
        pending = self._pending.get(key)
        if pending is not None and pending.user_input == user_input:
            return pending.result
        result = await self.orchestrator.start_turn(
            TurnRequest(
                agent_id=self.agent_id,
                user_id=user_id,
                session_id=session_id,
                user_input=user_input,
                token_budget=self.token_budget,
            )
        )
        self._pending[key] = _Pending(user_input, result)
        self.last[key] = result
        return result

    def pending(self, user_id: str, session_id: str) -> TurnResult | None:
        """The session's started turn not ended yet, if any."""
        found = self._pending.get((user_id, session_id))
        return None if found is None else found.result

    def messages(
        self, user_id: str, session_id: str, user_input: str | None = None
    ) -> list[Message]:
        """The pending turn's ``bundle.to_messages(user_input=user_input)``, rendered once.

        Every later call for the same turn and ``user_input`` returns a new
        list of the same messages without rendering again (the messages are
        shared: callers read them, never change them). Raises
        :class:`LookupError` when the session has no pending turn.
        """
        pending = self._pending_of(user_id, session_id)
        rendered = pending.rendered.get(user_input)
        if rendered is None:
            rendered = pending.result.bundle.to_messages(user_input=user_input)
            pending.rendered[user_input] = rendered
        return list(rendered)

    def placed(self, user_id: str, session_id: str, user_input: str | None = None) -> Placed:
        """:func:`split` of :meth:`messages` for the pending turn, computed once."""
        pending = self._pending_of(user_id, session_id)
        found = pending.placed.get(user_input)
        if found is None:
            found = split(self.messages(user_id, session_id, user_input))
            pending.placed[user_input] = found
        return found

    def _pending_of(self, user_id: str, session_id: str) -> _Pending:
        found = self._pending.get((user_id, session_id))
        if found is None:
            raise LookupError(f"no turn is pending for user {user_id!r}, session {session_id!r}")
        return found

    async def end(
        self,
        user_id: str,
        session_id: str,
        reply: str,
        tool_calls: Sequence[ToolCall] = (),
        outcome: str | None = None,
    ) -> EndTurnResult | None:
        """End the session's pending turn with ``reply``; ``None`` when none is pending."""
        found = self._pending.pop((user_id, session_id), None)
        if found is None:
            return None
        ended = await self.orchestrator.end_turn(
            found.result, reply, tool_calls=tool_calls, outcome=outcome
        )
        self.ended[(user_id, session_id)] = ended
        return ended
