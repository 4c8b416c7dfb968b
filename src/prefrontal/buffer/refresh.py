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
from typing import Protocol

from prefrontal.buffer.config import BufferConfig
from prefrontal.buffer.decay import awaits_promotion
from prefrontal.buffer.models import BufferItem, Focus, Lifetime, NewItem, SalienceFactors
from prefrontal.buffer.policies import Eviction
from prefrontal.buffer.salience import admission_score, measure, salience_factors
from prefrontal.buffer.snapshot import AddResult, Outcome, RefreshReport
from prefrontal.buffer.themes import Coherence


class TurnBuffer(Protocol):
    """What a turn's refresh uses of a buffer (:class:`~prefrontal.buffer.WorkingMemoryBuffer`)."""

    @property
    def config(self) -> BufferConfig: ...
    @property
    def items(self) -> tuple[BufferItem, ...]: ...
    @property
    def total_tokens(self) -> int: ...
    @property
    def themes(self) -> tuple[str, ...]: ...
    def __contains__(self, item_id: object) -> bool: ...
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
    def renew(
        self, new: NewItem, *, now: datetime | None = None, turn_id: str | None = None
    ) -> AddResult | None: ...
    def refresh_themes(self) -> tuple[str, ...]: ...
    def mark_turn(self, now: datetime | None = None) -> None: ...
    def coherence(self) -> Coherence: ...


async def refresh_turn(
    buffer: TurnBuffer,
    fragments: Sequence[NewItem],
    *,
    focus: Focus,
    now: datetime | None = None,
    turn_id: str | None = None,
) -> RefreshReport:
    """Refresh ``buffer`` with this turn's ``fragments``; report every decision.

    ``turn_id``, when given, is the turn whose fragments they are: the
    provenance of every item they admit or refresh names it (the fragments
    themselves need not, so that one offer serves a fragment turn after turn).
    """
    at = buffer.moment(now)
    offered = _distinct(fragments)
    evicted: list[Eviction] = [*await buffer.fade(at)]
    evicted += buffer.retire_turn_items({f.resolved_id() for f in offered}, at)
    results: list[AddResult] = []
    placed = {i.item_id for i in buffer.items if awaits_promotion(i)}
    for fragment, factors in _offer_order(buffer, offered, focus, at):
        renewed = buffer.renew(fragment, now=at, turn_id=turn_id) if factors is None else None
        result = renewed or await buffer.add(
            fragment, focus=focus, now=at, protected=placed, factors=factors, turn_id=turn_id
        )
        results.append(result)
        evicted += result.evicted
        if result.outcome is not Outcome.REFUSED:
            placed.add(result.item_id)
    themes = buffer.refresh_themes()
    buffer.mark_turn(at)
    return RefreshReport(
        admitted=_with(results, Outcome.ADMITTED),
        refreshed=_with(results, Outcome.REFRESHED),
        refused=_with(results, Outcome.REFUSED),
        evicted=tuple(evicted),
        items=buffer.items,
        total_tokens=buffer.total_tokens,
        themes=themes,
        coherence=buffer.coherence(),
    )


def _distinct(fragments: Sequence[NewItem]) -> list[NewItem]:
    """Each fragment once (by id, the first kept), marked as a turn fragment."""
    seen: dict[str, NewItem] = {}
    for fragment in fragments:
        seen.setdefault(fragment.resolved_id(), fragment)
    return [
        f if f.lifetime is Lifetime.TURN else f.model_copy(update={"lifetime": Lifetime.TURN})
        for f in seen.values()
    ]


def _offer_order(
    buffer: TurnBuffer, offered: list[NewItem], focus: Focus, at: datetime
) -> list[tuple[NewItem, SalienceFactors | None]]:
    """Held first, then pinned, then by admission score (best first), then as given.

    Each new fragment comes with its salience factors, computed once here.
    """
    keyed: list[tuple[tuple[bool, bool, float, int], NewItem, SalienceFactors | None]] = []
    against = measure(focus, buffer.themes)
    for index, item in enumerate(offered):
        if item.resolved_id() in buffer:
            keyed.append(((False, not item.pinned, 0.0, index), item, None))
            continue
        factors = salience_factors(item, against, at, buffer.config)
        score = admission_score(factors, buffer.config)
        keyed.append(((True, not item.pinned, -score, index), item, factors))
    keyed.sort(key=lambda entry: entry[0])
    return [(item, factors) for _, item, factors in keyed]


def _with(results: list[AddResult], outcome: Outcome) -> tuple[AddResult, ...]:
    return tuple(r for r in results if r.outcome is outcome)
