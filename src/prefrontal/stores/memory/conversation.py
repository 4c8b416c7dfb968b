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

    Each agent's turns are also kept as a timeline, oldest first: built
    sorted on the first read, then kept in order in place by each append
    (sorted again only after a delete or an erase): ``recent`` walks it back from
    the newest, never past the ``limit`` turns it returns and those it may
    not show, instead of sorting every turn of every agent on each read.
    """

    def __init__(self) -> None:
        self._turns: dict[tuple[str, str, str], tuple[int, ConversationTurn]] = {}
        self._summaries: dict[tuple[str, str], ConversationSummary] = {}
        self._sequence = 0
        self._timelines: dict[str, list[Said]] = {}

    async def append(self, turn: ConversationTurn) -> None:
        key = (turn.agent_id, turn.user_id, turn.item_id)
        previous = self._turns.get(key)
        if previous is None:
            self._sequence += 1
        order = previous[0] if previous is not None else self._sequence
        self._turns[key] = (order, turn)
        timeline = self._timelines.get(turn.agent_id)
        if timeline is not None:  # kept in order in place: a conversation grows by appends
            if previous is not None:
                _take_out(timeline, order, previous[1])
            insort(timeline, (turn.created_at, order, turn), key=_when)

    async def recent(
        self, tenant: Tenant, *, limit: int, session_id: str | None = None
    ) -> list[ConversationTurn]:
        newest_first: list[ConversationTurn] = []
        if limit <= 0:
            return newest_first
        for _, _, turn in reversed(self._timeline(tenant.agent_id)):
            if visible_to(turn, tenant) and session_id in (None, turn.session_id):
                newest_first.append(turn)
                if len(newest_first) == limit:
                    break
        newest_first.reverse()
        return newest_first

    def _timeline(self, agent_id: str) -> list[Said]:
        """The agent's turns by when said, then insertion order (sorted once per write)."""
        timeline = self._timelines.get(agent_id)
        if timeline is None:
            timeline = sorted(
                (
                    (turn.created_at, order, turn)
                    for order, turn in self._turns.values()
                    if turn.agent_id == agent_id
                ),
                key=_when,
            )
            self._timelines[agent_id] = timeline
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
