"""Consolidation: working-memory items that are going cold become episodic memories.

:func:`consolidate` takes one session's buffer: the items due (untouched for
half their lifetime, see :mod:`.planning`) are grouped by source, each group
is summarized (by the pluggable summarizer: the offline extractive one by
default, any async callable in its place) and written to the episodic store
as one item with provenance to its originals, and the originals then leave
the buffer (reason ``consolidated``).

It is crash-safe and additive. It runs in three steps, each of which leaves
a state the next run can finish:

1. **mark**: each due item notes the id of the episodic item it will become
   (a hash of the session and the group's item ids), and the buffer is
   saved with its optimistic version;
2. **promote**: every marked group whose episodic item does not exist yet is
   summarized and written (a put by id: writing it twice replaces it);
3. **release**: the marked items whose episodic item exists leave the
   buffer, which is saved again.

Killed anywhere, a later run finds the marks and finishes the job with the
same groups and ids, whatever time it is then: no item is lost (it is still
in the buffer, or its episodic item exists) and none is promoted twice (an
item is grouped once, when it is marked). A save that loses a race with a
turn reloads the session and does its step again on the newer state.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from prefrontal.buffer import BufferConfig, ExtractiveSummarizer, SessionBuffer, Summarizer
from prefrontal.buffer import tokens as default_tokens
from prefrontal.buffer.summarizer import fit_tokens
from prefrontal.buffer.tokens import CountTokens
from prefrontal.errors import ConflictError
from prefrontal.formation.planning import Group, new_groups, pending_groups, promoted_item
from prefrontal.formation.report import ConsolidationReport, Promotion
from prefrontal.stores.long_term import MemoryItem
from prefrontal.stores.set import Stores
from prefrontal.stores.working_memory import SessionKey

DEFAULT_MAX_TOKENS = 256
"""The summarizer's room for one promoted item's content."""


async def consolidate(
    stores: Stores,
    session_key: SessionKey,
    *,
    now: datetime,
    summarizer: Summarizer | None = None,
    lifetime: timedelta | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    count_tokens: CountTokens | None = None,
    max_attempts: int = 5,
) -> ConsolidationReport:
    """Promote the session's due working-memory items into episodic memory.

    ``now`` is the moment of the run (items are due by it; the promoted
    items are stored at it). ``lifetime`` replaces the buffer's fade-out
    time as every item's lifetime. ``summarizer`` writes a group's content
    in at most ``max_tokens`` tokens (as ``count_tokens`` counts them); longer
    text is cut to fit, blank text is replaced by the extractive summary. A
    session never saved is left alone. Raises
    :class:`~prefrontal.errors.ConflictError` when ``max_attempts`` saves in
    a row lose their race; whatever was done until then the next run finishes.
    """
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be an integer of at least 1, got {max_tokens!r}")
    counter = count_tokens or default_tokens.count_tokens
    chosen = summarizer or ExtractiveSummarizer()

    session, fresh = await _mark(stores, session_key, now, lifetime, max_attempts)
    if session is None:
        return ConsolidationReport(session=session_key, at=now)
    groups = pending_groups(session.items)
    if not groups:
        return ConsolidationReport(session=session_key, at=now, kept=len(session.items))
    fresh_targets = {g.target for g in fresh}
    tenant = session_key.tenant
    targets = [g.target for g in groups]
    existing = {item.item_id for item in await stores.episodic.get(tenant, targets)}
    written: list[MemoryItem] = []
    for group in groups:
        if group.target not in existing:
            content = await _summary(group, chosen, max_tokens, counter)
            written.append(promoted_item(session_key, group, content, now))
    await stores.episodic.put_many(written)
    released, kept = await _release(session, set(targets), now, max_attempts)
    done = {item.item_id for item in written}
    return ConsolidationReport(
        session=session_key,
        at=now,
        promoted=tuple(
            Promotion(
                item_id=g.target,
                source=g.source,
                originals=g.member_ids,
                written=g.target in done,
                resumed=g.target not in fresh_targets,
            )
            for g in groups
        ),
        released=released,
        kept=kept,
    )


async def _mark(
    stores: Stores,
    key: SessionKey,
    now: datetime,
    lifetime: timedelta | None,
    attempts: int,
) -> tuple[SessionBuffer | None, list[Group]]:
    """Load the session and mark its due items (saved); ``None`` for a session never saved."""
    for attempt in range(1, attempts + 1):
        session = await _load(stores, key, now)
        if session.is_new:
            return None, []
        config: BufferConfig = session.buffer.config
        fresh = new_groups(key, session.items, config, now, lifetime)
        if not fresh:
            return session, []
        targets = {m.item_id: g.target for g in fresh for m in g.members}
        await session.mark_consolidation(targets, now)
        try:
            await session.save(now)
        except ConflictError:
            if attempt == attempts:
                raise
            continue
        return session, fresh
    raise AssertionError("unreachable")  # pragma: no cover


async def _release(
    session: SessionBuffer, targets: set[str], now: datetime, attempts: int
) -> tuple[tuple[str, ...], int]:
    """Remove the items promoted into ``targets`` and save; on a lost race, reload and redo.

    Returns the ids removed and how many items the buffer still holds.
    """
    current = session
    for attempt in range(1, attempts + 1):
        gone = await current.release_consolidated(targets, now)
        if not gone:
            return (), len(current.items)
        try:
            await current.save(now)
        except ConflictError:
            if attempt == attempts:
                raise
            current = await SessionBuffer.load(
                session.store, session.key, clock=lambda: now, max_attempts=1
            )
            continue
        return tuple(e.item_id for e in gone), len(current.items)
    raise AssertionError("unreachable")  # pragma: no cover


async def _load(stores: Stores, key: SessionKey, now: datetime) -> SessionBuffer:
    """The session's buffer as saved, on the run's clock, raising on a lost save race."""
    return await SessionBuffer.load(stores.working_memory, key, clock=lambda: now, max_attempts=1)


async def _summary(
    group: Group, summarizer: Summarizer, max_tokens: int, count: CountTokens
) -> str:
    """The group's summary; the extractive one when the summarizer gives blank text."""
    text = fit_tokens(
        (await summarizer(group.members, max_tokens, count)).strip(), max_tokens, count
    )
    if not text:
        text = (await ExtractiveSummarizer()(group.members, max_tokens, count)).strip()
    return text or group.members[0].content
