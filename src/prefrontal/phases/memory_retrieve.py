"""Memory retrieval for phases 5 and 6: several queries, scored for a context.

``retrieve`` searches with the input and with its context (goals, recent
conversation; asked for a share of the input's hits, since they weigh less),
then with the words the input's two best hits add to it
(pseudo-relevance feedback, :mod:`prefrontal.retrieval.feedback`), blends
the three after normalising each to its best hit (the input weighs most),
lets each item add a share of its neighbours' scores, favours items said
by someone the input names, adds each item's thread score, and lifts
the neighbours of the strongest matches (fetched with ``around``). The
scoring steps are pure functions in :mod:`prefrontal.retrieval.context`;
their weights are :class:`~prefrontal.retrieval.settings.RecallSettings`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from prefrontal.phases.state import TurnState
from prefrontal.phases.store_calls import call_store
from prefrontal.phases.together import Call, run_together
from prefrontal.retrieval.context import (
    add_thread_scores,
    best,
    blend,
    lift_neighbours,
    smooth_neighbours,
    speaker_named,
)
from prefrontal.retrieval.feedback import expansion_terms
from prefrontal.retrieval.settings import RecallSettings
from prefrontal.stores.long_term import MemoryItem, MemoryQuery, MemoryStore, ScoredMemory

TOKENS_PER_CANDIDATE = 35
"""About what a memory costs rendered: a section asks for one hit per this many tokens of budget.

