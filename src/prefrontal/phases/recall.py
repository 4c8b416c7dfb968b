"""Search a long-term memory store and rerank its hits: shared by phases 5 and 6.

``recall`` reuses the buffer's hits when its recall gate says so, else
retrieves (:mod:`prefrontal.phases.memory_retrieve`: the input and its
context searched, scored with neighbours, speakers and threads). The rerank
scales that relevance (normalised to the best hit) a little by recency, and
adds importance and novelty (items recalled often lately make way for
others). Items the agent holds as its own working notes are dropped; a
memory of a recent conversation turn is kept, and assembly renders it once
where the conversation section has it too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from datetime import date, datetime

from prefrontal.buffer import RecallDecision
from prefrontal.bundle.models import Fragment, Provenance, Section
from prefrontal.forgetting import remembered
from prefrontal.phases.fragments import fragment, loaded
from prefrontal.phases.memory_retrieve import (
    Relevant,
    candidate_limit,
    input_text,
    retrieve,
    search,
)
from prefrontal.phases.origins import memory_line
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.phases.store_calls import call_store
from prefrontal.retrieval.settings import RecallSettings, RerankWeights
from prefrontal.stores.long_term import MemoryItem, MemoryStore, ScoredMemory
from prefrontal.stores.read_source import read_detail
from prefrontal.trusted import assembler

__all__ = [
    "already_held",
    "candidate_limit",
    "input_text",
    "load_section",
    "recall",
    "rerank",
    "rerank_score",
    "search",
    "to_fragments",
]

RECENCY_HALF_LIFE_DAYS = 30.0


def recency(item: MemoryItem, now: datetime) -> float:
    """1.0 for something from now, halving every ``RECENCY_HALF_LIFE_DAYS``."""
    when = item.occurred_at or item.created_at
    age_days = max((now - when).total_seconds(), 0.0) / 86_400
    return math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


def novelty(item: MemoryItem) -> float:
    """Lower for items recalled many times already (1.0 when never recalled)."""
    return 1.0 / (1.0 + math.log1p(item.recall_count))


def rerank_score(
    relevance: float, item: MemoryItem, now: datetime, weights: RerankWeights
) -> float:
    """An item's rerank score, given its relevance normalised to the best hit (1.0)."""
    aged = 1.0 - weights.recency + weights.recency * recency(item, now)
    return (
        weights.relevance * relevance * aged
        + weights.importance * item.importance
        + weights.novelty * novelty(item)
    )


def rerank(hits: list[ScoredMemory], now: datetime, weights: RerankWeights) -> list[ScoredMemory]:
    """Hits rescored by :func:`rerank_score`, best first (ties by item id)."""
    order = _rerank_order([(h.score, h.item) for h in hits], now, weights)
    return [hits[i].model_copy(update={"score": score}) for score, i in order]


def _reranked(candidates: list[Relevant], now: datetime, weights: RerankWeights) -> list[Relevant]:
    """Each candidate's item with its :func:`rerank_score`, best first (ties by item id)."""
    order = _rerank_order(candidates, now, weights)
    return [(score, candidates[i][1]) for score, i in order]


def _rerank_order(
    candidates: list[Relevant], now: datetime, weights: RerankWeights
) -> list[tuple[float, int]]:
    """Each candidate's :func:`rerank_score` and its index in ``candidates``, best first.

    Relevance is normalised to the best candidate's; ties keep the order of the item ids,
    then the order given.
    """
    best = max([relevance for relevance, _ in candidates], default=0.0) or 1.0
    # rerank_score, recency and novelty inline: the same operations in the same order (an age
    # below zero counts as zero, as max(age, 0.0) does), math's functions looked up once
    weight, share, kept = weights.relevance, weights.recency, 1.0 - weights.recency
    importance, fresh = weights.importance, weights.novelty
    power, log1p, half_life = math.pow, math.log1p, RECENCY_HALF_LIFE_DAYS
    novel, known = NOVELTY, len(NOVELTY)
    negatives: list[float] = []
    append = negatives.append
    for relevance, item in candidates:
        seconds = (now - (item.occurred_at or item.created_at)).total_seconds()
        age_days = (seconds if seconds > 0.0 else 0.0) / 86_400
        count = item.recall_count
        score = (
            weight * (relevance / best) * (kept + share * power(0.5, age_days / half_life))
            + importance * item.importance
            + fresh * (novel[count] if 0 <= count < known else 1.0 / (1.0 + log1p(count)))
        )
        append(-score)
    return [(-negatives[i], i) for i in _best_first(negatives, candidates)]


NOVELTY = tuple(1.0 / (1.0 + math.log1p(count)) for count in range(1_024))
""":func:`novelty` of each recall count below 1,024: the same floats, looked up, not worked out."""


def _best_first(negatives: list[float], candidates: list[Relevant]) -> list[int]:
    """The indices of ``candidates`` by their negated scores, ties by item id, then index.

    Sorted by the scores alone (floats compared as floats) when no two are equal and none
    is NaN: then the ids never decide, and the order is the full key's.
    """
    total = len(negatives)
    if len(set(negatives)) == total and not math.isnan(sum(negatives)):
        return sorted(range(total), key=negatives.__getitem__)
    keyed = sorted((negative, candidates[i][1].item_id, i) for i, negative in enumerate(negatives))
    return [i for _, _, i in keyed]


