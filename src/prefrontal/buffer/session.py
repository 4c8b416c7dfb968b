"""A session's buffer, loaded from and saved to a working-memory store.

The only module of ``buffer/`` that does I/O. One buffer per session
``(agent, user, session id)``: :meth:`SessionBuffer.load` reads it at turn
start (or starts a new one), :meth:`SessionBuffer.save` writes it at turn end.

Saves are optimistic: when another worker saved the session first, the store
raises :class:`~prefrontal.errors.ConflictError`; the session then reloads
the newer state, replays this turn's operations on it, and saves again (at
most ``max_attempts`` times in all). Replayed operations publish no events:
subscribers heard them once, when they first happened.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from datetime import datetime
from operator import attrgetter
from typing import Any, TypeVar

import structlog
from pydantic import ValidationError

from prefrontal.buffer.buffer import Clock, WorkingMemoryBuffer
from prefrontal.buffer.config import BufferConfig
from prefrontal.buffer.events import BufferEvent, EventKind, Subscriber
from prefrontal.buffer.models import BufferItem, Focus, NewItem
from prefrontal.buffer.offers import Offer
from prefrontal.buffer.policies import Eviction
from prefrontal.buffer.promotion import Keeper, NoLongTermMemory
from prefrontal.buffer.recall_gate import (
    DEFAULT_MIN_OVERLAP,
    DEFAULT_PROBE_LIMIT,
    RecallDecision,
    decide_recall,
)
from prefrontal.buffer.snapshot import AddResult, BufferSnapshot, RefreshReport
from prefrontal.buffer.state_document import decode, encode, forget
from prefrontal.buffer.summarizer import Summarizer
from prefrontal.buffer.themes import LinkSettings, SessionLink, SessionProfile, link_sessions
from prefrontal.buffer.tokens import CountTokens
from prefrontal.errors import ConflictError, WorkingMemoryError
from prefrontal.stores.long_term import MemoryQuery, MemoryStore
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.working_memory import SessionKey, SessionState, WorkingMemoryStore

_log = structlog.get_logger("prefrontal.buffer")
T = TypeVar("T")
Operation = Callable[[WorkingMemoryBuffer], Awaitable[Any]]
MAX_ENTITIES = 50
"""Entities saved with a session for linking: the most frequent, at most this many."""


class SessionBuffer:
    """The working-memory buffer of one session, with its store.

    Build with :meth:`load`. Every change goes through this object, which
    keeps a journal of the turn's operations for a conflict retry.
    """

    def __init__(
        self,
        store: WorkingMemoryStore,
        key: SessionKey,
        buffer: WorkingMemoryBuffer,
        state: SessionState | None,
        *,
        max_attempts: int = 3,
    ) -> None:
        if max_attempts < 1:
            raise WorkingMemoryError("max_attempts must be at least 1")
        self.store = store
        self.key = key
        self.buffer = buffer
        self.reconfigured: tuple[Eviction, ...] = ()
        """Items dropped at load because the configured bounds shrank."""
        self.deferred: BufferConfig | None = None
        """A configuration not adopted at load: the items that may not leave (pinned,
        or notes whose promotion failed) did not fit it, so the buffer kept the
        bounds it was saved with; the next load tries again."""
        self._state = state
        self._journal: list[Operation] = []
        self._max_attempts = max_attempts
        self.merges = 0
        """Saves that lost a race and merged this session's changes into the newer state."""

    @classmethod
    async def load(  # noqa: PLR0913
        cls,
        store: WorkingMemoryStore,
        key: SessionKey,
        *,
        config: BufferConfig | None = None,
        count_tokens: CountTokens | None = None,
        summarizer: Summarizer | None = None,
        clock: Clock | None = None,
        subscribers: Sequence[Subscriber] = (),
        max_attempts: int = 3,
        keeper: Keeper | None = None,
    ) -> SessionBuffer:
        """The session's saved buffer, or a new one (announced by ``session_started``).

        ``keeper`` writes the notes only the buffer holds to long-term memory
        before the policy lets them go (see :mod:`prefrontal.buffer.promotion`;
        :func:`prefrontal.formation.episodic_keeper` is the usual one).
        Without one, the session keeps its notes (:class:`NoLongTermMemory`):
        newcomers that would need one to leave are refused, notes do not fade.

        ``config`` (when given) replaces the saved one; items that no longer
        fit are evicted (notes promoted first) and listed in
        :attr:`reconfigured`. Pinned items never leave for it, nor notes whose
        promotion failed: when they alone exceed ``config``'s bounds the buffer
        keeps the bounds it was saved with (:attr:`deferred` holds ``config``)
        until a later load.
        """
        state = await store.load(key)
        _check_owner(state, key)
        chosen = keeper or NoLongTermMemory()
        buffer = _rebuild(state, config, count_tokens, summarizer, clock, chosen)
        session = cls(store, key, buffer, state, max_attempts=max_attempts)
        for subscriber in subscribers:
            buffer.events.subscribe(subscriber)
        if config is not None and config != buffer.config:
            try:
                session.reconfigured = await buffer.reconfigure(config)
            except WorkingMemoryError as error:
                session.deferred = config
                _log.warning("buffer_bounds_deferred", session_id=key.session_id, reason=str(error))
        if state is None:
            session._announce(EventKind.SESSION_STARTED)
        return session

    # ------------------------------------------------------------- reading

    @property
    def is_new(self) -> bool:
        """True until the session's buffer has been saved once."""
        return self._state is None

    @property
    def state(self) -> SessionState | None:
        """The state as last loaded or saved (``None`` for a session never saved)."""
        return self._state

    @property
    def version(self) -> int:
        """The store version this buffer was loaded at (0 for a new session)."""
        return 0 if self._state is None else self._state.version

    @property
    def items(self) -> tuple[BufferItem, ...]:
        """The held items, in insertion order."""
        return self.buffer.items

    @property
    def total_tokens(self) -> int:
        """Tokens held."""
        return self.buffer.total_tokens

    @property
    def themes(self) -> tuple[str, ...]:
        """The session's dominant themes."""
        return self.buffer.themes

    def snapshot(self) -> BufferSnapshot:
        """The buffer's whole state."""
        return self.buffer.snapshot()

    def profile(self, now: datetime) -> SessionProfile:
        """This session as session linking sees it."""
        return SessionProfile(
            session_id=self.key.session_id,
            themes=self.buffer.themes,
            entities=_entities(self.buffer.items),
            updated_at=now,
        )

    # ------------------------------------------------------------- changes

    async def refresh_turn(
        self,
        fragments: Sequence[Offer],
        *,
        focus: Focus,
        now: datetime | None = None,
        turn_id: str | None = None,
    ) -> RefreshReport:
        """Refresh the buffer with turn ``turn_id``'s fragments (see :mod:`.refresh`)."""
        at = now or self.buffer.clock()
        return await self._apply(
            lambda b: b.refresh_turn(fragments, focus=focus, now=at, turn_id=turn_id)
        )

    async def add(
        self, item: NewItem, *, focus: Focus | None = None, now: datetime | None = None
    ) -> AddResult:
        """Offer one item (a tool result, a reflection, a note) to the buffer."""
        at = now or self.buffer.clock()
        return await self._apply(lambda b: b.add(item, focus=focus, now=at))

    async def access(self, item_id: str, now: datetime | None = None) -> BufferItem | None:
        """Touch a held item (see :meth:`WorkingMemoryBuffer.access`)."""
        at = now or self.buffer.clock()
        return await self._apply(_sync(lambda b: b.access(item_id, at)))

    async def expire(self, now: datetime | None = None) -> tuple[Eviction, ...]:
        """Let the unpinned items that have faded out go (see :meth:`WorkingMemoryBuffer.fade`)."""
        at = now or self.buffer.clock()
        return await self._apply(lambda b: b.fade(at))

    async def pin(self, item_id: str, pinned: bool = True) -> BufferItem:
        """Pin or unpin a held item."""
        at = self.buffer.clock()
        return await self._apply(_sync(lambda b: b.pin(item_id, pinned, at)))

    async def remove(self, item_id: str) -> Eviction | None:
        """Remove a held item on request."""
        at = self.buffer.clock()
        return await self._apply(_sync(lambda b: b.remove(item_id, at)))

    async def clear(self) -> tuple[Eviction, ...]:
        """Remove every item."""
        at = self.buffer.clock()
        return await self._apply(_sync(lambda b: b.clear(at)))

    async def mark_consolidation(
        self, targets: Mapping[str, str], now: datetime | None = None
    ) -> tuple[BufferItem, ...]:
        """Mark held items with the episodic item each is promoted into (see the buffer's)."""
        at = now or self.buffer.clock()
        return await self._apply(_sync(lambda b: b.mark_consolidation(targets, at)))

    async def release_consolidated(
        self, targets: Collection[str], now: datetime | None = None
    ) -> tuple[Eviction, ...]:
        """Remove the items marked for one of ``targets`` (promoted: they leave the buffer)."""
        at = now or self.buffer.clock()
        return await self._apply(_sync(lambda b: b.release_consolidated(targets, at)))

    async def recall_gate(
        self,
        memory: MemoryStore,
        store_name: str,
        text: str,
        *,
        now: datetime | None = None,
        limit: int = DEFAULT_PROBE_LIMIT,
        min_overlap: float = DEFAULT_MIN_OVERLAP,
        held: Collection[str] | None = None,
    ) -> RecallDecision:
        """Decide whether ``store_name``'s phase may reuse the buffer, and count it.

        The probe is a small read-only search (:func:`probe`); nothing is
        probed when the buffer holds nothing from that store. ``held``: what
        ``self.buffer.held_memory_ids(store_name)`` gives now, when the caller
        has it already (read here otherwise). For the episodic store the
        session's own messages the buffer holds count as held as well
        (:meth:`WorkingMemoryBuffer.exchange_ids`).
        """
        if held is None:
            held = self.buffer.held_memory_ids(store_name)
        hits = await probe(memory, self.key.tenant, text, limit=limit, now=now) if held else ()
        own = self.buffer.exchange_ids() if store_name == "episodic" and hits else ()
        decision = decide_recall(hits, held, min_overlap=min_overlap, own_ids=own)
        await self._apply(_sync(lambda b: b.record_recall(decision)))
        return decision

    async def end(self, now: datetime | None = None) -> SessionState:
        """Announce ``session_ended`` and save the buffer."""
        self._announce(EventKind.SESSION_ENDED, now)
        return await self.save(now)

    async def links(
        self, now: datetime | None = None, settings: LinkSettings | None = None, limit: int = 20
    ) -> tuple[SessionLink, ...]:
        """Recent sessions of the same user that share entities or themes with this one.

        Looks at the ``limit`` most recently updated sessions within the look-back window.
        """
        at = now or self.buffer.clock()
        chosen = settings or LinkSettings()
        recent = await self.recent_sessions(now=at, settings=chosen, limit=limit)
        return self.links_among(recent, now=at, settings=chosen)

    async def recent_sessions(
        self, now: datetime | None = None, settings: LinkSettings | None = None, limit: int = 20
    ) -> list[SessionState]:
        """The ``limit`` sessions of this user most recently updated within the look-back window.

        What :meth:`links` reads from the store; read it early (when the
        session starts) and link with :meth:`links_among` later.
        """
        at = now or self.buffer.clock()
        since = at - (settings or LinkSettings()).lookback
        return await self.store.recent_sessions(self.key.tenant, since=since, limit=limit)

    def links_among(
        self,
        recent: Sequence[SessionState],
        now: datetime | None = None,
        settings: LinkSettings | None = None,
    ) -> tuple[SessionLink, ...]:
        """The links from this session, as it is now, to the other sessions of ``recent``."""
        at = now or self.buffer.clock()
        own = self.key
        mine = [
            s
            for s in recent
            if s.key.agent_id == own.agent_id
            and s.key.user_id == own.user_id
            and s.key.session_id != own.session_id
        ]
        profiles = [_profile(s) for s in mine]
        return link_sessions(self.profile(at), profiles, at, settings or LinkSettings())

    # ---------------------------------------------------------------- saving

    async def save(self, now: datetime | None = None) -> SessionState:
        """Save the buffer; on a lost race reload, replay this turn and try again."""
        at = now or self.buffer.clock()
        for attempt in range(1, self._max_attempts + 1):
            try:
                saved = await self.store.save(self._state_to_save(at))
            except ConflictError:
                if attempt == self._max_attempts:
                    raise
                await self._reload_and_replay()
                continue
            if self._state is not None and self._state.state is not saved.state:
                forget(self._state.state)
            self._state, self._journal = saved, []
            return saved
        raise AssertionError("unreachable")  # pragma: no cover

    def _state_to_save(self, at: datetime) -> SessionState:
        snapshot = self.buffer.snapshot()
        return SessionState(
            key=self.key,
            version=self.version,
            state=encode(snapshot, self.key),
            themes=snapshot.themes,
            entities=_entities(snapshot.items),
            started_at=self._state.started_at if self._state else snapshot.started_at or at,
            updated_at=at,
        )

    async def _reload_and_replay(self) -> None:
        state = await self.store.load(self.key)
        _check_owner(state, self.key)
        old = self.buffer
        fresh = _rebuild(state, old.config, old.count_tokens, old.summarizer, old.clock, old.keeper)
        if fresh.config != old.config:
            await fresh.reconfigure(old.config)
        for operation in self._journal:
            await operation(fresh)
        fresh.events = old.events
        self.buffer, self._state = fresh, state
        self.merges += 1

    async def _apply(self, operation: Callable[[WorkingMemoryBuffer], Awaitable[T]]) -> T:
        """Run ``operation`` and journal it (only once it succeeded: replays must not raise)."""
        result = await operation(self.buffer)
        self._journal.append(operation)
        return result

    def _announce(self, kind: EventKind, now: datetime | None = None) -> None:
        at = now or self.buffer.clock()
        self.buffer.events.publish(
            BufferEvent(
                kind=kind,
                at=at,
                reason=kind.value,
                total_tokens=self.buffer.total_tokens,
                total_items=len(self.buffer),
                details={"session_id": self.key.session_id},
            )
        )


