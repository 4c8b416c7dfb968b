"""SUMMARIZE: fold the items that must go into one summary item instead of dropping them.

The summary needs room of its own: ``summary_min_tokens`` tokens and an item
slot beside the newcomer. So folding picks (in COMPOSITE order) enough
victims to free that much, asks the summarizer for at most the freed room,
and trims what it returns to fit. When that much cannot be freed, or the
summarizer gives nothing, the plain victims are dropped instead.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

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
) -> tuple[BufferItem, list[Eviction]] | None:
    """A summary and the evictions it folds, making room for it and ``newcomer``; or ``None``.

    Nothing is changed here: the caller removes the folded items and inserts
    the summary and the newcomer.
    """
    config = ctx.config
    wider = Need(tokens=newcomer.tokens + config.summary_min_tokens, items=2)
    victims = select_victims(
        tuple(held.items.values()), wider, ctx, protected, held_tokens=held.tokens
    )
    if not victims:
        return None
    items = [item for item, _ in victims]
    budget = config.max_tokens - (held.tokens - sum(i.tokens for i in items)) - newcomer.tokens
    text = fit_tokens((await summarizer(items, budget, count_tokens)).strip(), budget, count_tokens)
    if not text:
        return None
    summary = building.summary(items, text, count_tokens(text), ctx.now, held.take_seq())
    detail = f"folded into summary {summary.item_id}"
    return summary, [
        Eviction(
            item=item,
            reason=EvictionReason.SUMMARIZED,
            detail=detail,
            policy=config.policy,
            keep_score=score,
        )
        for item, score in victims
    ]