def already_held(turn: TurnState) -> set[str]:
    """Ids the turn has from elsewhere: the agent's own notes in the buffer.

    Last turn's context fragments in the buffer do not count: this turn's
    context replaces them. Recent conversation turns do not count either:
    when the budget is short the conversation section renders only the
    newest, so a memory of an older one may still be needed; where both
    are rendered, assembly keeps the conversation's copy (same text).
    """
    held: set[str] = set()
    if turn.buffer is not None:
        held |= turn.buffer.buffer.kept_sources()
    return held


def memory_heading(item: MemoryItem) -> str | None:
    """The date an item happened on, as a group header (``None`` when unknown)."""
    when = item.occurred_at
    return _day(when.date()) if when else None


@remembered(maxsize=4_096)
def _day(day: date) -> str:
    return f"{day:%d %B %Y}"


async def recall(
    turn: TurnState,
    store: MemoryStore,
    phase: str,
    queries: Mapping[str, str],
    limit: int,
    settings: RecallSettings | None = None,
) -> tuple[list[Relevant], dict[str, object]]:
    """Candidates for ``queries``: the buffer's when its recall gate says so, else retrieved.

    ``queries`` has the ``"input"`` and its ``"context"``. Returns each candidate's
    relevance with its item, and what the trace should say about how they were got.
    """
    decision = await _gate(turn, store, phase)
    if decision is None or not decision.reuse:
        hits = await retrieve(turn, store, phase, queries, limit, settings or RecallSettings())
        return hits, _recall_detail(turn, decision)
    return await reuse(turn, store, phase, decision.held_ids), _recall_detail(turn, decision)


async def _gate(turn: TurnState, store: MemoryStore, phase: str) -> RecallDecision | None:
    """The recall gate's decision for ``phase`` (``None`` without a buffer or a gate).

    Nothing is fetched ahead of the decision: the held items are fetched by
    :func:`reuse` when the gate says to reuse them, and a turn that searches
    fetches none of them.
    """
    session = turn.buffer
    if session is None or not turn.config.recall.gate:
        return None
    held = session.buffer.held_memory_ids(phase)
    probe_text = turn.request.user_input
    overlap = turn.config.recall.gate_overlap
    return await call_store(
        turn,
        phase,
        lambda: session.recall_gate(
            store, phase, probe_text, now=turn.context.started_at, min_overlap=overlap, held=held
        ),
    )


async def reuse(
    turn: TurnState,
    store: MemoryStore,
    phase: str,
    item_ids: tuple[str, ...],
) -> list[Relevant]:
    """The held memory items, fetched by id (no search), each with the score it had last turn.

    Called only once the gate has decided to reuse: the one fetch of these items a turn makes.
    """
    tenant, now = turn.tenant, turn.context.started_at
    items = await call_store(turn, phase, lambda: store.get(tenant, list(item_ids)))
    scores = _held_scores(turn, phase)
    return [(scores.get(i.item_id, 1.0), i) for i in items if i.is_live(now)]


def _held_scores(turn: TurnState, store_name: str) -> dict[str, float]:
    if turn.buffer is None:
        return {}
    return {
        item_id: max(item.provenance.score or 0.0, 1e-6)
        for item in turn.buffer.items
        if item.provenance.store == store_name
        for item_id in item.provenance.item_ids
    }


def _recall_detail(turn: TurnState, decision: RecallDecision | None) -> dict[str, object]:
    if decision is None:
        return {"recall": "search", "recall_reason": "gate_off"}
    counters = turn.buffer.buffer.recall_counters if turn.buffer else None
    return {
        "recall": decision.mode.value,
        "recall_reason": decision.reason,
        "probe_overlap": round(decision.overlap, 4),
        "probe_hits": len(decision.probe_ids),
        "searches_saved": counters.saved if counters else 0,
        "searches_run": counters.searches if counters else 0,
    }


def to_fragments(
    turn: TurnState, hits: list[ScoredMemory], section: Section, phase: str
) -> list[Fragment]:
    """One fragment per hit, ranked as given, rendered in the order things happened."""
    make = MemoryFragments(turn, section, phase)
    return [make(hit.item, hit.score, rank) for rank, hit in enumerate(hits)]


