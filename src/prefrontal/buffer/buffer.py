"""The working-memory buffer: a hard-bounded set of items with admission and eviction.

Invariant: after every operation, and at every instant in between, the
buffer holds at most ``max_items`` items and ``max_tokens`` tokens. Each
insertion is check, then evict, then insert: room is found first (or the
item is refused), the victims are removed, and only then is the item put in.
An item larger than the whole buffer is refused with a reason.

A buffer belongs to one task at a time (a session's turn); it is not safe to
mutate it from several tasks at once. Time comes from the ``now`` argument,
or the injected ``clock``: the same operations at the same times always give
the same state.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import datetime
from typing import Any

from prefrontal.buffer import tokens as default_tokens
from prefrontal.buffer.config import BufferConfig, OverflowPolicy
from prefrontal.buffer.decay import has_faded
from prefrontal.buffer.events import BufferEvent, EventBus, EventKind
from prefrontal.buffer.models import (
    BufferItem,
    Focus,
    ItemProvenance,
    ItemSource,
    Lifetime,
    NewItem,
)
from prefrontal.buffer.policies import (
    Eviction,
    EvictionContext,
    EvictionReason,
    Need,
    describe,
    select_victims,
)
from prefrontal.buffer.recall_gate import RecallCounters, RecallDecision
from prefrontal.buffer.salience import AdmissionDecision, decide, salience_factors
from prefrontal.buffer.snapshot import (
    AddResult,
    BufferCounters,
    BufferSnapshot,
    Outcome,
    RefreshReport,
)
from prefrontal.buffer.summarizer import ExtractiveSummarizer, Summarizer, fit_tokens
from prefrontal.buffer.themes import Coherence, coherence, dominant_themes
from prefrontal.errors import WorkingMemoryError
from prefrontal.stores.records import utc_now

TokenCounter = Callable[[str], int]
Clock = Callable[[], datetime]
_SUMMARY_ENTITIES = 20


class WorkingMemoryBuffer:
    """A bounded working-memory buffer; see the module docstring for its invariant."""

    def __init__(
        self,
        config: BufferConfig | None = None,
        *,
        count_tokens: TokenCounter | None = None,
        summarizer: Summarizer | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.config = config or BufferConfig()
        self.count_tokens: TokenCounter = count_tokens or default_tokens.count_tokens
        self.summarizer: Summarizer = summarizer or ExtractiveSummarizer()
        self.clock: Clock = clock or utc_now
        self.events = EventBus()
        self._items: dict[str, BufferItem] = {}
        self._tokens = 0
        self._next_seq = 0
        self._themes: tuple[str, ...] = ()
        self._counters = BufferCounters()
        self._recall = RecallCounters()
        self._started_at: datetime | None = None
        self._last_activity: datetime | None = None

    # ----------------------------------------------------------------- reading

    @property
    def items(self) -> tuple[BufferItem, ...]:
        """Every held item, in insertion order."""
        return tuple(sorted(self._items.values(), key=lambda i: i.seq))

    @property
    def total_tokens(self) -> int:
        """Tokens held."""
        return self._tokens

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
        return self._counters

    @property
    def recall_counters(self) -> RecallCounters:
        """Searches run and searches saved by the recall gate in this session."""
        return self._recall

    @property
    def utilisation(self) -> float:
        """How full the buffer is: the larger of its item and token ratios."""
        return max(len(self._items) / self.config.max_items, self._tokens / self.config.max_tokens)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._items

    def get(self, item_id: str) -> BufferItem | None:
        """The held item ``item_id``, without touching it."""
        return self._items.get(item_id)

    def coherence(self) -> Coherence:
        """How well the held items hang together around the session's themes."""
        return coherence(
            tuple(self._items.values()), self._themes, fade_seconds=self.config.fade_seconds
        )

    def held_memory_ids(self, store: str | None = None) -> frozenset[str]:
        """Ids of the memory items behind the held retrieved items (of ``store`` if given)."""
        return frozenset(
            item_id
            for item in self._items.values()
            if item.source is ItemSource.MEMORY_RETRIEVAL
            and (store is None or item.provenance.store == store)
            for item_id in item.provenance.item_ids
        )

    def kept_sources(self) -> frozenset[str]:
        """Source ids behind the items the agent keeps (session lifetime), of every kind."""
        return frozenset(
            item_id
            for item in self._items.values()
            if item.lifetime is Lifetime.SESSION
            for item_id in (*item.provenance.item_ids, *item.summary_of)
        )

    # ------------------------------------------------------------ sync changes

    def access(self, item_id: str, now: datetime | None = None) -> BufferItem | None:
        """Touch ``item_id`` (last access, access count) and return it; ``None`` if absent.

        An item that has faded is removed instead, and ``None`` returned.
        """
        at = now or self.clock()
        item = self._items.get(item_id)
        if item is None:
            return None
        if has_faded(item, at, self.config):
            self._publish_evictions([self._evict_one(item, EvictionReason.FADED, "idle", at)], at)
            return None
        touched = item.touched(at)
        self._items[item_id] = touched
        self._last_activity = at
        return touched

    def pin(self, item_id: str, pinned: bool = True, now: datetime | None = None) -> BufferItem:
        """Pin (or unpin) a held item; pinned items are never evicted and never fade.

        Pinning is the agent keeping an item: a pinned turn fragment becomes a
        session item, so the next turn's refresh does not replace it either.
        """
        at = now or self.clock()
        item = self._require(item_id)
        lifetime = Lifetime.SESSION if pinned else item.lifetime
        changed = item.model_copy(update={"pinned": pinned, "lifetime": lifetime})
        self._items[item_id] = changed
        self._emit(EventKind.UPDATED, at, item_id, "pinned" if pinned else "unpinned")
        return changed

    def remove(self, item_id: str, now: datetime | None = None) -> Eviction | None:
        """Remove ``item_id`` on request (pinned or not); ``None`` if it is not held."""
        at = now or self.clock()
        item = self._items.get(item_id)
        if item is None:
            return None
        eviction = self._evict_one(item, EvictionReason.REMOVED, "removed on request", at)
        self._publish_evictions([eviction], at)
        return eviction

    def clear(self, now: datetime | None = None) -> tuple[Eviction, ...]:
        """Remove every item, pinned ones included."""
        at = now or self.clock()
        gone = tuple(
            Eviction(item=item, reason=EvictionReason.CLEARED, detail="buffer cleared")
            for item in self.items
        )
        self._items.clear()
        self._tokens = 0
        self._counters = self._counters.model_copy(
            update={"evicted": self._counters.evicted + len(gone)}
        )
        self._emit(EventKind.CLEARED, at, None, "cleared", {"items_cleared": len(gone)})
        return gone

    def expire(self, now: datetime | None = None) -> tuple[Eviction, ...]:
        """Remove every unpinned item not touched for ``fade_seconds``."""
        at = now or self.clock()
        faded = [i for i in self.items if has_faded(i, at, self.config)]
        gone = [
            self._evict_one(i, EvictionReason.FADED, f"idle {self.config.fade_seconds:g} s", at)
            for i in faded
        ]
        self._publish_evictions(gone, at)
        return tuple(gone)

    def refresh_themes(self) -> tuple[str, ...]:
        """Recompute the session's dominant themes from the held items."""
        self._themes = dominant_themes(self._items.values(), self.config.dominant_themes)
        return self._themes

    def record_recall(self, decision: RecallDecision) -> RecallCounters:
        """Count one recall-gate decision (a search run, or a search saved)."""
        self._recall = self._recall.count(decision)
        return self._recall

    def mark_turn(self, now: datetime | None = None) -> None:
        """Count a turn and note the session's start and last activity."""
        at = now or self.clock()
        self._started_at = self._started_at or at
        self._last_activity = at
        self._counters = self._counters.model_copy(update={"turns": self._counters.turns + 1})

    # ----------------------------------------------------------- async changes

    async def add(
        self,
        new: NewItem,
        *,
        focus: Focus | None = None,
        now: datetime | None = None,
        protected: Collection[str] = (),
    ) -> AddResult:
        """Offer ``new`` to the buffer: admit, refresh or refuse it, and say why.

        An item already held (same id) is refreshed: touched and updated in
        place, never added twice. A new item must pass admission; room is then
        made under the overflow policy, never at the cost of a pinned item or
        one in ``protected``. Refusals are results, not exceptions.
        """
        at = now or self.clock()
        item_id = new.resolved_id()
        tokens = new.tokens if new.tokens is not None else self.count_tokens(new.content)
        if tokens > self.config.max_tokens:
            reason = f"too_large: {tokens} tokens > max_tokens {self.config.max_tokens}"
            return self._refuse(item_id, tokens, reason, None)
        held = self._items.get(item_id)
        if held is not None:
            return await self._refresh(held, new, tokens, at, focus, protected)
        factors = salience_factors(new, focus or Focus(), self._themes, at, self.config)
        decision = decide(item_id, new, factors, self.utilisation, self.config)
        if not decision.admitted:
            reason = f"below_threshold: score {decision.score:.3f} < {decision.threshold:.3f}"
            return self._refuse(item_id, tokens, reason, decision)
        item = self._build(item_id, new, tokens, decision, at)
        return await self._insert(item, focus, protected, at, decision, Outcome.ADMITTED)

    async def refresh_turn(
        self, fragments: Sequence[NewItem], *, focus: Focus, now: datetime | None = None
    ) -> RefreshReport:
        """Put this turn's fragments in place of the last turn's (see :mod:`.refresh`)."""
        from prefrontal.buffer.refresh import refresh_turn

        return await refresh_turn(self, fragments, focus=focus, now=now)

    def retire_turn_items(
        self, keep: Collection[str], now: datetime | None = None
    ) -> tuple[Eviction, ...]:
        """Remove the earlier turns' fragments that are not in ``keep`` (this turn's ids)."""
        at = now or self.clock()
        stale = [i for i in self.items if i.lifetime is Lifetime.TURN and i.item_id not in keep]
        gone = [
            self._evict_one(i, EvictionReason.REPLACED, "not in this turn's context", at)
            for i in stale
        ]
        self._publish_evictions(gone, at)
        return tuple(gone)

    async def _refresh(
        self,
        held: BufferItem,
        new: NewItem,
        tokens: int,
        at: datetime,
        focus: Focus | None,
        protected: Collection[str],
    ) -> AddResult:
        updated = _updated(held, new, tokens, at)
        if tokens <= held.tokens:
            self._replace(updated)
            self._counters = self._counters.model_copy(
                update={"refreshed": self._counters.refreshed + 1}
            )
            self._emit(EventKind.UPDATED, at, held.item_id, "refreshed")
            return AddResult(
                item_id=held.item_id,
                outcome=Outcome.REFRESHED,
                reason="already_held",
                tokens=tokens,
                item=updated,
            )
        self._evict_one(held, EvictionReason.REMOVED, "grew on refresh", at, count=False)
        return await self._insert(
            updated, focus, (*protected, held.item_id), at, None, Outcome.REFRESHED, previous=held
        )

    async def _insert(
        self,
        item: BufferItem,
        focus: Focus | None,
        protected: Collection[str],
        at: datetime,
        decision: AdmissionDecision | None,
        outcome: Outcome,
        previous: BufferItem | None = None,
    ) -> AddResult:
        ctx = self._context(at, focus)
        need = Need(tokens=item.tokens, items=1)
        victims = select_victims(
            tuple(self._items.values()), need, ctx, protected, held_tokens=self._tokens
        )
        if victims is None:
            if previous is not None:
                self._put(previous)
            return self._refuse(item.item_id, item.tokens, self._no_room(item, protected), decision)
        summary, folded = await self._summarize(item, need, ctx, protected, bool(victims))
        evictions = folded or [self._policy_eviction(v, s) for v, s in victims]
        for eviction in evictions:
            self._evict_one(eviction.item, eviction.reason, eviction.detail, at)
        if summary is not None:
            self._put(summary)
        self._put(item)
        self._bump(outcome, len(evictions), summary is not None)
        self._publish_evictions(evictions, at)
        if summary is not None:
            self._emit(EventKind.ADDED, at, summary.item_id, "summary")
        kind = EventKind.ADDED if outcome is Outcome.ADMITTED else EventKind.UPDATED
        self._emit(kind, at, item.item_id, outcome.value)
        return AddResult(
            item_id=item.item_id,
            outcome=outcome,
            reason="admitted" if outcome is Outcome.ADMITTED else "already_held",
            tokens=item.tokens,
            decision=decision,
            item=item,
            evicted=tuple(evictions),
        )

    async def _summarize(
        self,
        item: BufferItem,
        need: Need,
        ctx: EvictionContext,
        protected: Collection[str],
        evicting: bool,
    ) -> tuple[BufferItem | None, list[Eviction]]:
        """Under SUMMARIZE, the summary item and the evictions it folds; else nothing."""
        if self.config.policy is not OverflowPolicy.SUMMARIZE or not evicting:
            return None, []
        wider = Need(tokens=need.tokens + self.config.summary_min_tokens, items=need.items + 1)
        victims = select_victims(
            tuple(self._items.values()), wider, ctx, protected, held_tokens=self._tokens
        )
        if not victims:
            return None, []
        room = self.config.max_tokens - (self._tokens - sum(v.tokens for v, _ in victims))
        budget = room - item.tokens
        folded = [v for v, _ in victims]
        text = await self.summarizer(folded, budget, self.count_tokens)
        text = fit_tokens(text.strip(), budget, self.count_tokens)
        if not text:
            return None, []
        summary = self._summary_item(folded, text, ctx.now)
        detail = f"folded into summary {summary.item_id}"
        return summary, [
            Eviction(
                item=v,
                reason=EvictionReason.SUMMARIZED,
                detail=detail,
                policy=self.config.policy,
                keep_score=s,
            )
            for v, s in victims
        ]

    # ---------------------------------------------------------------- plumbing

    def _build(
        self, item_id: str, new: NewItem, tokens: int, decision: AdmissionDecision, at: datetime
    ) -> BufferItem:
        return BufferItem(
            item_id=item_id,
            content=new.content,
            source=new.source,
            tokens=tokens,
            priority=new.priority,
            salience=decision.score,
            factors=decision.factors,
            confidence=new.confidence,
            tags=new.tags,
            entities=new.entities,
            added_at=at,
            last_accessed_at=at,
            access_count=1,
            pinned=new.pinned,
            lifetime=new.lifetime,
            provenance=new.provenance,
            seq=self._take_seq(),
        )

    def _summary_item(self, folded: Sequence[BufferItem], text: str, at: datetime) -> BufferItem:
        ids = tuple(dict.fromkeys(i for f in folded for i in (*f.summary_of, f.item_id)))
        sources = tuple(dict.fromkeys(i for f in folded for i in f.provenance.item_ids))
        entities = tuple(dict.fromkeys(e for f in folded for e in f.entities))
        seq = self._take_seq()
        digest = hashlib.blake2b(f"{seq}\x1e{'|'.join(ids)}".encode(), digest_size=10).hexdigest()
        return BufferItem(
            item_id=f"wm_summary_{digest}",
            content=text,
            source=ItemSource.SYSTEM,
            tokens=self.count_tokens(text),
            priority=max(f.priority for f in folded),
            salience=max(f.salience for f in folded),
            confidence=min(f.confidence for f in folded),
            tags=("summary",),
            entities=entities[:_SUMMARY_ENTITIES],
            added_at=at,
            last_accessed_at=at,
            access_count=1,
            lifetime=Lifetime.SESSION,
            summary_of=ids,
            provenance=ItemProvenance(
                item_ids=sources,
                phase="buffer.summarize",
                extra={"summarized_items": len(folded)},
            ),
            seq=seq,
        )

    def _context(self, at: datetime, focus: Focus | None) -> EvictionContext:
        chosen = focus or Focus()
        return EvictionContext(
            now=at,
            config=self.config,
            focus_labels=frozenset(t.casefold() for t in chosen.tags),
            focus_intensity=chosen.intensity,
            themes=frozenset(self._themes),
        )

    def _policy_eviction(self, item: BufferItem, score: float) -> Eviction:
        policy = self.config.policy
        return Eviction(
            item=item,
            reason=EvictionReason.POLICY,
            detail=describe(item, score, policy),
            policy=policy,
            keep_score=score,
        )

    def _no_room(self, item: BufferItem, protected: Collection[str]) -> str:
        held = sum(i.tokens for i in self._items.values() if i.pinned or i.item_id in protected)
        return (
            f"no_room: {item.tokens} tokens do not fit beside {held} pinned or "
            f"protected tokens (max_tokens {self.config.max_tokens}, "
            f"max_items {self.config.max_items})"
        )

    def _refuse(
        self, item_id: str, tokens: int, reason: str, decision: AdmissionDecision | None
    ) -> AddResult:
        self._counters = self._counters.model_copy(update={"refused": self._counters.refused + 1})
        return AddResult(
            item_id=item_id,
            outcome=Outcome.REFUSED,
            reason=reason,
            tokens=tokens,
            decision=decision,
        )

    def _bump(self, outcome: Outcome, evicted: int, summarized: bool) -> None:
        c = self._counters
        self._counters = c.model_copy(
            update={
                "admitted": c.admitted + (outcome is Outcome.ADMITTED),
                "refreshed": c.refreshed + (outcome is Outcome.REFRESHED),
                "summarized": c.summarized + summarized,
            }
        )

    def _take_seq(self) -> int:
        self._next_seq += 1
        return self._next_seq - 1

    def _put(self, item: BufferItem) -> None:
        """Insert ``item``; the caller has made room, and this checks it did."""
        items = len(self._items) + 1
        tokens = self._tokens + item.tokens
        if item.item_id in self._items:
            raise WorkingMemoryError(f"internal: {item.item_id!r} is already held")
        if items > self.config.max_items or tokens > self.config.max_tokens:
            raise WorkingMemoryError(
                f"internal: inserting {item.item_id!r} would exceed the buffer's bounds"
            )
        self._items[item.item_id] = item
        self._tokens = tokens

    def _replace(self, item: BufferItem) -> None:
        old = self._items[item.item_id]
        self._items[item.item_id] = item
        self._tokens += item.tokens - old.tokens

    def _evict_one(
        self,
        item: BufferItem,
        reason: EvictionReason,
        detail: str,
        at: datetime,
        *,
        count: bool = True,
    ) -> Eviction:
        del self._items[item.item_id]
        self._tokens -= item.tokens
        if count:
            self._counters = self._counters.model_copy(
                update={"evicted": self._counters.evicted + 1}
            )
        return Eviction(
            item=item,
            reason=reason,
            detail=detail,
            policy=self.config.policy if reason is EvictionReason.POLICY else None,
        )

    def _require(self, item_id: str) -> BufferItem:
        item = self._items.get(item_id)
        if item is None:
            raise WorkingMemoryError(f"the buffer holds no item {item_id!r}")
        return item

    def _publish_evictions(self, evictions: Iterable[Eviction], at: datetime) -> None:
        for eviction in evictions:
            self._emit(
                EventKind.EVICTED,
                at,
                eviction.item_id,
                eviction.reason.value,
                {"detail": eviction.detail, "tokens": eviction.item.tokens},
            )

    def _emit(
        self,
        kind: EventKind,
        at: datetime,
        item_id: str | None,
        reason: str,
        details: dict[str, Any] | None = None,
    ) -> None:
        self._last_activity = at
        if not self.events:
            return
        self.events.publish(
            BufferEvent(
                kind=kind,
                at=at,
                item_id=item_id,
                reason=reason,
                total_tokens=self._tokens,
                total_items=len(self._items),
                details=details or {},
            )
        )

    # ---------------------------------------------------------------- snapshot

    def snapshot(self) -> BufferSnapshot:
        """The whole state of this buffer, as a value."""
        return BufferSnapshot(
            config=self.config,
            items=self.items,
            next_seq=self._next_seq,
            themes=self._themes,
            counters=self._counters,
            recall=self._recall,
            started_at=self._started_at,
            last_activity=self._last_activity,
        )

    @classmethod
    def restore(
        cls,
        snapshot: BufferSnapshot,
        *,
        count_tokens: TokenCounter | None = None,
        summarizer: Summarizer | None = None,
        clock: Clock | None = None,
    ) -> WorkingMemoryBuffer:
        """A buffer whose state is ``snapshot`` (checked first: bounds, ids, order)."""
        snapshot.check()
        buffer = cls(snapshot.config, count_tokens=count_tokens, summarizer=summarizer, clock=clock)
        buffer._load(snapshot)
        return buffer

    def reconfigure(
        self, config: BufferConfig, now: datetime | None = None
    ) -> tuple[Eviction, ...]:
        """Adopt ``config``, evicting under its policy what no longer fits its bounds.

        Raises :class:`WorkingMemoryError` (and changes nothing) when the pinned
        items alone exceed the new bounds.
        """
        at = now or self.clock()
        ctx = EvictionContext(now=at, config=config, themes=frozenset(self._themes))
        victims = select_victims(tuple(self._items.values()), Need(tokens=0, items=0), ctx)
        if victims is None:
            raise WorkingMemoryError(
                f"pinned items do not fit max_items={config.max_items}, "
                f"max_tokens={config.max_tokens}: unpin some first"
            )
        gone = [
            self._evict_one(v, EvictionReason.RECONFIGURED, describe(v, s, config.policy), at)
            for v, s in victims
        ]
        self.config = config
        self._publish_evictions(gone, at)
        return tuple(gone)

    def _load(self, snapshot: BufferSnapshot) -> None:
        self._items = {item.item_id: item for item in snapshot.items}
        self._tokens = sum(item.tokens for item in snapshot.items)
        self._next_seq = snapshot.next_seq
        self._themes = snapshot.themes
        self._counters = snapshot.counters
        self._recall = snapshot.recall
        self._started_at = snapshot.started_at
        self._last_activity = snapshot.last_activity


def _updated(held: BufferItem, new: NewItem, tokens: int, at: datetime) -> BufferItem:
    """``held`` refreshed by a new offer of the same item: new content, touched, kept lifetime."""
    lifetime = (
        Lifetime.SESSION if Lifetime.SESSION in (held.lifetime, new.lifetime) else (Lifetime.TURN)
    )
    return held.touched(at).model_copy(
        update={
            "content": new.content,
            "tokens": tokens,
            "priority": new.priority,
            "confidence": new.confidence,
            "tags": new.tags or held.tags,
            "entities": new.entities or held.entities,
            "pinned": held.pinned or new.pinned,
            "lifetime": lifetime,
            "provenance": new.provenance,
        }
    )
