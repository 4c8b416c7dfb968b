"""In-memory conversation store."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Sequence
from datetime import datetime

from prefrontal.stores.conversation import ConversationSummary, ConversationTurn
from prefrontal.stores.tenancy import Tenant, owns, visible_to

Said = tuple[datetime, int, ConversationTurn]
"""A turn with when it was said and its insertion order: what the timeline is sorted by."""


class InMemoryConversationStore:
    """Turns in insertion order; one summary per ``(agent, user)``.

    Each agent's turns are also kept as timelines, oldest first: all of its
    turns, and those of each session read: built sorted on the first read,
    then kept in order in place by each append (sorted again only after a
    delete or an erase). ``recent`` walks the one it reads back from the
    newest, never past the ``limit`` turns it returns and those it may not
    show, instead of sorting every turn of every agent on each read; a
    session's own timeline holds only its turns, so a session with fewer
    turns than ``limit`` is read without a walk over every other session's.
    """

    def __init__(self) -> None:
        self._turns: dict[tuple[str, str, str], tuple[int, ConversationTurn]] = {}
        self._summaries: dict[tuple[str, str], ConversationSummary] = {}
        self._sequence = 0
        self._timelines: dict[str, dict[str | None, list[Said]]] = {}
        """Each agent's timelines, by session id (``None``: every session's turns)."""

    async def append(self, turn: ConversationTurn) -> None:
        key = (turn.agent_id, turn.user_id, turn.item_id)
        previous = self._turns.get(key)
        if previous is None:
            self._sequence += 1
        order = previous[0] if previous is not None else self._sequence
        self._turns[key] = (order, turn)
        timelines = self._timelines.get(turn.agent_id)
        if timelines is None:
            return
        if previous is not None:  # replaced: out of the timelines it is in
            for session_id in (None, previous[1].session_id):
                if (timeline := timelines.get(session_id)) is not None:
                    _take_out(timeline, order, previous[1])
        said = (turn.created_at, order, turn)
        for session_id in (None, turn.session_id):  # kept in order in place: appends mostly
            if (timeline := timelines.get(session_id)) is not None:
                insort(timeline, said, key=_when)

    async def recent(
        self, tenant: Tenant, *, limit: int, session_id: str | None = None
    ) -> list[ConversationTurn]:
        newest_first: list[ConversationTurn] = []
        if limit <= 0:
            return newest_first
        for _, _, turn in reversed(self._timeline(tenant.agent_id, session_id)):
            if visible_to(turn, tenant):
                newest_first.append(turn)
                if len(newest_first) == limit:
                    break
        newest_first.reverse()
        return newest_first

    def _timeline(self, agent_id: str, session_id: str | None) -> list[Said]:
        """The agent's turns (of ``session_id`` when given) by when said, then insertion
        order (sorted once per write)."""
        timelines = self._timelines.setdefault(agent_id, {})
        timeline = timelines.get(session_id)
        if timeline is None:
            timeline = sorted(
                (
                    (turn.created_at, order, turn)
                    for order, turn in self._turns.values()
                    if turn.agent_id == agent_id and session_id in (None, turn.session_id)
                ),
                key=_when,
            )
            timelines[session_id] = timeline
        return timeline

    async def get_summary(self, tenant: Tenant) -> ConversationSummary | None:
        return self._summaries.get((tenant.agent_id, tenant.user_id))

    async def put_summary(self, summary: ConversationSummary) -> None:
        self._summaries[(summary.agent_id, summary.user_id)] = summary

    async def delete(self, tenant: Tenant, item_ids: Sequence[str]) -> list[ConversationTurn]:
        removed = [
            said[1]
            for item_id in dict.fromkeys(item_ids)
            if (said := self._turns.pop((tenant.agent_id, tenant.user_id, item_id), None))
        ]
        if removed:
            self._timelines.pop(tenant.agent_id, None)
        return removed

    async def drop_summary(self, tenant: Tenant) -> bool:
        return self._summaries.pop((tenant.agent_id, tenant.user_id), None) is not None

    async def erase(self, tenant: Tenant) -> int:
        mine = [key for key, (_, turn) in self._turns.items() if owns(tenant, turn)]
        for key in mine:
            del self._turns[key]
        self._timelines.pop(tenant.agent_id, None)
        summary = self._summaries.pop((tenant.agent_id, tenant.user_id), None)
        return len(mine) + (summary is not None)


def _when(said: Said) -> tuple[datetime, int]:
    """A timeline's order: when said, then insertion order (unique: one order per message)."""
    return said[0], said[1]


def _take_out(timeline: list[Said], order: int, turn: ConversationTurn) -> None:
    """Remove ``turn`` (its insertion ``order``) from the sorted ``timeline``."""
    index = bisect_left(timeline, (turn.created_at, order), key=_when)
    if index < len(timeline) and timeline[index][1] == order:
        del timeline[index]
