"""In-memory conversation store."""

from __future__ import annotations

from prefrontal.stores.conversation import ConversationSummary, ConversationTurn
from prefrontal.stores.tenancy import Tenant, owns, visible_to


class InMemoryConversationStore:
    """Turns in insertion order; one summary per ``(agent, user)``."""

    def __init__(self) -> None:
        self._turns: dict[tuple[str, str, str], tuple[int, ConversationTurn]] = {}
        self._summaries: dict[tuple[str, str], ConversationSummary] = {}
        self._sequence = 0

    async def append(self, turn: ConversationTurn) -> None:
        key = (turn.agent_id, turn.user_id, turn.item_id)
        previous = self._turns.get(key)
        if previous is None:
            self._sequence += 1
        order = previous[0] if previous is not None else self._sequence
        self._turns[key] = (order, turn)

    async def recent(
        self, tenant: Tenant, *, limit: int, session_id: str | None = None
    ) -> list[ConversationTurn]:
        rows = [
            (turn.created_at, order, turn)
            for order, turn in self._turns.values()
            if visible_to(turn, tenant) and session_id in (None, turn.session_id)
        ]
        rows.sort(key=lambda row: (row[0], row[1]))
        return [turn for _, _, turn in rows[-limit:]] if limit > 0 else []

    async def get_summary(self, tenant: Tenant) -> ConversationSummary | None:
        return self._summaries.get((tenant.agent_id, tenant.user_id))

    async def put_summary(self, summary: ConversationSummary) -> None:
        self._summaries[(summary.agent_id, summary.user_id)] = summary

    async def erase(self, tenant: Tenant) -> int:
        mine = [key for key, (_, turn) in self._turns.items() if owns(tenant, turn)]
        for key in mine:
            del self._turns[key]
        summary = self._summaries.pop((tenant.agent_id, tenant.user_id), None)
        return len(mine) + (summary is not None)
