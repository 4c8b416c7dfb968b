"""The ten-turn conversation with prefrontal's memory tools: remember at turn 2, recall at turn 9.

Each framework's model is scripted to call ``remember`` with :data:`REMEMBERED`
at turn 2 and ``recall`` with :data:`QUERY` at turn 9 (then reply, as in
:mod:`tests.integrations.conversation`); :func:`check_memory` checks what the
tools left in the store.
"""

from __future__ import annotations

from prefrontal.orchestrator import Orchestrator
from prefrontal.stores.authors import AGENT as AGENT_AUTHOR
from prefrontal.stores.long_term import AUTHOR_KEY
from tests.integrations import conversation as conv

REMEMBERED = f"Maya's sister {conv.FACT}."
QUERY = "sister wedding"
REMEMBER_TURN = conv.FACT_TURN
RECALL_TURN = conv.ASK_TURN


def tool_call_at(turn: int) -> tuple[str, dict[str, str]] | None:
    """The memory tool the model calls at ``turn`` (1-based), with its arguments, if any."""
    if turn == REMEMBER_TURN:
        return "remember", {"content": REMEMBERED}
    if turn == RECALL_TURN:
        return "recall", {"query": QUERY}
    return None


async def check_memory(orchestrator: Orchestrator) -> None:
    """The remembered fact is the user's memory, written by the agent (its tool call)."""
    hits = await orchestrator.memory.recall(conv.tenant(), QUERY, top_k=20)
    mine = [hit.item for hit in hits if hit.item.content == REMEMBERED]
    assert len(mine) == 1
    assert mine[0].metadata.get(AUTHOR_KEY) == AGENT_AUTHOR


def recalled(text: str) -> bool:
    """Whether a recall tool's result holds turn 2's fact, fenced on a memory line."""
    return any(
        line.startswith("- (fact, id ") and conv.FACT_WORDS in line for line in text.splitlines()
    )
