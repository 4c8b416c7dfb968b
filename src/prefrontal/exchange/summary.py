"""The rolling summary: what leaves the recent-conversation window is folded into it.

Phase 4 shows the newest ``recent_turns`` messages. After an exchange is
written, :func:`fold` takes the messages older than that window which the
summary does not hold yet (it remembers the newest one it holds,
``through``) and asks a :class:`Summarizer` for the new summary text. The
default, :class:`ExtractiveSummarizer`, is offline and deterministic; any
async callable with the same signature (one that asks an LLM, say) takes
its place. Whatever it returns is cut to ``summary_tokens``.

Folding is idempotent: a fold that finds nothing new writes nothing, and
two concurrent folds each leave a summary whose text matches its ``through``.
:func:`folded` is the fold without I/O: ``end_turn`` reads the summary and
the messages leaving the window before it writes the exchange, and writes
the new summary in the exchange's transaction, provided the stored summary
is still the one it folded (else it folds again with :func:`fold`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from prefrontal.buffer.summarizer import first_sentence, fit_tokens
from prefrontal.stores.conversation import ConversationStore, ConversationSummary, ConversationTurn
from prefrontal.stores.exchange import SummaryChange
from prefrontal.stores.tenancy import Tenant

TokenCounter = Callable[[str], int]


class Summarizer(Protocol):
    """Folds messages into the rolling summary.

    Contract: given the summary so far (``None`` for the first fold) and the
    messages leaving the window (oldest first), return the new summary as
    plain text, ideally within ``max_tokens`` by ``count_tokens`` (longer
    text is cut). Raising leaves the summary as it was (the failure is in
    the end-turn trace) and the messages are folded by a later call.
    """

    async def __call__(
        self,
        previous: str | None,
        messages: Sequence[ConversationTurn],
        max_tokens: int,
        count_tokens: TokenCounter,
    ) -> str: ...


def line(message: ConversationTurn) -> str:
    """``speaker: first sentence`` of one message."""
    return f"{message.speaker or message.role.value}: {first_sentence(message.content)}"


class ExtractiveSummarizer:
    """The summary so far, then one line per message (its first sentence).

    When that is over ``max_tokens``, the oldest lines go first: the summary
    keeps the latest of what left the window.
    """

    async def __call__(
        self,
        previous: str | None,
        messages: Sequence[ConversationTurn],
        max_tokens: int,
        count_tokens: TokenCounter,
    ) -> str:
        lines = [*(previous.splitlines() if previous else []), *map(line, messages)]
        lines = [text for text in lines if text.strip()]
        while len(lines) > 1 and count_tokens("\n".join(lines)) > max_tokens:
            lines.pop(0)
        return "\n".join(lines)


@dataclass(frozen=True)
class Fold:
    """What one fold did: how many messages it folded and the summary's size after."""

    folded: int
    tokens: int


def unfolded(
    messages: list[ConversationTurn], window: int, through: str | None
) -> list[ConversationTurn]:
    """The messages older than the newest ``window`` that come after ``through``."""
    older = messages[: max(len(messages) - window, 0)]
    ids = [m.item_id for m in older]
    if through is not None and through in ids:
        return older[ids.index(through) + 1 :]
    return older


async def folded(
    previous: ConversationSummary | None,
    leaving: Sequence[ConversationTurn],
    tenant: Tenant,
    *,
    max_tokens: int,
    summarizer: Summarizer,
    count_tokens: TokenCounter,
    now: datetime,
) -> tuple[SummaryChange | None, Fold]:
    """The summary ``previous`` with ``leaving`` folded in, and what that did (no I/O).

    ``None`` when there is nothing to fold or the summarizer gave blank text.
    """
    if not leaving:
        return None, Fold(folded=0, tokens=count_tokens(previous.text) if previous else 0)
    text = fit_tokens(
        await summarizer(previous.text if previous else None, leaving, max_tokens, count_tokens),
        max_tokens,
        count_tokens,
    )
    if not text.strip():
        return None, Fold(folded=0, tokens=0)
    summary = ConversationSummary(
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        text=text,
        topics=previous.topics if previous else (),
        decisions=previous.decisions if previous else (),
        updated_at=now,
        through=leaving[-1].item_id,
    )
    change = SummaryChange(summary=summary, replaces=previous)
    return change, Fold(folded=len(leaving), tokens=count_tokens(text))


async def fold(
    store: ConversationStore,
    tenant: Tenant,
    *,
    window: int,
    batch: int,
    max_tokens: int,
    summarizer: Summarizer,
    count_tokens: TokenCounter,
    now: datetime,
) -> Fold:
    """Fold what left the window into the tenant's rolling summary (see the module)."""
    messages = await store.recent(tenant, limit=window + batch)
    summary = await store.get_summary(tenant)
    new = unfolded(messages, window, summary.through if summary else None)
    change, done = await folded(
        summary,
        new,
        tenant,
        max_tokens=max_tokens,
        summarizer=summarizer,
        count_tokens=count_tokens,
        now=now,
    )
    if change is not None:
        await store.put_summary(change.summary)
    return done
