"""The pure part of consolidation: which items are due, how they group, what they become.

Nothing here does I/O or reads a clock: every function takes ``now``.

**Lifetime.** Seed 002 consolidates a working-memory entry when it reaches
half of its TTL. A buffer item carries no TTL of its own; what ends its life
in the buffer is fading out, after ``fade_seconds`` (300 s by default)
without being touched. So an item's *lifetime* is that fade-out time,
counted from its last access, and it is due for consolidation once it has
gone untouched for half of it (150 s by default), whether or not it has
faded since (a saved buffer keeps faded items until its next turn).
Consolidation may be given another lifetime for every item. Items with no
lifetime at all are never due:

- pinned items, which never fade (the agent keeps them);
- a turn's context fragments (``Lifetime.TURN``), copies of what the stores
  already hold, replaced by the next turn anyway;
- copies of long-term memory items, which are there already: items
  retrieved from memory, and any item whose provenance names items of the
  episodic or semantic store (a tool result ``end_turn`` wrote, say).

**Groups.** Due items are grouped by source (``user_input``, ``external``,
``reflection``, ``system``), one promoted episodic item per group, in
insertion order within a group. A source with more items than one promoted
item's provenance can name (its ids as a JSON list within a metadata value's
2,000 characters) is split into several groups, in order. An item already marked for a promotion (by
an earlier run that did not finish) keeps its group and is never grouped
again.

**Ids.** A promoted item's id is a hash of the session and the ids of the
items it stands for, so writing it twice replaces it, never duplicates it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from prefrontal.buffer import BufferConfig, BufferItem, ItemSource
from prefrontal.buffer.decay import LONG_TERM_STORES as LONG_TERM_STORES
from prefrontal.buffer.decay import idle_seconds, is_promotable
from prefrontal.buffer.decay import is_long_term_copy as is_long_term_copy
from prefrontal.stores.long_term import MemoryItem, MemoryKind
from prefrontal.stores.records import MAX_LABEL_CHARS, MAX_LINE_CHARS
from prefrontal.stores.working_memory import SessionKey

PROMOTED_PREFIX = "wmc_"
"""Every promoted item's id starts with this."""
ORIGIN = "working_memory"
"""``metadata["origin"]`` of a promoted item."""
TAG = "consolidated"
"""The tag every promoted item carries."""
MAX_LABELS = 20
"""A promoted item keeps at most this many of its originals' tags, and of their entities."""


@dataclass(frozen=True, slots=True)
class Group:
    """Items of one source promoted together into the episodic item ``target``."""

    target: str
    source: ItemSource
    members: tuple[BufferItem, ...]

    @property
    def member_ids(self) -> tuple[str, ...]:
        """The ids of the buffer items it stands for, in insertion order."""
        return tuple(m.item_id for m in self.members)


def lifetime_of(
    item: BufferItem, config: BufferConfig, lifetime: timedelta | None = None
) -> timedelta | None:
    """How long ``item`` lives in the buffer untouched; ``None`` when it has no lifetime.

    ``lifetime`` overrides the buffer's fade-out time for every item that has one.
    """
    if not is_promotable(item):
        return None
    return lifetime if lifetime is not None else timedelta(seconds=config.fade_seconds)


def is_due(
    item: BufferItem, config: BufferConfig, now: datetime, lifetime: timedelta | None = None
) -> bool:
    """True when ``item`` has gone untouched for at least half its lifetime at ``now``."""
    span = lifetime_of(item, config, lifetime)
    if span is None:
        return False
    return idle_seconds(item, now) >= span.total_seconds() / 2


def promoted_id(key: SessionKey, member_ids: Iterable[str]) -> str:
    """The id of the episodic item that stands for ``member_ids`` of session ``key``.

    The same session and the same set of ids (in any order) always give the same id.
    """
    parts = (key.agent_id, key.user_id, key.session_id, *sorted(set(member_ids)))
    digest = hashlib.blake2b("\x1f".join(parts).encode(), digest_size=12).hexdigest()
    return f"{PROMOTED_PREFIX}{digest}"