class MemoryFragments:
    """Makes the fragments of one section's memories: what
    :func:`~prefrontal.phases.fragments.fragment` makes of each memory's line.

    Phases 5 and 6 make one per candidate that fits (about a hundred a
    turn): what is the same for all of them (the section and its name, the
    phase, the turn's token count) is worked out once, and each fragment and
    its provenance are assembled from values of the fields' types
    (:func:`prefrontal.trusted.assembler`: the field names checked once, not
    at each fragment), without the keyword plumbing and conversions of the
    general path. A line or phase the fields refuse
    takes the validated path, and raises there.
    """

    def __init__(self, turn: TurnState, section: Section, phase: str) -> None:
        self.turn = turn
        self.section = section
        self.store = section.value
        self.phase = phase
        self.count = turn.counter.count

    def __call__(self, item: MemoryItem, score: float, rank: int) -> Fragment:
        """The fragment of ``item`` at ``rank`` with its rerank ``score``."""
        text = memory_line(item)
        when = item.occurred_at
        created = item.created_at
        position = (when or created).timestamp() + (item.position or 0) * 1e-3
        if not (text and self.phase):  # what the fields refuse: raised by the validated path
            return fragment(
                self.turn,
                self.section,
                text,
                store=self.store,
                item_ids=(item.item_id,),
                phase=self.phase,
                rank=rank,
                position=position,
                score=round(score, 6),
                created_at=created,
                heading=memory_heading(item),
            )
        provenance = _provenance(
            {
                "store": self.store,
                "item_ids": (item.item_id,),
                "phase": self.phase,
                "score": six_places(score),
                "created_at": created,
                "updated_at": None,
                "version": None,
            }
        )
        return _fragment(
            {
                "section": self.section,
                "text": text,
                "tokens": self.count(text),
                "provenance": provenance,
                "rank": rank,
                "position": position,
                "heading": _day(when.date()) if when else None,
                "role": None,
                "volatile": False,
            }
        )


def six_places(score: float) -> float:
    """``float(round(score, 6))``, to the bit, in a third of the time for most scores.

    ``scaled = score * 1e6`` is within ``1.2e-7`` of the exact product when under a
    billion, so when it is further than that from a half-integer its nearest integer
    ``whole`` is the exact product's; ``round`` gives the float nearest ``whole / 10**6``,
    and so does the division (both exact operands, one correctly rounded quotient). Zero
    (whose sign ``round`` keeps), scores near a half, NaN, infinities and float
    subclasses take ``round`` itself.
    """
    scaled = score * 1e6
    if type(score) is float and -1e9 < scaled < 1e9:
        whole = round(scaled)
        if whole and -0.499_99 < scaled - whole < 0.499_99:
            return whole / 1e6
    return float(round(score, 6))


_provenance = assembler(
    Provenance,
    ("store", "item_ids", "phase", "score", "created_at", "updated_at", "version"),
)
_fragment = assembler(
    Fragment,
    ("section", "text", "tokens", "provenance", "rank", "position", "heading", "role", "volatile"),
)
"""What :class:`MemoryFragments` assembles, each from a dictionary naming these fields."""


WINNER_ROOM = 1.5
"""Phases 5 and 6 render and count their best hits until these hold this many times the
turn's available tokens: no section is given more than the budget, and the share past
it leaves room for what assembly skips (too long, or the same text as another section's).
Demands stay above what allocation can grant, so allocation is unchanged."""


async def load_section(
    turn: TurnState,
    store: MemoryStore,
    section: Section,
    phase: str,
    query: dict[str, str],
    candidates: int,
    weights: RerankWeights,
) -> PhaseOutcome:
    """Recall, rerank, drop what the turn holds elsewhere, and load the section's fragments.

    The body of phases 5 and 6: they differ in their store, query and weights.
    """
    limit = candidate_limit(turn, candidates)
    hits, how = await recall(turn, store, phase, query, limit, _scoring(turn))
    held = already_held(turn)
    ranked = _reranked(hits, turn.context.started_at, weights)
    fresh = [(score, item) for score, item in ranked if item.item_id not in held]
    fragments = _winners(turn, fresh, section, phase, int(turn.policy.available * WINNER_ROOM))
    turn.loads[section] = fragments
    count, tokens = loaded(fragments)
    return PhaseOutcome(
        items_loaded=count,
        tokens_loaded=tokens,
        items_dropped=len(hits) - count,
        detail={
            "query_chars": sum(map(len, query.values())),
            "hits": len(hits),
            "held": len(hits) - len(fresh),
            "past_room": len(fresh) - count,
            **how,
            **read_detail(),
        },
    )


def _scoring(turn: TurnState) -> RecallSettings:
    """The turn's scoring settings: the feedback query weighs nothing unless feedback is on."""
    recall = turn.config.recall
    return recall.scoring if recall.feedback else _without_feedback(recall.scoring)


@remembered(maxsize=64, holds_text=False)
def _without_feedback(settings: RecallSettings) -> RecallSettings:
    """``settings`` with no weight for the feedback query, made once per distinct settings."""
    return replace(settings, feedback_weight=0.0)


def _winners(
    turn: TurnState,
    ranked: list[tuple[float, MemoryItem]],
    section: Section,
    phase: str,
    room: int,
) -> list[Fragment]:
    """Fragments of the best of ``ranked`` until their tokens reach ``room`` (the rest unbuilt)."""
    make = MemoryFragments(turn, section, phase)
    fragments: list[Fragment] = []
    spent = 0
    for rank, (score, item) in enumerate(ranked):
        if spent >= room:
            break
        made = make(item, score, rank)
        fragments.append(made)
        spent += made.tokens
    return fragments