async def probe(
    memory: MemoryStore,
    tenant: Tenant,
    text: str,
    *,
    limit: int = DEFAULT_PROBE_LIMIT,
    now: datetime | None = None,
) -> tuple[str, ...]:
    """The ids of the top ``limit`` hits for ``text``: a search, and nothing else.

    It never records a recall or writes anything: a probe must change nothing it reads.
    """
    if not text.strip():
        return ()
    query = (
        MemoryQuery(text=text, limit=limit)
        if now is None
        else MemoryQuery(text=text, limit=limit, now=now)
    )
    return tuple(hit.item.item_id for hit in await memory.search(tenant, query))


def _sync(
    function: Callable[[WorkingMemoryBuffer], T],
) -> Callable[[WorkingMemoryBuffer], Awaitable[T]]:
    async def operation(buffer: WorkingMemoryBuffer) -> T:
        return function(buffer)

    return operation


def _check_owner(state: SessionState | None, key: SessionKey) -> None:
    if state is not None and state.key != key:
        raise WorkingMemoryError(
            f"the store returned session {state.key.session_id!r} for {key.session_id!r}"
        )


def _rebuild(
    state: SessionState | None,
    config: BufferConfig | None,
    count_tokens: CountTokens | None,
    summarizer: Summarizer | None,
    clock: Clock | None,
    keeper: Keeper | None,
) -> WorkingMemoryBuffer:
    """The buffer saved in ``state``; a fresh one when there is none or it is unreadable.

    An unreadable state (corrupt, or from an unknown format) is logged and
    replaced at the next save: the session loses its buffer, never its turn.
    """
    if state is not None and state.state:
        try:
            return WorkingMemoryBuffer.restore(
                decode(state.state),
                count_tokens=count_tokens,
                summarizer=summarizer,
                clock=clock,
                keeper=keeper,
            )
        except (ValidationError, WorkingMemoryError) as error:
            _log.warning(
                "buffer_state_unreadable",
                session_id=state.key.session_id,
                error=str(error).splitlines()[0],
            )
    return WorkingMemoryBuffer(
        config, count_tokens=count_tokens, summarizer=summarizer, clock=clock, keeper=keeper
    )


_ENTITIES = attrgetter("entities")


def _entities(items: Sequence[BufferItem]) -> tuple[str, ...]:
    """The held items' entities, the most frequent first (ties by name), at most
    :data:`MAX_ENTITIES` (none counted when no item has any: a turn's fragments carry none)."""
    if not any(map(_ENTITIES, items)):
        return ()
    counts = Counter(e.casefold() for item in items for e in item.entities)
    ranked = sorted(counts, key=lambda e: (-counts[e], e))
    return tuple(ranked[:MAX_ENTITIES])


def _profile(state: SessionState) -> SessionProfile:
    return SessionProfile(
        session_id=state.key.session_id,
        themes=state.themes,
        entities=state.entities,
        updated_at=state.updated_at,
    )