def pending_groups(items: Sequence[BufferItem]) -> list[Group]:
    """The groups an earlier run marked and did not finish, by target, in insertion order."""
    by_target: dict[str, list[BufferItem]] = {}
    for item in sorted(items, key=lambda i: i.seq):
        if item.consolidating_into is not None:
            by_target.setdefault(item.consolidating_into, []).append(item)
    return [
        Group(target=target, source=members[0].source, members=tuple(members))
        for target, members in by_target.items()
    ]


def new_groups(
    key: SessionKey,
    items: Sequence[BufferItem],
    config: BufferConfig,
    now: datetime,
    lifetime: timedelta | None = None,
) -> list[Group]:
    """The due, unmarked items grouped by source (sources in first-appearance order)."""
    by_source: dict[ItemSource, list[BufferItem]] = {}
    for item in sorted(items, key=lambda i: i.seq):
        if item.consolidating_into is None and is_due(item, config, now, lifetime):
            by_source.setdefault(item.source, []).append(item)
    return [
        Group(
            target=promoted_id(key, (m.item_id for m in chunk)),
            source=source,
            members=chunk,
        )
        for source, members in by_source.items()
        for chunk in _chunks(members)
    ]


def _chunks(members: list[BufferItem]) -> list[tuple[BufferItem, ...]]:
    """``members`` in order, cut so that each part's ids fit one metadata value as JSON."""
    chunks: list[tuple[BufferItem, ...]] = []
    current: list[BufferItem] = []
    for member in members:
        if current and len(_json_ids([*current, member])) > MAX_LINE_CHARS:
            chunks.append(tuple(current))
            current = []
        current.append(member)
    if current:
        chunks.append(tuple(current))
    return chunks


def _json_ids(members: Sequence[BufferItem]) -> str:
    return json.dumps([m.item_id for m in members])


def promoted_item(key: SessionKey, group: Group, content: str, now: datetime) -> MemoryItem:
    """The episodic item for ``group`` with ``content`` (its summary), stored at ``now``.

    Provenance: ``metadata["consolidated_from"]`` is the JSON list of the
    buffer items it stands for, ``metadata["folded_from"]`` the items those
    had folded into them (summaries), and ``metadata["sources"]`` the
    long-term items they were loaded from, if any. The last two keep the
    newest ids that fit a metadata value (2,000 characters);
    ``folded_count`` and ``sources_count`` say how many there were.
    """
    members = group.members
    folded = _distinct(i for m in members for i in m.summary_of)
    sources = _distinct(i for m in members for i in m.provenance.item_ids)
    tags = _labels((TAG, *(t for m in members for t in m.tags)))
    return MemoryItem(
        item_id=group.target,
        agent_id=key.agent_id,
        user_id=key.user_id,
        created_at=now,
        kind=MemoryKind.SUMMARY,
        content=content,
        importance=max(m.priority for m in members),
        occurred_at=min(m.added_at for m in members),
        tags=tags,
        entities=_labels(e for m in members for e in m.entities),
        metadata={
            "origin": ORIGIN,
            "session_id": key.session_id,
            "source": group.source.value,
            "consolidated_from": json.dumps(list(group.member_ids)),
            "consolidated_count": len(members),
            "folded_from": _newest_fitting(folded),
            "folded_count": len(folded),
            "sources": _newest_fitting(sources),
            "sources_count": len(sources),
        },
    )


def originals(item: MemoryItem) -> tuple[str, ...]:
    """The ids of the buffer items a promoted item stands for (empty for any other item)."""
    if item.metadata.get("origin") != ORIGIN:
        return ()
    raw = item.metadata.get("consolidated_from")
    return tuple(json.loads(raw)) if isinstance(raw, str) else ()


def _distinct(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))


def _labels(values: Iterable[str]) -> tuple[str, ...]:
    """The distinct values a stored label may be, the first ``MAX_LABELS``."""
    return tuple(v for v in _distinct(values) if v and len(v) <= MAX_LABEL_CHARS)[:MAX_LABELS]


def _newest_fitting(ids: Sequence[str]) -> str:
    """The JSON list of the last ``ids`` (in order) that fit one metadata value."""
    kept: list[str] = []
    for item_id in reversed(ids):
        if len(json.dumps([item_id, *kept])) > MAX_LINE_CHARS:
            break
        kept.insert(0, item_id)
    return json.dumps(kept)
