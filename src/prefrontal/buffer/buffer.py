"""The working-memory buffer: a hard-bounded set of items with admission and eviction.

Invariant: after every operation, and at every instant in between, the
buffer holds at most ``max_items`` items and ``max_tokens`` tokens. Each
insertion is check, then evict, then insert: room is found first (or the
item is refused), the victims are removed, and only then is the item put in
(:class:`~prefrontal.buffer.holding.Holding` refuses anything else). An item
larger than the whole buffer is refused with a reason.

Nothing the agent noted leaves unkept: with a ``keeper``, an item only the
buffer holds is written to long-term memory before the policy lets it go
(evicted, faded, folded, dropped to fit smaller bounds); see
:mod:`~prefrontal.buffer.promotion`.

A buffer belongs to one task at a time (a session's turn); it is not safe to
mutate it from several tasks at once. Time comes from the ``now`` argument,
or the injected ``clock``: the same operations at the same times always give
the same state.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import structlog

from prefrontal.buffer import building
from prefrontal.buffer import tokens as default_tokens
from prefrontal.buffer.config import BufferConfig, OverflowPolicy
from prefrontal.buffer.decay import awaits_promotion, faded_among, has_faded
from prefrontal.buffer.events import EventKind
from prefrontal.buffer.folding import Folded, dropped, fold, fold_faded
from prefrontal.buffer.holding import Holding
from prefrontal.buffer.models import (
    BufferItem,
    Focus,
    ItemSource,
    Lifetime,
    NewItem,
    SalienceFactors,
)
from prefrontal.buffer.offers import Offer
from prefrontal.buffer.policies import (
    Eviction,
    EvictionContext,
    EvictionReason,
    Need,
    describe,
    select_victims,
)
from prefrontal.buffer.promotion import Keeper, PromotionError, promotion_note
from prefrontal.buffer.recall_gate import RecallCounters, RecallDecision
from prefrontal.buffer.refresh import refresh_turn
from prefrontal.buffer.salience import (
    AdmissionDecision,
    decide,
    measure,
    salience_factors,
    threshold,
)
from prefrontal.buffer.scoring import Scored
from prefrontal.buffer.snapshot import (
    SNAPSHOT_FORMAT,
    AddResult,
    BufferCounters,
    BufferSnapshot,
    Outcome,
    add_result,
    known_valid,
    refused_later,
)
from prefrontal.buffer.summarizer import ExtractiveSummarizer, Summarizer
from prefrontal.buffer.themes import Carried, Coherence, carriers, coherence, dominant_themes
from prefrontal.buffer.tokens import CountTokens
from prefrontal.errors import WorkingMemoryError
from prefrontal.stores.records import utc_now
from prefrontal.trusted import assemble

_log = structlog.get_logger("prefrontal.buffer")

if TYPE_CHECKING:
    from prefrontal.buffer.events import EventBus
    from prefrontal.buffer.snapshot import RefreshReport

Clock = Callable[[], datetime]


@dataclass(frozen=True, slots=True)
class _Kept:
    """The held items that may not leave to make room: how many, their tokens, and whether
    they are all of them (then, with every slot taken, nothing new can enter)."""

    count: int
    tokens: int
    everything: bool


class WorkingMemoryBuffer:
    """A bounded working-memory buffer; see the module docstring for its invariant."""

    def __init__(
        self,
        config: BufferConfig | None = None,
        *,
        count_tokens: CountTokens | None = None,
        summarizer: Summarizer | None = None,
        clock: Clock | None = None,
        keeper: Keeper | None = None,
    ) -> None:
        self.keeper: Keeper | None = keeper
        """Writes the notes only this buffer holds to long-term memory before they leave
        (``None``: a plain bounded buffer, whose items leave as the policy says)."""
        self.count_tokens: CountTokens = count_tokens or default_tokens.count_tokens
        self.summarizer: Summarizer = summarizer or ExtractiveSummarizer()
        self.clock: Clock = clock or utc_now
        self._held = Holding(config or BufferConfig())
        self._themes: tuple[str, ...] = ()
        self._recall = RecallCounters()
        self._last_context: (
            tuple[datetime, Focus | None, tuple[str, ...], BufferConfig, EvictionContext] | None
        ) = None
        self._last_kept: tuple[tuple[int, frozenset[str]], _Kept] | None = None
        self._last_carriers: tuple[int, Carried] | None = None
        self._settled: tuple[datetime, int, BufferConfig] | None = None
        """When :meth:`fade` last ran: the instant, the held items' change count, the settings.
        Fading again with all three the same finds nothing (a turn fades at its start,
        then again when its refresh begins, at the same instant)."""

    # ----------------------------------------------------------------- reading

    @property
    def config(self) -> BufferConfig:
        """The buffer's settings (change them with :meth:`reconfigure`)."""
        return self._held.config

    @property
    def events(self) -> EventBus:
        """The subscribers of this buffer's events."""
        return self._held.events

    @events.setter
    def events(self, bus: EventBus) -> None:
        self._held.events = bus

    @property
    def items(self) -> tuple[BufferItem, ...]:
        """Every held item, in insertion order."""
        return self._held.ordered()

    @property
    def total_tokens(self) -> int:
        """Tokens held."""
        return self._held.tokens

    @property
    def themes(self) -> tuple[str, ...]:
        """The session's dominant themes as of the last turn refresh (or :meth:`refresh_themes`).

        Eviction protects theme carriers; themes change only at turn
        boundaries, so a burst of additions within a turn cannot vote
        itself into protection.
        """
        return self._themes

    @property
    def counters(self) -> BufferCounters:
        """What this buffer has done over its life."""
        return self._held.counters

    @property
    def recall_counters(self) -> RecallCounters:
        """Searches run and searches saved by the recall gate in this session."""
        return self._recall

    @property
    def utilisation(self) -> float:
        """How full the buffer is: the larger of its item and token ratios."""
        held, config = self._held, self._held.config
        return max(len(held.items) / config.max_items, held.tokens / config.max_tokens)

    def __len__(self) -> int:
        return len(self._held.items)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._held.items

    def get(self, item_id: str) -> BufferItem | None:
        """The held item ``item_id``, without touching it."""
        return self._held.items.get(item_id)

    def coherence(self) -> Coherence:
        """How well the held items hang together around the session's themes."""
        items = tuple(self._held.items.values())
        fade = self.config.fade_seconds
        return coherence(items, self._themes, fade_seconds=fade, carried=self._carriers())

    def held_memory_ids(self, store: str | None = None) -> frozenset[str]:
        """Ids of the memory items behind the held retrieved items (of ``store`` if given)."""
        return frozenset(
            item_id
            for item in self._held.items.values()
            if item.source is ItemSource.MEMORY_RETRIEVAL
            and (store is None or item.provenance.store == store)
            for item_id in item.provenance.item_ids
        )

    def exchange_ids(self) -> frozenset[str]:
        """Ids of the session's own messages the held items stand for (conversation store).

        ``end_turn`` writes each of a turn's messages to episodic memory under
        the same id, so a search may find them: the recall gate counts them as held.
        """
        return frozenset(
            item_id
            for item in self._held.items.values()
            if item.provenance.store == "conversation"
            for item_id in item.provenance.item_ids
        )

    def kept_sources(self) -> frozenset[str]:
        """Source ids behind the items the agent keeps (session lifetime), of every kind."""
        return frozenset(
            item_id
            for item in self._held.items.values()
            if item.lifetime is Lifetime.SESSION
            for item_id in (*item.provenance.item_ids, *item.summary_of)
        )

    def moment(self, now: datetime | None = None) -> datetime:
        """``now``, or the clock's time, as an aware datetime (naive times are read as UTC)."""
        at = now or self.clock()
        return at if at.tzinfo is not None else at.replace(tzinfo=UTC)

    # ------------------------------------------------------------ sync changes

    def access(self, item_id: str, now: datetime | None = None) -> BufferItem | None:
        """Touch ``item_id`` (last access, access count) and return it; ``None`` if absent.

        An item that has faded is removed instead, and ``None`` returned; under
        SUMMARIZE, or when it must be promoted first (the buffer has a keeper),
        it is left for :meth:`fade` to fold or promote.
        """
        at = self.moment(now)
        item = self._held.items.get(item_id)
        if item is None:
            return None
        if has_faded(item, at, self.config):
            if self.config.policy is OverflowPolicy.SUMMARIZE or (
                self.keeper is not None and awaits_promotion(item)
            ):
                return None
            self._held.publish([self._held.take_out(item, EvictionReason.FADED, "idle")], at)
            return None
        touched = item.touched(at)
        self._held.replace(touched)
        self._held.last_activity = at
        return touched

    def pin(self, item_id: str, pinned: bool = True, now: datetime | None = None) -> BufferItem:
        """Pin (or unpin) a held item; pinned items are never evicted and never fade.

        Pinning is the agent keeping an item: a pinned turn fragment becomes a
        session item, so the next turn's refresh does not replace it either.
        """
        at = self.moment(now)
        item = self._held.items.get(item_id)
        if item is None:
            raise WorkingMemoryError(f"the buffer holds no item {item_id!r}")
        lifetime = Lifetime.SESSION if pinned else item.lifetime
        changed = item.model_copy(update={"pinned": pinned, "lifetime": lifetime})
        self._held.replace(changed)
        self._held.emit(EventKind.UPDATED, at, item_id, "pinned" if pinned else "unpinned")
        return changed

    def remove(self, item_id: str, now: datetime | None = None) -> Eviction | None:
        """Remove ``item_id`` on request (pinned or not); ``None`` if it is not held."""
        at = self.moment(now)
        item = self._held.items.get(item_id)
        if item is None:
            return None
        eviction = self._held.take_out(item, EvictionReason.REMOVED, "removed on request")
        self._held.publish([eviction], at)
        return eviction

    def clear(self, now: datetime | None = None) -> tuple[Eviction, ...]:
        """Remove every item, pinned ones included (one ``cleared`` event)."""
        at = self.moment(now)
        gone = tuple(
            self._held.take_out(item, EvictionReason.CLEARED, "buffer cleared")
            for item in self.items
        )
        self._held.emit(EventKind.CLEARED, at, None, "cleared", {"items_cleared": len(gone)})
        return gone

    async def expire(self, now: datetime | None = None) -> tuple[Eviction, ...]:
        """The same as :meth:`fade`: one behaviour on every path (folded under SUMMARIZE)."""
        return await self.fade(now)

    async def fade(self, now: datetime | None = None) -> tuple[Eviction, ...]:
        """Let time act: the unpinned items not touched for ``fade_seconds`` leave.

        Under SUMMARIZE they are folded into the session's summary (which does
        not fade itself: every fold renews it); under the other policies, or
        when the summary cannot take them, they are dropped (reason ``faded``). What
        may fade at all: :func:`~prefrontal.buffer.decay.has_faded`. The notes
        among them are promoted first (:meth:`promote`); when that fails they
        stay, for the next fade to try again (logged, and announced by an
        ``updated`` event of reason ``promotion_failed`` each).
        """
        at = self.moment(now)
        if self._settled == (at, self._held.changes, self.config):
            return ()  # faded at this very instant, and nothing held has changed since
        gone = await self._fade(at)
        self._settled = (at, self._held.changes, self.config)
        return gone

    async def _fade(self, at: datetime) -> tuple[Eviction, ...]:
        folding = self.config.policy is OverflowPolicy.SUMMARIZE
        faded = [
            i for i in faded_among(self.items, at, self.config) if not (folding and i.is_summary)
        ]
        faded, promoted = await self._promote_or_keep(faded, at)
        detail = f"idle {self.config.fade_seconds:g} s"
        if not folding:
            return self._take_out_all(faded, EvictionReason.FADED, detail, at, promoted)
        folded = await fold_faded(
            self._held, faded, self._context(at, None), self.summarizer, self.count_tokens
        )
        if folded is None:
            return self._take_out_all(faded, EvictionReason.FADED, detail, at, promoted)
        folded = _promoted_fold(folded, promoted)
        self._swap_in(folded)
        self._held.count("summarized")
        self._held.publish(folded.evictions, at)
        self._held.emit(EventKind.UPDATED, at, folded.summary.item_id, "summary")
        return tuple(folded.evictions)

    def retire_turn_items(
        self, keep: Collection[str], now: datetime | None = None
    ) -> tuple[Eviction, ...]:
        """Remove the earlier turns' fragments that are not in ``keep`` (this turn's ids).

        A fragment pinned for its turn goes too; what the agent pinned itself
        (see :meth:`pin`) is a session item and stays.
        """
        at = self.moment(now)
        stale = [i for i in self.items if i.lifetime is Lifetime.TURN and i.item_id not in keep]
        return self._take_out_all(stale, EvictionReason.REPLACED, "not in this turn's context", at)

    def mark_consolidation(
        self, targets: Mapping[str, str], now: datetime | None = None
    ) -> tuple[BufferItem, ...]:
        """Note, on each held item named in ``targets``, the episodic item it is promoted into.

        Items not held are skipped; the marked items are returned. Nothing
        else about them changes (see :mod:`prefrontal.formation`).
        """
        at = self.moment(now)
        marked = []
        for item_id, target in targets.items():
            item = self._held.items.get(item_id)
            if item is None:
                continue
            changed = item.model_copy(update={"consolidating_into": target})
            self._held.replace(changed)
            self._held.emit(EventKind.UPDATED, at, item_id, "consolidating")
            marked.append(changed)
        return tuple(marked)

    def release_consolidated(
        self, targets: Collection[str], now: datetime | None = None
    ) -> tuple[Eviction, ...]:
        """Remove the items marked for one of ``targets``: they now live in episodic memory."""
        at = self.moment(now)
        done = [i for i in self.items if i.consolidating_into in targets]
        gone = tuple(
            self._held.take_out(
                i, EvictionReason.CONSOLIDATED, f"promoted into {i.consolidating_into}"
            )
            for i in done
        )
        self._held.publish(gone, at)
        return gone

    def refresh_themes(self) -> tuple[str, ...]:
        """Recompute the session's dominant themes from the held items."""
        limit = self.config.dominant_themes
        self._themes = dominant_themes((), limit, carried=self._carriers())
        return self._themes

    def _carriers(self) -> Carried:
        """The held items as what carries their themes (:func:`~.themes.carriers`), worked
        out again only when they changed (a turn's refresh asks for its themes, then for its
        coherence, over the same items)."""
        held = self._held
        last = self._last_carriers
        if last is not None and last[0] == held.changes:
            return last[1]
        carried = carriers(held.items.values())
        self._last_carriers = (held.changes, carried)
        return carried

    def record_recall(self, decision: RecallDecision) -> RecallCounters:
        """Count one recall-gate decision (a search run, or a search saved)."""
        self._recall = self._recall.count(decision)
        return self._recall

    def mark_turn(self, now: datetime | None = None) -> None:
        """Count a turn and note the session's start and last activity."""
        at = self.moment(now)
        self._held.started_at = self._held.started_at or at
        self._held.last_activity = at
        self._held.count("turns")

    def _take_out_all(
        self,
        items: Sequence[BufferItem],
        reason: EvictionReason,
        detail: str,
        at: datetime,
        promoted: Mapping[str, str] | None = None,
    ) -> tuple[Eviction, ...]:
        """Take ``items`` out (each promoted one naming its long-term id) and announce it."""
        kept = promoted or {}
        gone = tuple(
            self._held.take_out(
                i, reason, _with_id(detail, kept.get(i.item_id)), promoted_to=kept.get(i.item_id)
            )
            for i in items
        )
        self._held.publish(gone, at)
        return gone

    # ----------------------------------------------------------- async changes

    async def add(
        self,
        new: NewItem,
        *,
        focus: Focus | None = None,
        now: datetime | None = None,
        protected: Collection[str] = (),
        factors: SalienceFactors | None = None,
        turn_id: str | None = None,
    ) -> AddResult:
        """Offer ``new`` to the buffer: admit, refresh or refuse it, and say why.

        An item already held (same id) is refreshed: touched and updated in
        place, never added twice. A new item must pass admission; room is then
        made under the overflow policy, never at the cost of a pinned item or
        one in ``protected``; an item that would need one of those to leave is
        refused (``no_room``). A victim only the buffer holds (a note:
        :func:`~prefrontal.buffer.decay.awaits_promotion`) is promoted first
        (:meth:`promote`) and its eviction names its long-term id; when the
        promotion fails, such victims stay and room is made without them if
        it can be, else the item is refused with a reason that says so.
        Refusals are results, not exceptions.
        ``factors`` are its salience factors when the caller has computed them
        already (for this focus, these themes and this time). ``turn_id``,
        when given, is the turn offering it: the provenance of the item
        admitted or refreshed names that turn.
        """
        at = self.moment(now)
        item_id = new.resolved_id()
        tokens = new.tokens if new.tokens is not None else self.count_tokens(new.content)
        if tokens > self.config.max_tokens:
            return self._refuse(item_id, tokens, _too_large(tokens, self.config), None)
        held = self._held.items.get(item_id)
        if held is not None:
            return await self._refresh(held, new, tokens, at, focus, protected, turn_id)
        if factors is None:
            factors = salience_factors(
                new, measure(focus or Focus(), self._themes), at, self.config
            )
        decision = decide(item_id, new, factors, self.utilisation, self.config)
        return await self._admit(new, item_id, tokens, decision, at, focus, protected, turn_id)

    async def admit_scored(
        self,
        offer: Scored,
        *,
        focus: Focus | None,
        now: datetime | None = None,
        protected: Collection[str] = (),
        turn_id: str | None = None,
    ) -> AddResult:
        """What :meth:`add` does for ``offer``, an item it does not hold whose factors and
        scores are known (for this focus, these themes and this time): a turn's refresh
        scores its new fragments first, to offer them best first."""
        at = self.moment(now)
        new, item_id, tokens = offer.new, offer.item_id, offer.tokens
        config = self._held.config
        if tokens > config.max_tokens or item_id in self._held.items:
            return await self.add(
                new.made(),
                focus=focus,
                now=at,
                protected=protected,
                factors=offer.factors,
                turn_id=turn_id,
            )
        utilisation = self.utilisation
        if not _admits(new, offer.score, threshold(utilisation, config), config):
            self._held.count("refused")
            return refused_later(item_id, tokens, _BELOW, (offer, utilisation, config))
        decision = decide(item_id, new, offer.factors, utilisation, config, offer.scores)
        held = self._held
        if len(held.items) < config.max_items and held.tokens + tokens <= config.max_tokens:
            item = building.admitted(item_id, new, tokens, decision, at, held.take_seq(), turn_id)
            held.put(item)  # room enough: nothing leaves, nothing is folded
            return self._admitted(item, decision, None, None, [], at)
        ctx = self._context(at, focus)
        victims = self._victims(tokens, ctx, protected)
        if victims is None:  # refused before the item is built
            return self._refuse(item_id, tokens, self._no_room(tokens, protected), decision)
        item = building.admitted(item_id, new, tokens, decision, at, held.take_seq(), turn_id)
        return await self._place(item, decision, at, ctx, protected, victims)

    def refuse_all(
        self, offers: Sequence[Scored], protected: Collection[str] = ()
    ) -> list[AddResult] | None:
        """Every one of ``offers`` (items it does not hold, scored for now) refused, when
        nothing new can enter: every slot holds an item that may not leave (pinned or
        ``protected``). ``None`` (nothing done) when something might.

        Each refusal is what :meth:`admit_scored` gives that offer, counted the same; its
        reason and decision are worked out when first read (a turn's refresh meets this
        once its fragments have filled the buffer: most of the offers left are never
        read one by one).
        """
        held, config = self._held, self._held.config
        if len(held.items) < config.max_items or not self._kept(protected).everything:
            return None
        closed = _Closed(self.utilisation, config, self._kept(protected))
        largest = config.max_tokens
        later = refused_later
        refused = [
            later(offer.item_id, tokens, closed, offer)
            if (tokens := offer.tokens) <= largest
            else add_result(offer.item_id, Outcome.REFUSED, _too_large(tokens, config), tokens)
            for offer in offers
        ]
        held.count("refused", len(refused))
        return refused

    async def _admit(
        self,
        new: NewItem,
        item_id: str,
        tokens: int,
        decision: AdmissionDecision,
        at: datetime,
        focus: Focus | None,
        protected: Collection[str],
        turn_id: str | None,
    ) -> AddResult:
        """Admit ``new``, an item not held, as ``decision`` says, making room for it; or
        refuse it, saying why (the rest of :meth:`add`)."""
        if not decision.admitted:
            return self._refuse(item_id, tokens, _below(decision), decision)
        ctx = self._context(at, focus)
        victims = self._victims(tokens, ctx, protected)
        if victims is None:  # refused before the item is built
            return self._refuse(item_id, tokens, self._no_room(tokens, protected), decision)
        item = building.admitted(item_id, new, tokens, decision, at, self._held.take_seq(), turn_id)
        return await self._place(item, decision, at, ctx, protected, victims)

    async def _place(
        self,
        item: BufferItem,
        decision: AdmissionDecision,
        at: datetime,
        ctx: EvictionContext,
        protected: Collection[str],
        victims: list[tuple[BufferItem, float]],
    ) -> AddResult:
        """Put the admitted ``item`` in, ``victims`` leaving first (others in their place
        when a note among them cannot be promoted; refused when nothing else may leave)."""
        try:
            return await self._insert(item, ctx, protected, at, decision, victims)
        except PromotionError as failure:
            kept = self._unpromoted(protected)
            instead = self._victims(item.tokens, ctx, kept)
            if instead is None:
                reason = f"{self._no_room(item.tokens, kept)}; {promotion_note(str(failure))}"
                return self._refuse(item.item_id, item.tokens, reason, decision)
            return await self._insert(item, ctx, kept, at, decision, instead)

    async def refresh_turn(
        self,
        fragments: Sequence[Offer],
        *,
        focus: Focus,
        now: datetime | None = None,
        turn_id: str | None = None,
    ) -> RefreshReport:
        """Put this turn's fragments in place of the last turn's (see :mod:`.refresh`);
        ``turn_id``, when given, is named in the provenance of what they admit or refresh."""
        return await refresh_turn(self, fragments, focus=focus, now=now, turn_id=turn_id)

    def renew(
        self, new: Offer, *, now: datetime | None = None, turn_id: str | None = None
    ) -> AddResult | None:
        """Refresh in place the held item ``new`` names, when that needs no room; else ``None``.

        What :meth:`add` does for an offer of a held item that does not grow
        (touched and updated, pins and session items kept), without the
        admission path: a turn's refresh offers most fragments again. ``None``
        (nothing done) when no such item is held or the offer is larger:
        :meth:`add` then finds it room or refuses it.
        """
        at = self.moment(now)
        held = self._held.items.get(new.resolved_id())
        tokens = new.tokens if new.tokens is not None else self.count_tokens(new.content)
        if held is None or tokens > held.tokens:
            return None
        return self._renewed(held, new, tokens, at, turn_id)

    def renew_all(
        self,
        offers: Sequence[tuple[str, Offer]],
        *,
        now: datetime | None = None,
        turn_id: str | None = None,
    ) -> list[AddResult]:
        """What :meth:`renew` gives for each of ``offers`` (each with the id it names), in
        order, up to the first it cannot renew (not held, or larger than the held item): the
        results say how far it went, the rest is left as it was.

        A turn's refresh renews most of its fragments this way, one call for the run of
        them: the same items, counts and events as one :meth:`renew` call each.
        """
        at = self.moment(now)
        held = self._held
        if held.events:  # (announced one by one, each counted before it is heard)
            return list(_leading(self.renew(new, now=at, turn_id=turn_id) for _, new in offers))
        items, count, refreshed = held.items, self.count_tokens, building.refreshed
        renewed: list[AddResult] = []
        for item_id, new in offers:
            old = items.get(item_id)
            tokens = new.tokens
            if tokens is None:
                tokens = count(new.content)
            if old is None or tokens > old.tokens:
                break
            updated = refreshed(old, new, tokens, at, turn_id)
            held.replace(updated)
            renewed.append(add_result(item_id, _REFRESHED, "already_held", tokens, None, updated))
        if renewed:
            held.count("refreshed", len(renewed))
            held.last_activity = at
        return renewed

    def _renewed(
        self, held: BufferItem, new: Offer, tokens: int, at: datetime, turn_id: str | None
    ) -> AddResult:
        """Put ``held``, offered again as ``new`` no larger than it, in its place, refreshed."""
        updated = building.refreshed(held, new, tokens, at, turn_id)
        self._held.replace(updated)
        self._held.count("refreshed")
        self._held.emit(EventKind.UPDATED, at, held.item_id, "refreshed")
        return add_result(held.item_id, Outcome.REFRESHED, "already_held", tokens, item=updated)

    async def _refresh(
        self,
        held: BufferItem,
        new: NewItem,
        tokens: int,
        at: datetime,
        focus: Focus | None,
        protected: Collection[str],
        turn_id: str | None,
    ) -> AddResult:
        """Refresh a held item; one that grew must find room like a new one, or stay as it was."""
        if tokens <= held.tokens:
            return self._renewed(held, new, tokens, at, turn_id)
        updated = building.refreshed(held, new, tokens, at, turn_id)
        self._held.take_out(held, EvictionReason.REMOVED, "grew on refresh", count=False)
        ctx = self._context(at, focus)
        kept: Collection[str] = {*protected, held.item_id}
        victims = self._victims(tokens, ctx, kept)
        if victims is None:
            self._held.put(held)
            return self._refuse(held.item_id, tokens, self._no_room(tokens, kept), None)
        try:
            return await self._insert(updated, ctx, kept, at, None, victims, held)
        except PromotionError as failure:
            kept = self._unpromoted(kept)
            victims = self._victims(tokens, ctx, kept)
            if victims is None:
                self._held.put(held)
                reason = f"{self._no_room(tokens, kept)}; {promotion_note(str(failure))}"
                return self._refuse(held.item_id, tokens, reason, None)
            return await self._insert(updated, ctx, kept, at, None, victims, held)

    async def _insert(
        self,
        item: BufferItem,
        ctx: EvictionContext,
        protected: Collection[str],
        at: datetime,
        decision: AdmissionDecision | None,
        victims: list[tuple[BufferItem, float]],
        previous: BufferItem | None = None,
    ) -> AddResult:
        """Put ``item`` in, ``victims`` (the room it needs) evicted or folded first.

        ``previous`` is its old version when it grew on refresh. The notes
        among what leaves are promoted before anything changes: when that
        fails, :class:`PromotionError` is raised and the buffer is as it was.
        """
        if not victims:  # room enough: nothing leaves, nothing is folded
            self._held.put(item)
            return self._admitted(item, decision, previous, None, [], at)
        folded = await self._fold(item, ctx, protected, victims)
        if folded is None:
            evictions = dropped(victims, ctx)
            promoted = await self.promote([e.item for e in evictions], at)
            evictions = [_promoted(e, promoted) for e in evictions]
            for eviction in evictions:
                self._held.take_out(
                    eviction.item,
                    eviction.reason,
                    eviction.detail,
                    promoted_to=eviction.promoted_to,
                )
            self._held.put(item)
            return self._admitted(item, decision, previous, None, evictions, at)
        promoted = await self.promote([e.item for e in folded.evictions], at)
        folded = _promoted_fold(folded, promoted)
        self._swap_in(folded)
        self._held.put(item)
        return self._admitted(item, decision, previous, folded, folded.evictions, at)

    def _swap_in(self, folded: Folded) -> None:
        """Take out what ``folded`` folds and the summary it grows, then put the new summary in."""
        for eviction in folded.evictions:
            self._held.take_out(
                eviction.item, eviction.reason, eviction.detail, promoted_to=eviction.promoted_to
            )
        for old in folded.replaced:
            self._held.take_out(old, EvictionReason.SUMMARIZED, "grown", count=False)
        self._held.put(folded.summary)

    def _admitted(
        self,
        item: BufferItem,
        decision: AdmissionDecision | None,
        previous: BufferItem | None,
        folded: Folded | None,
        evictions: list[Eviction],
        at: datetime,
    ) -> AddResult:
        """Count and announce an insertion that happened, and report it."""
        outcome = Outcome.ADMITTED if previous is None else Outcome.REFRESHED
        self._held.count("admitted" if previous is None else "refreshed")
        if evictions:
            self._held.publish(evictions, at)
        if folded is not None:
            self._held.count("summarized")
            grown = EventKind.UPDATED if folded.replaced else EventKind.ADDED
            self._held.emit(grown, at, folded.summary.item_id, "summary")
        kind = EventKind.ADDED if previous is None else EventKind.UPDATED
        self._held.emit(kind, at, item.item_id, outcome.value)
        reason = "admitted" if previous is None else "already_held"
        return add_result(
            item.item_id, outcome, reason, item.tokens, decision, item, tuple(evictions)
        )

    async def _fold(
        self,
        item: BufferItem,
        ctx: EvictionContext,
        protected: Collection[str],
        victims: list[tuple[BufferItem, float]],
    ) -> Folded | None:
        """Under SUMMARIZE, the grown summary and what it folds (see :mod:`.folding`)."""
        if self.config.policy is OverflowPolicy.SUMMARIZE and victims:
            return await fold(self._held, item, ctx, protected, self.summarizer, self.count_tokens)
        return None

    # ---------------------------------------------------------------- plumbing

    def _victims(
        self, tokens: int, ctx: EvictionContext, protected: Collection[str]
    ) -> list[tuple[BufferItem, float]] | None:
        """What must leave for an item of ``tokens`` to enter; ``None`` when it cannot.

        When every slot holds an item that may not leave (pinned or
        ``protected``), that is known without scoring the held items: a turn
        offering more than the buffer holds meets this once per offer left.
        """
        held, config = self._held, self.config
        if len(held.items) < config.max_items and held.tokens + tokens <= config.max_tokens:
            return []  # room enough already: nothing held is scored
        if len(held.items) >= config.max_items and self._kept(protected).everything:
            return None
        items = tuple(held.items.values())
        need = Need(tokens=tokens, items=1)
        return select_victims(items, need, ctx, protected, held_tokens=held.tokens)

    def _context(self, at: datetime, focus: Focus | None) -> EvictionContext:
        """The eviction context at ``at`` for ``focus``; the last one again while they, the
        themes and the settings are the very same objects (a turn's offers share one)."""
        last = self._last_context
        if (
            last is not None
            and last[0] == at
            and last[1] is focus
            and last[2] is self._themes
            and last[3] is self.config
        ):
            return last[4]
        chosen = focus or Focus()
        context = EvictionContext(
            now=at,
            config=self.config,
            focus_labels=frozenset(t.casefold() for t in chosen.tags),
            focus_intensity=chosen.intensity,
            themes=frozenset(self._themes),
        )
        self._last_context = (at, focus, self._themes, self.config, context)
        return context

    async def promote(self, leaving: Sequence[BufferItem], at: datetime) -> dict[str, str]:
        """Write the items of ``leaving`` that await promotion to long-term memory, by the
        keeper; the long-term id of each, by item id (empty without a keeper).

        Raises :class:`PromotionError` when the keeper fails (the store is
        down, say): then none of them is kept, and none may leave.
        Cancellation is never caught.
        """
        keeper = self.keeper
        due = [i for i in leaving if awaits_promotion(i)] if keeper is not None else []
        if keeper is None or not due:
            return {}
        try:
            kept = await keeper(due, at)
        except PromotionError:
            raise
        except Exception as error:
            raise PromotionError(f"{type(error).__name__}: {error}") from error
        missing = [i.item_id for i in due if i.item_id not in kept]
        if missing:
            raise PromotionError(f"the keeper gave no long-term id for {missing}")
        return {i.item_id: kept[i.item_id] for i in due}

    async def _promote_or_keep(
        self, leaving: list[BufferItem], at: datetime
    ) -> tuple[list[BufferItem], dict[str, str]]:
        """``leaving`` promoted, with the long-term ids; when promotion fails, the items
        that need none (those that do stay held, announced as ``promotion_failed``)."""
        try:
            return leaving, await self.promote(leaving, at)
        except PromotionError as failure:
            stay = [i for i in leaving if awaits_promotion(i)]
            _log.warning("buffer_promotion_failed", kept=len(stay), error=str(failure))
            for item in stay:
                details = {"error": str(failure)}
                self._held.emit(EventKind.UPDATED, at, item.item_id, "promotion_failed", details)
            return [i for i in leaving if not awaits_promotion(i)], {}

    def _unpromoted(self, protected: Collection[str]) -> frozenset[str]:
        """``protected`` and the held items that await promotion: what may not leave when
        promotion has failed."""
        awaiting = (i.item_id for i in self._held.items.values() if awaits_promotion(i))
        return frozenset((*protected, *awaiting))

    def _kept(self, protected: Collection[str]) -> _Kept:
        """The held items that may not leave (pinned or ``protected``): how many, their tokens.

        Worked out again only when the held items or ``protected`` changed (a
        turn's refresh offers many items against the same ones): it depends on
        nothing else, the buffer's bounds included.
        """
        held = self._held
        key = (held.changes, frozenset(protected))
        last = self._last_kept
        if last is not None and last[0] == key:
            return last[1]
        items = held.items.values()
        stay = [i.tokens for i in items if i.pinned or i.item_id in protected]
        kept = _Kept(
            count=len(stay),
            tokens=sum(stay),
            everything=len(stay) == len(held.items),
        )
        self._last_kept = (key, kept)
        return kept

    def _no_room(self, tokens: int, protected: Collection[str]) -> str:
        return _no_room(tokens, self._kept(protected), self.config)

    def _refuse(
        self, item_id: str, tokens: int, reason: str, decision: AdmissionDecision | None
    ) -> AddResult:
        self._held.count("refused")
        return add_result(item_id, Outcome.REFUSED, reason, tokens, decision)

    # ---------------------------------------------------------------- snapshot

    def snapshot(self) -> BufferSnapshot:
        """The whole state of this buffer, as a value.

        Assembled, not validated again (:mod:`prefrontal.trusted`): every value is the
        buffer's own, checked when it was taken (its times aware: :meth:`moment`); a
        session saves its buffer twice a turn.
        """
        held = self._held
        snapshot = assemble(
            BufferSnapshot,
            {
                "format": SNAPSHOT_FORMAT,
                "config": held.config,
                "items": held.ordered(),
                "next_seq": held.next_seq,
                "themes": self._themes,
                "counters": held.counters,
                "recall": self._recall,
                "started_at": held.started_at,
                "last_activity": held.last_activity,
            },
        )
        return known_valid(snapshot)  # (the buffer's invariant: restored without a check)

    @classmethod
    def restore(
        cls,
        snapshot: BufferSnapshot,
        *,
        count_tokens: CountTokens | None = None,
        summarizer: Summarizer | None = None,
        clock: Clock | None = None,
        keeper: Keeper | None = None,
    ) -> WorkingMemoryBuffer:
        """A buffer whose state is ``snapshot`` (checked first: bounds, ids, order)."""
        snapshot.check()
        buffer = cls(
            snapshot.config,
            count_tokens=count_tokens,
            summarizer=summarizer,
            clock=clock,
            keeper=keeper,
        )
        buffer._held.load(snapshot)
        buffer._themes = snapshot.themes
        buffer._recall = snapshot.recall
        return buffer

    async def reconfigure(
        self, config: BufferConfig, now: datetime | None = None
    ) -> tuple[Eviction, ...]:
        """Adopt ``config``, evicting under its policy what no longer fits its bounds.

        Pinned items never leave for it. The notes among the victims are
        promoted first (:meth:`promote`); when that fails they stay, and
        others leave in their place if that is enough. Raises
        :class:`WorkingMemoryError` (and changes nothing) when the items that
        may not leave exceed the new bounds.
        """
        at = self.moment(now)
        ctx = EvictionContext(now=at, config=config, themes=frozenset(self._themes))
        held = tuple(self._held.items.values())
        nothing = Need(tokens=0, items=0)
        victims = select_victims(held, nothing, ctx)
        if victims is None:
            raise WorkingMemoryError(
                f"pinned items do not fit max_items={config.max_items}, "
                f"max_tokens={config.max_tokens}: unpin some first"
            )
        try:
            promoted = await self.promote([v for v, _ in victims], at)
        except PromotionError as failure:
            victims = select_victims(held, nothing, ctx, self._unpromoted(()))
            if victims is None:
                raise WorkingMemoryError(
                    f"pinned items and notes do not fit max_items={config.max_items}, "
                    f"max_tokens={config.max_tokens}: {promotion_note(str(failure))}"
                ) from failure
            promoted = {}
        gone = tuple(
            self._held.take_out(
                v,
                EvictionReason.RECONFIGURED,
                _with_id(describe(v, s, config.policy), promoted.get(v.item_id)),
                promoted_to=promoted.get(v.item_id),
            )
            for v, s in victims
        )
        self._held.config = config
        self._held.publish(gone, at)
        return gone


