"""Forgetting conversation messages, and what that does to the rolling summary.

``forget`` of a message id (``<turn>:user``, ``<turn>:reply``) removes the
message from the conversation store; :func:`forget_messages` does that and
keeps the rolling summary honest. A summary's text cannot be unfolded (an
LLM summarizer paraphrases), so the contract is:

- a forgotten message the summary never folded (newer than the summary's
  newest folded message, ``through``) leaves the summary as it is;
- a forgotten message it folded (at or before ``through``, or too old to
  place among the newest ``window + batch`` messages) makes it
  **rebuilt**: the summarizer folds, from nothing, the remaining messages
  among the newest ``window + batch`` that the old summary covered, and
  ``through`` becomes the newest of them. What the old summary held of
  older messages goes with it; its topics and decisions too;
- with none of those messages left, the summary is **dropped** (the next
  fold starts a new one from the messages then leaving the window).

Either way no text of the forgotten message stays in the summary. What was
done is :attr:`MessagesForgotten.summary`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from prefrontal.buffer.summarizer import fit_tokens
from prefrontal.exchange.config import EndTurnConfig
from prefrontal.exchange.summary import ExtractiveSummarizer, Summarizer
from prefrontal.stores.conversation import ConversationStore, ConversationSummary, ConversationTurn
from prefrontal.stores.tenancy import Tenant

TokenCounter = Callable[[str], int]
SummaryOutcome = Literal["none", "untouched", "rebuilt", "dropped"]


@dataclass(frozen=True)
class SummaryRebuild:
    """How a summary that folded a forgotten message is rebuilt: the end-turn fold's settings."""

    summarizer: Summarizer = field(default_factory=ExtractiveSummarizer)
    window: int = 10
    """Messages phase 4 shows (``conversation.recent_turns``)."""
    batch: int = EndTurnConfig().fold_batch
    max_tokens: int = EndTurnConfig().summary_tokens


@dataclass(frozen=True)
class MessagesForgotten:
    """What :func:`forget_messages` removed, and what became of the summary."""

    messages: tuple[ConversationTurn, ...]
    summary: SummaryOutcome
    """``none``: no summary, or nothing removed; ``untouched``: it never folded what was
    removed; ``rebuilt`` or ``dropped``: it had (see the module)."""


async def forget_messages(
    store: ConversationStore,
    tenant: Tenant,
    item_ids: Sequence[str],
    *,
    rebuild: SummaryRebuild,
    count_tokens: TokenCounter,
    now: datetime,
) -> MessagesForgotten:
    """Remove ``tenant``'s own messages of ``item_ids``; rebuild or drop a summary that held one."""
    summary = await store.get_summary(tenant)
    before = await store.recent(tenant, limit=rebuild.window + rebuild.batch) if summary else []
    removed = tuple(await store.delete(tenant, item_ids))
    if not removed or summary is None:
        return MessagesForgotten(messages=removed, summary="none")
    gone = {message.item_id for message in removed}
    covered = _covered(before, summary.through, rebuild.window)
    placed = {message.item_id for message in before}
    if not any(m.item_id in gone for m in covered) and gone <= placed:
        return MessagesForgotten(messages=removed, summary="untouched")
    remaining = [message for message in covered if message.item_id not in gone]
    text = ""
    if remaining:
        made = await rebuild.summarizer(None, remaining, rebuild.max_tokens, count_tokens)
        text = fit_tokens(made, rebuild.max_tokens, count_tokens)
    if not text.strip():
        await store.drop_summary(tenant)
        return MessagesForgotten(messages=removed, summary="dropped")
    await store.put_summary(
        ConversationSummary(
            agent_id=tenant.agent_id,
            user_id=tenant.user_id,
            text=text,
            updated_at=now,
            through=remaining[-1].item_id,
        )
    )
    return MessagesForgotten(messages=removed, summary="rebuilt")


def _covered(
    messages: list[ConversationTurn], through: str | None, window: int
) -> list[ConversationTurn]:
    """The messages of ``messages`` (oldest first) that a summary up to ``through`` folded.

    ``through`` among them: those up to it. ``None`` (a summary that does not
    say): all but the newest ``window``. Older than all of them: none.
    """
    ids = [message.item_id for message in messages]
    if through is None:
        return messages[: max(len(messages) - window, 0)]
    if through in ids:
        return messages[: ids.index(through) + 1]
    return []
