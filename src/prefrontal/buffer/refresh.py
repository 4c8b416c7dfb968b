"""One turn's refresh of a session's buffer (phase 10).

This turn's fragments take the place of the last turn's:

1. items that faded out since the last turn go (``faded``; under SUMMARIZE
   they are folded into the session's summary, ``summarized``);
2. the last turn's fragments that this turn does not bring again go
   (``replaced``); the agent's own items (tool results, reflections, notes)
   stay under the eviction rules;
3. fragments already held are refreshed, not added twice; the new ones are
   offered pinned first, then by admission score, best first, so that when
   room runs out it is the weakest that are refused. A fragment admitted this
   turn is never evicted to make room for another of the same turn, nor is one
   of the agent's own items that only the buffer holds (a note, a tool result,
   the summary: :func:`~prefrontal.buffer.decay.awaits_promotion`): a fragment
   is a copy, and refusing it loses nothing, while the agent's items leave by
   the policy only to make room for the agent's own newcomers, or by fading
   (promoted to long-term memory first);
4. the session's dominant themes are recomputed, and the turn counted.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from operator import attrgetter
from typing import Protocol

from prefrontal.buffer.config import BufferConfig
from prefrontal.buffer.decay import awaits_promotion
from prefrontal.buffer.models import BufferItem, Focus, Lifetime, NewItem, SalienceFactors
from prefrontal.buffer.offers import Offer
from prefrontal.buffer.policies import Eviction
from prefrontal.buffer.salience import measure
from prefrontal.buffer.scoring import Scored, Scoring
from prefrontal.buffer.snapshot import AddResult, Outcome, RefreshReport
from prefrontal.buffer.themes import Coherence
from prefrontal.buffer.tokens import CountTokens


class TurnBuffer(Protocol):
    """What a turn's refresh uses of a buffer (:class:`~prefrontal.buffer.WorkingMemoryBuffer`)."""

    @property
    def config(self) -> BufferConfig: ...
    @property
    def count_tokens(self) -> CountTokens: ...
    @property
    def items(self) -> tuple[BufferItem, ...]: ...
    @property
    def total_tokens(self) -> int: ...
    @property
    def themes(self) -> tuple[str, ...]: ...
    def moment(self, now: datetime | None = None) -> datetime: ...
    async def fade(self, now: datetime | None = None) -> tuple[Eviction, ...]: ...
    def retire_turn_items(
        self, keep: Collection[str], now: datetime | None = None
    ) -> tuple[Eviction, ...]: ...
    async def add(
        self,
        new: NewItem,
        *,
        focus: Focus | None = None,
        now: datetime | None = None,
        protected: Collection[str] = (),
        factors: SalienceFactors | None = None,
        turn_id: str | None = None,
    ) -> AddResult: ...
    async def admit_scored(
        self,
        offer: Scored,
        *,
        focus: Focus | None,
        now: datetime | None = None,
        protected: Collection[str] = (),
        turn_id: str | None = None,
    ) -> AddResult: ...
    def renew_all(
        self,
        offers: Sequence[tuple[str, Offer]],
        *,
        now: datetime | None = None,
        turn_id: str | None = None,
    ) -> list[AddResult]: ...
    def refuse_all(
        self, offers: Sequence[Scored], protected: Collection[str] = ()
    ) -> list[AddResult] | None: ...
    def refresh_themes(self) -> tuple[str, ...]: ...
    def mark_turn(self, now: datetime | None = None) -> None: ...
    def coherence(self) -> Coherence: ...


_SCORE = attrgetter("score")
_SESSION_ITEM = Lifetime.SESSION


