"""SUMMARIZE: fold the items that must go into the session's one summary item.

A buffer under SUMMARIZE holds at most one summary item, its rolling
summary. Folding grows it: the items that must go (to make room for a
newcomer, or because they faded out) and the summary held so far are handed
to the summarizer together, and its text becomes the new version of the same
summary item (same id; ``summary_of`` lists every item ever folded into it).

The summary needs room of its own: at least ``summary_min_tokens`` tokens,
at most ``summary_max_tokens``, and one item slot. So folding for a newcomer
picks (in COMPOSITE order, the summary itself never a candidate) enough
victims to free that much, asks the summarizer for at most the room there
is, and trims what it returns to fit. When that much cannot be freed, or the
summarizer gives nothing, the plain victims are dropped instead.

Nothing here changes the buffer: callers remove the folded items and the old
summary, then insert the new summary (and the newcomer), in that order, so
the bounds hold at every moment.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from prefrontal.buffer import building
from prefrontal.buffer.holding import Holding
from prefrontal.buffer.models import BufferItem
from prefrontal.buffer.policies import (
    Eviction,
    EvictionContext,
    EvictionReason,
    Need,
    describe,
    select_victims,
)
from prefrontal.buffer.summarizer import Summarizer, fit_tokens

Victims = list[tuple[BufferItem, float]]


@dataclass(frozen=True, slots=True)
class Folded:
    """The result of a fold: the new summary, the old one(s) it replaces, the evictions."""

    summary: BufferItem
    replaced: tuple[BufferItem, ...]
    evictions: list[Eviction]


def summaries(held: Holding) -> tuple[BufferItem, ...]:
    """The summary items held, oldest first (one, except in states saved by older versions)."""
    return tuple(i for i in held.ordered() if i.is_summary)


def dropped(victims: Victims, ctx: EvictionContext) -> list[Eviction]:
    """Plain evictions of ``victims`` under the context's policy, each with its keep score."""
    policy = ctx.config.policy
    return [
        Eviction(
            item=item,
            reason=EvictionReason.POLICY,
            detail=describe(item, score, policy),
            policy=policy,
            keep_score=score,
        )
        for item, score in victims
    ]


async def fold(
    held: Holding,
    newcomer: BufferItem,
    ctx: EvictionContext,
    protected: Collection[str],
    summarizer: Summarizer,
    count_tokens: Callable[[str], int],
) -> Folded | None:
    """The grown summary and the evictions it folds, making room for ``newcomer``; or ``None``."""
    config = ctx.config
    existing = summaries(held)
    items = tuple(held.items.values())
    held_summary_tokens = sum(s.tokens for s in existing)
    keep = (*protected, *(s.item_id for s in existing))
    growth = max(config.summary_min_tokens - held_summary_tokens, 0)
    need = Need(tokens=newcomer.tokens + growth, items=max(2 - len(existing), 0))
    victims = select_victims(items, need, ctx, keep, held_tokens=held.tokens)
    if victims is None:
        wider = Need(tokens=newcomer.tokens + config.summary_min_tokens, items=2)
        victims = select_victims(items, wider, ctx, protected, held_tokens=held.tokens)
    if victims is None or (not victims and len(existing) < 2):
        return None
    folded = [item for item, _ in victims]
    old = tuple(s for s in existing if s.item_id not in {f.item_id for f in folded})
    freed = sum(i.tokens for i in (*folded, *old))
    room = config.max_tokens - (held.tokens - freed) - newcomer.tokens
    scores = {item.item_id: score for item, score in victims}
    return await _summarize(held, [*old, *folded], scores, room, ctx, summarizer, count_tokens)


async def fold_faded(
    held: Holding,
    faded: Sequence[BufferItem],
    ctx: EvictionContext,
    summarizer: Summarizer,
    count_tokens: Callable[[str], int],
) -> Folded | None:
    """The grown summary that takes in the ``faded`` items (no summary among them); or ``None``."""
    if not faded:
        return None
    old = summaries(held)
    freed = sum(i.tokens for i in (*faded, *old))
    room = ctx.config.max_tokens - (held.tokens - freed)
    return await _summarize(held, [*old, *faded], {}, room, ctx, summarizer, count_tokens)


async def _summarize(
    held: Holding,
    parts: list[BufferItem],
    scores: dict[str, float],
    room: int,
    ctx: EvictionContext,
    summarizer: Summarizer,
    count_tokens: Callable[[str], int],
) -> Folded | None:
    """Summarize ``parts`` (old summaries first) into at most ``room`` tokens, capped."""
    config = ctx.config
    budget = min(room, config.summary_cap)
    if budget < config.summary_min_tokens:
        return None
    text = fit_tokens((await summarizer(parts, budget, count_tokens)).strip(), budget, count_tokens)
    if not text:
        return None
    olds = [p for p in parts if p.is_summary]
    keep_id = olds[0].item_id if olds else None
    summary = building.summary(
        parts, text, count_tokens(text), ctx.now, held.take_seq(), item_id=keep_id
    )
    detail = f"folded into summary {summary.item_id}"
    evictions = [
        Eviction(
            item=item,
            reason=EvictionReason.SUMMARIZED,
            detail=detail,
            policy=config.policy,
            keep_score=scores.get(item.item_id),
        )
        for item in parts
        if not item.is_summary or item.item_id != summary.item_id
    ]
    replaced = tuple(p for p in olds if p.item_id == summary.item_id)
    return Folded(summary=summary, replaced=replaced, evictions=evictions)