def _leading(results: Iterable[AddResult | None]) -> Iterator[AddResult]:
    """``results`` up to the first ``None``."""
    for result in results:
        if result is None:
            return
        yield result


def _with_id(detail: str, promoted_to: str | None) -> str:
    """``detail``, saying where the item was promoted to when it was."""
    return detail if promoted_to is None else f"{detail}; promoted to {promoted_to}"


def _promoted(eviction: Eviction, promoted: Mapping[str, str]) -> Eviction:
    """``eviction`` naming the long-term id its item was promoted to, if it was."""
    target = promoted.get(eviction.item_id)
    if target is None:
        return eviction
    return replace(eviction, promoted_to=target, detail=_with_id(eviction.detail, target))


def _promoted_fold(folded: Folded, promoted: Mapping[str, str]) -> Folded:
    """``folded`` with each of its evictions naming its promoted item, if any."""
    if not promoted:
        return folded
    return replace(folded, evictions=[_promoted(e, promoted) for e in folded.evictions])


def _too_large(tokens: int, config: BufferConfig) -> str:
    return f"too_large: {tokens} tokens > max_tokens {config.max_tokens}"


def _below(decision: AdmissionDecision) -> str:
    return _below_bar(decision.score, decision.threshold)


def _below_bar(score: float, bar: float) -> str:
    return f"below_threshold: score {score:.3f} < {bar:.3f}"