async def refresh_turn(
    buffer: TurnBuffer,
    fragments: Sequence[Offer],
    *,
    focus: Focus,
    now: datetime | None = None,
    turn_id: str | None = None,
) -> RefreshReport:
    """Refresh ``buffer`` with this turn's ``fragments``; report every decision.

    ``turn_id``, when given, is the turn whose fragments they are: the
    provenance of every item they admit or refresh names it (the fragments
    themselves need not, so that one offer serves a fragment turn after turn).
    An offer's item is made (:meth:`~.offers.Offer.made`) only for what
    :meth:`~.buffer.WorkingMemoryBuffer.add` takes (a held item that grew, an
    offer larger than the buffer): scoring, refusing, renewing and admitting
    read its fields.
    The new fragments are scored first (:class:`~.scoring.Scoring`), to be
    offered best first; once nothing new can enter (every slot holds an item
    that may not leave), the rest are refused at once, each refusal's reason
    and decision worked out when read (:meth:`~.buffer.WorkingMemoryBuffer.refuse_all`).
    """
    at = buffer.moment(now)
    offered = _distinct(fragments)
    evicted: list[Eviction] = [*await buffer.fade(at)]
    evicted += buffer.retire_turn_items(offered, at)
    holding = buffer.items
    placed = {  # (what awaits promotion is a session item or one being consolidated)
        i.item_id
        for i in holding
        if (i.lifetime is _SESSION_ITEM or i.consolidating_into is not None) and awaits_promotion(i)
    }
    holds = {i.item_id for i in holding}  # (one set: no call per fragment)
    held: list[tuple[str, Offer]] = []
    fresh: list[tuple[str, Offer]] = []
    for pair in offered.items():
        (held if pair[0] in holds else fresh).append(pair)
    pinned = [pair for pair in held if pair[1].pinned]
    if pinned:  # pinned first, then as given
        held = [*pinned, *(pair for pair in held if not pair[1].pinned)]
    ranked = _ranked(buffer, fresh, focus, at)
    outcomes: dict[Outcome, list[AddResult]] = {outcome: [] for outcome in Outcome}
    refreshed = outcomes[Outcome.REFRESHED]
    index = 0
    while index < len(held):
        renewed = buffer.renew_all(held[index:], now=at, turn_id=turn_id)
        refreshed += renewed
        placed.update(item_id for item_id, _ in held[index : index + len(renewed)])
        index += len(renewed)
        if index == len(held):
            break
        fragment = held[index][1]  # grown, or no longer held: offered as new
        index += 1
        result = await buffer.add(
            fragment.made(), focus=focus, now=at, protected=placed, turn_id=turn_id
        )
        outcome = result.outcome
        outcomes[outcome].append(result)
        evicted += result.evicted
        if outcome is not Outcome.REFUSED:
            placed.add(result.item_id)
    protected = frozenset(placed)  # grows only as offers are placed: one set per admission
    for index, offer in enumerate(ranked):
        refused = buffer.refuse_all(ranked[index:], protected)
        if refused is not None:  # nothing new can enter: the rest are refused at once
            outcomes[Outcome.REFUSED] += refused
            break
        result = await buffer.admit_scored(
            offer, focus=focus, now=at, protected=protected, turn_id=turn_id
        )
        outcome = result.outcome
        outcomes[outcome].append(result)
        if outcome is not Outcome.REFUSED:
            evicted += result.evicted
            protected = protected | {offer.item_id}
    themes = buffer.refresh_themes()
    buffer.mark_turn(at)
    return RefreshReport(
        admitted=tuple(outcomes[Outcome.ADMITTED]),
        refreshed=tuple(outcomes[Outcome.REFRESHED]),
        refused=tuple(outcomes[Outcome.REFUSED]),
        evicted=tuple(evicted),
        items=buffer.items,
        total_tokens=buffer.total_tokens,
        themes=themes,
        coherence=buffer.coherence(),
    )


def _distinct(fragments: Sequence[Offer]) -> dict[str, Offer]:
    """Each fragment once, by id (the first kept), marked as a turn fragment."""
    seen: dict[str, Offer] = {}
    turn = Lifetime.TURN
    for fragment in fragments:
        item_id = fragment.item_id  # (``resolved_id``, without the call for a named one)
        if item_id is None:
            item_id = fragment.resolved_id()
        if item_id not in seen:
            seen[item_id] = (
                fragment
                if fragment.lifetime is turn
                else fragment.made().model_copy(update={"lifetime": turn})
            )
    return seen


def _ranked(
    buffer: TurnBuffer, fresh: list[tuple[str, Offer]], focus: Focus, at: datetime
) -> list[Scored]:
    """The fragments new to the buffer, scored: pinned first, then by admission score (best
    first), then as given."""
    scoring = Scoring(measure(focus, buffer.themes), at, buffer.config)
    count = buffer.count_tokens
    scored = [
        scoring(f, item_id, f.tokens if f.tokens is not None else count(f.content))
        for item_id, f in fresh
    ]
    return best_first(scored)


def best_first(scored: list[Scored]) -> list[Scored]:
    """``scored`` pinned first, then by admission score, best first, then as given: sorted by
    ``(not pinned, -score)``, without a key made for each (``scored`` is sorted in place)."""
    scored.sort(key=_SCORE, reverse=True)  # equal scores stay as given: a stable sort
    pinned = [s for s in scored if s.new.pinned]
    return [*pinned, *(s for s in scored if not s.new.pinned)] if pinned else scored