Neighbour lifts, the context query and the feedback query add to the hits,
so the candidates still outnumber what fits (at 4,000 tokens: 100 hits
asked for each query, about 100 fragments fit). One hit per 20 tokens
scored, reranked and counted twice as many for the same LoCoMo recall.
"""
TOKENS_PER_ANCHOR = 20
"""The anchors that lift their neighbours grow with the budget: ``anchor_count`` of one
per this many tokens (10 up to 2,000 tokens, 25 at 4,000)."""
MAX_CANDIDATES = 1_000

Relevant = tuple[float, MemoryItem]
"""A candidate memory with its relevance (retrieved, or held from last turn), before the rerank."""


def candidate_limit(turn: TurnState, configured: int) -> int:
    """How many hits to ask for: enough to fill the turn's budget, at least ``configured``.

    Empty sections leave their share to the memory sections, so a search
    that stopped at a fixed count would leave budget unspent. ``0`` disables.
    """
    if configured == 0:
        return 0
    return min(max(configured, turn.policy.available // TOKENS_PER_CANDIDATE), MAX_CANDIDATES)


def anchor_reach(turn: TurnState, limit: int) -> int:
    """What :func:`anchor_count` scales with: the hits asked for, or the budget's reach if more."""
    return max(limit, turn.policy.available // TOKENS_PER_ANCHOR)


def input_text(turn: TurnState) -> str:
    """The user's input and the request's focus tags."""
    return "\n".join([turn.request.user_input, *turn.request.focus])


async def search(
    turn: TurnState, store: MemoryStore, phase: str, text: str, limit: int
) -> list[ScoredMemory]:
    """The store's hits for ``text`` (nothing when ``limit`` is 0 or the text is blank)."""
    if limit == 0 or not text.strip():
        return []
    query = MemoryQuery(text=text[:20_000], limit=limit, now=turn.context.started_at)
    tenant = turn.tenant
    return await call_store(turn, phase, lambda: store.search(tenant, query))


async def retrieve(
    turn: TurnState,
    store: MemoryStore,
    phase: str,
    queries: Mapping[str, str],
    limit: int,
    settings: RecallSettings,
) -> list[Relevant]:
    """Candidates for ``queries`` (``"input"`` and ``"context"``), scored but not yet reranked.

    The feedback query (words of the input's best hits) is searched too
    and blended at ``settings.feedback_weight``.
    """
    limits = {"context": math.ceil(limit * settings.context_share)}
    hits = await _search_all(turn, store, phase, queries, limit, limits)
    feedback = await _feedback(turn, store, phase, hits, queries.get("input", ""), limit, settings)
    if feedback:
        hits["feedback"] = feedback
    items, signals = _gathered(hits)
    scores = blend(signals, _query_weights(settings))
    threads, places, speakers = _described(items)
    scores = smooth_neighbours(scores, places, settings.smoothing)
    scores = speaker_named(scores, speakers, queries["input"], settings.speaker_weight)
    scores = add_thread_scores(scores, threads, settings.thread_weight, top=settings.thread_top)
    anchors = anchor_count(anchor_reach(turn, limit), settings)
    scores = await _lift(turn, store, phase, scores, items, anchors, settings)
    return [(value, items[key]) for key, value in scores.items() if value > 0]


def _query_weights(settings: RecallSettings) -> dict[str, float]:
    """Each query's weight in the blend: the input 1.0, its context and the feedback less."""
    return {
        "input": 1.0,
        "context": settings.context_weight,
        "feedback": settings.feedback_weight,
    }


def _gathered(
    hits: Mapping[str, list[ScoredMemory]],
) -> tuple[dict[str, MemoryItem], dict[str, dict[str, float]]]:
    """Every hit's item by id (the first place an id is found, its last item), and each
    query's scores by item id: in one pass over the hits."""
    items: dict[str, MemoryItem] = {}
    signals: dict[str, dict[str, float]] = {}
    for name, found in hits.items():
        scores = signals[name] = {}
        for hit in found:
            item = hit.item
            key = item.item_id
            items[key] = item
            scores[key] = hit.score
    return items, signals


def _described(
    items: Mapping[str, MemoryItem],
) -> tuple[dict[str, str | None], dict[str, tuple[str, int]], dict[str, str | None]]:
    """Each item's thread, its place (thread and position, when it has both) and its speaker
    (the ``speaker`` metadata when a string): in one pass over the items, in their order."""
    threads: dict[str, str | None] = {}
    places: dict[str, tuple[str, int]] = {}
    speakers: dict[str, str | None] = {}
    for key, item in items.items():
        thread, position = item.thread_id, item.position
        threads[key] = thread
        if thread is not None and position is not None:
            places[key] = (thread, position)
        speaker = item.metadata.get("speaker")
        speakers[key] = speaker if isinstance(speaker, str) else None
    return threads, places, speakers


async def _search_all(
    turn: TurnState,
    store: MemoryStore,
    phase: str,
    queries: Mapping[str, str],
    limit: int,
    limits: Mapping[str, int],
) -> dict[str, list[ScoredMemory]]:
    """Every query searched, concurrently: the phase waits for one round trip, not one per query.

    Each asks for ``limit`` hits, or for its own limit in ``limits``.
    """
    found: dict[str, list[ScoredMemory]] = {}

    def one(name: str, text: str) -> Call:
        async def call() -> None:
            found[name] = await search(turn, store, phase, text, limits.get(name, limit))

        return call

    await run_together([one(name, text) for name, text in queries.items()], at_once=turn.overlap)
    return {name: found[name] for name in queries}


async def _feedback(
    turn: TurnState,
    store: MemoryStore,
    phase: str,
    hits: Mapping[str, list[ScoredMemory]],
    query: str,
    limit: int,
    settings: RecallSettings,
) -> list[ScoredMemory]:
    """Hits for the words of the input's best hits that the input lacks (none when disabled)."""
    found = hits.get("input", [])
    if settings.feedback_weight <= 0 or settings.feedback_terms <= 0 or not found:
        return []
    ranked = sorted(found, key=lambda h: (-h.score, h.item.item_id))[: settings.feedback_docs]
    feedback = [(h.item.content, h.score) for h in ranked]
    background = list({h.item.item_id: h.item.content for f in hits.values() for h in f}.values())
    words = expansion_terms(feedback, background, query, settings.feedback_terms)
    return await search(turn, store, phase, " ".join(words), limit)


def anchor_count(limit: int, settings: RecallSettings) -> int:
    """How many of the best items lift their neighbours when ``limit`` candidates are asked for."""
    return max(settings.neighbour_anchors, int(limit * settings.anchor_share))


async def _lift(
    turn: TurnState,
    store: MemoryStore,
    phase: str,
    scores: dict[str, float],
    items: dict[str, MemoryItem],
    anchor_limit: int,
    settings: RecallSettings,
) -> dict[str, float]:
    """Scores with the neighbours of the ``anchor_limit`` best items lifted.

    Neighbours not yet among the candidates join ``items``.
    """
    anchors = [k for k in best(scores, anchor_limit) if items[k].thread_id]
    if not anchors or settings.neighbour_radius == 0:
        return scores
    tenant, radius, now = turn.tenant, settings.neighbour_radius, turn.context.started_at
    near = await call_store(
        turn, phase, lambda: store.around(tenant, anchors, radius=radius, now=now)
    )
    for item in near:
        items.setdefault(item.item_id, item)
    threads = _by_thread(near)
    neighbours = {
        a: _factors(items[a], threads.get(items[a].thread_id, ()), settings) for a in anchors
    }
    return lift_neighbours(scores, neighbours)


def _by_thread(near: list[MemoryItem]) -> dict[str | None, list[MemoryItem]]:
    """``near`` grouped by thread, each group in the order given: an anchor is compared
    only with the items of its own thread, not with every item fetched."""
    threads: dict[str | None, list[MemoryItem]] = {}
    for item in near:
        if item.position is not None:
            threads.setdefault(item.thread_id, []).append(item)
    return threads


def _factors(
    anchor: MemoryItem, near: Sequence[MemoryItem], settings: RecallSettings
) -> list[tuple[str, float]]:
    """The anchor's neighbours with the share of its score each gets (replies, then context).

    ``near``: the fetched items, or those of the anchor's thread (the same neighbours).
    """
    position, radius = anchor.position, settings.neighbour_radius
    if anchor.thread_id is None or position is None:
        return []
    after, before = settings.neighbour_factor, settings.neighbour_before_factor
    out = []
    for item in near:
        if item.thread_id == anchor.thread_id and item.position is not None:
            distance = item.position - position
            if 0 < abs(distance) <= radius:
                out.append((item.item_id, after if distance > 0 else before))
    return out