def _no_room(tokens: int, kept: _Kept, config: BufferConfig) -> str:
    return (
        f"no_room: {tokens} tokens do not fit beside {kept.count} pinned or protected "
        f"items of {kept.tokens} tokens (max_tokens "
        f"{config.max_tokens}, max_items {config.max_items})"
    )


def _admits(new: Offer, score: float, bar: float, config: BufferConfig) -> bool:
    """Whether :func:`~.salience.decide` admits ``new`` of admission ``score`` against ``bar``
    (without making the decision)."""
    return (
        new.pinned
        or score >= bar
        or (new.lifetime is Lifetime.SESSION and new.priority >= config.keep_priority)
    )


class _Below:
    """Explains a refusal below the threshold, of an offer scored when the buffer was so
    full, under those settings (the subject: the three of them)."""

    @staticmethod
    def reason(subject: tuple[Scored, float, BufferConfig]) -> str:
        offer, utilisation, config = subject
        return _below_bar(offer.score, threshold(utilisation, config))

    @staticmethod
    def decision(subject: tuple[Scored, float, BufferConfig]) -> AdmissionDecision:
        offer, utilisation, config = subject
        return decide(offer.item_id, offer.new, offer.factors, utilisation, config, offer.scores)


@dataclass(frozen=True, slots=True)
class _Closed:
    """Explains the refusals of a buffer nothing new can enter (the subject: the offer): how
    full it was, its settings, and the items that may not leave."""

    utilisation: float
    config: BufferConfig
    kept: _Kept

    def reason(self, offer: Scored) -> str:
        """What :meth:`WorkingMemoryBuffer.admit_scored` said, refusing ``offer`` here."""
        config = self.config
        bar = threshold(self.utilisation, config)
        if not _admits(offer.new, offer.score, bar, config):
            return _below_bar(offer.score, bar)
        return _no_room(offer.tokens, self.kept, config)

    def decision(self, offer: Scored) -> AdmissionDecision:
        """The decision :meth:`WorkingMemoryBuffer.admit_scored` made, refusing ``offer``."""
        return decide(
            offer.item_id, offer.new, offer.factors, self.utilisation, self.config, offer.scores
        )


_BELOW = _Below()
_REFRESHED = Outcome.REFRESHED
