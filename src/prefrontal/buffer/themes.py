"""What a session is about: dominant themes, coherence, and links to earlier sessions.

A theme is a tag, an entity or a content keyword (a word of five letters or
more that is not a stop word), lower-cased. An item *carries* a theme when it
has it. Tags and entities count double, because someone chose them.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime, timedelta
from enum import StrEnum
from itertools import chain, starmap

from pydantic import Field

from prefrontal.buffer.models import BufferItem, BufferModel
from prefrontal.buffer.text import jaccard
from prefrontal.forgetting import remembered
from prefrontal.retrieval.analysis import STOP_WORDS
from prefrontal.text_cache import strings_weight, text_cache
from prefrontal.trusted import assemble

_WORD = re.compile(r"[^\W\d_]{5,}", re.UNICODE)
_MAX_KEYWORDS = 40


@text_cache(max_bytes=2_000_000, weigh=strings_weight)
def keywords(content: str) -> frozenset[str]:
    """The first distinct content keywords of ``content`` (at most 40)."""
    out: list[str] = []
    for word in _WORD.findall(content.casefold()):
        if word not in STOP_WORDS and word not in out:
            out.append(word)
            if len(out) == _MAX_KEYWORDS:
                break
    return frozenset(out)


def item_themes(item: BufferItem) -> frozenset[str]:
    """Every theme ``item`` carries: its labels and its content keywords."""
    return _themes(item.content, _sorted(item.labels))


@remembered(maxsize=2_048)
def _themes(content: str, labels: tuple[str, ...]) -> frozenset[str]:
    """The themes of an item of ``content`` and ``labels`` (sorted, as in :data:`Carried`,
    so that one item is one key whoever asks): its labels and content keywords."""
    return keywords(content).union(labels)


def dominant_themes(
    items: Iterable[BufferItem], limit: int = 5, *, carried: Carried | None = None
) -> tuple[str, ...]:
    """The ``limit`` strongest themes, strongest first, ties by name.

    A theme's strength is the number of items carrying it, labels counting
    double; a theme needs strength 2 (a label of one item, or a keyword of two).
    ``carried``: :func:`carriers` of ``items``, when the caller has it already.
    """
    return _strongest(carriers(items) if carried is None else carried, limit)


Carried = tuple[tuple[str, tuple[str, ...]], ...]
"""Items as what carries their themes: each one's content and labels, sorted (a cache key).

Strings and tuples of them only: the collector stops tracking such a tuple once it
has seen it, while a tuple holding a frozenset stays tracked, and a key lives in the
caches below for many turns (every full collection would walk it)."""


def carriers(items: Iterable[BufferItem]) -> Carried:
    """``items`` as what carries their themes: each one's content and labels (sorted), in
    order (what :func:`dominant_themes` and :func:`coherence` work from)."""
    return tuple((item.content, _sorted(item.labels)) for item in items)


def _sorted(labels: frozenset[str]) -> tuple[str, ...]:
    """``labels`` as a sorted tuple (most items carry none: the empty tuple)."""
    return tuple(sorted(labels)) if labels else ()


@remembered(maxsize=256)
def _strongest(carried: Carried, limit: int) -> tuple[str, ...]:
    """:func:`dominant_themes` of items by their content and labels (cached: a session's
    turns mostly hold the same items, refreshed)."""
    strength = Counter(chain.from_iterable(starmap(_themes, carried)))
    for _, labels in carried:
        if labels:  # (a label is among its item's themes too: it counts twice)
            strength.update(labels)
    ranked = heapq.nsmallest(limit, [(-s, t) for t, s in strength.items() if s >= 2])
    return tuple(t for _, t in ranked)


def carries(item: BufferItem, themes: frozenset[str]) -> bool:
    """True when ``item`` carries at least one of ``themes``."""
    return _carries(item.content, _sorted(item.labels), themes)


def _carries(content: str, labels: tuple[str, ...], themes: frozenset[str]) -> bool:
    return bool(themes) and not _themes(content, labels).isdisjoint(themes)


class Coherence(BufferModel):
    """How well the buffer's items hang together, each part in ``[0, 1]``.

    ``score = 0.4 x thematic + 0.3 x entity + 0.3 x temporal``.
    """

    score: float = Field(ge=0.0, le=1.0)
    thematic: float = Field(ge=0.0, le=1.0)
    entity: float = Field(ge=0.0, le=1.0)
    temporal: float = Field(ge=0.0, le=1.0)
    themes: tuple[str, ...] = ()


def coherence(
    items: Sequence[BufferItem],
    themes: tuple[str, ...],
    *,
    fade_seconds: float,
    carried: Carried | None = None,
) -> Coherence:
    """Coherence of ``items`` around ``themes``; an empty buffer is perfectly coherent.

    - thematic: the share of items carrying a dominant theme;
    - entity: the share of labelled items that share a label with another item;
    - temporal: ``1 / (1 + spread / fade_seconds)`` over the last-access times.

    ``carried``: :func:`carriers` of ``items``, when the caller has it already.
    """
    if not items:
        return Coherence(score=1.0, thematic=1.0, entity=1.0, temporal=1.0, themes=themes)
    thematic, entity = _label_coherence(carriers(items) if carried is None else carried, themes)
    times = [i.last_accessed_at for i in items]
    temporal = 1.0 / (1.0 + (max(times) - min(times)).total_seconds() / fade_seconds)
    score = 0.4 * thematic + 0.3 * entity + 0.3 * temporal
    return Coherence(
        score=min(score, 1.0), thematic=thematic, entity=entity, temporal=temporal, themes=themes
    )


@remembered(maxsize=256)
def _label_coherence(carried: Carried, themes: tuple[str, ...]) -> tuple[float, float]:
    """The thematic and entity parts of :func:`coherence`, of items by content and labels
    (cached: a session's turns mostly hold the same items, refreshed)."""
    wanted = frozenset(themes)
    thematic = sum(_carries(content, labels, wanted) for content, labels in carried) / len(carried)
    return thematic, _entity_coherence([labels for _, labels in carried])


def _entity_coherence(labels_of: Sequence[Collection[str]]) -> float:
    labelled = [labels for labels in labels_of if labels]
    if len(labelled) < 2:
        return 1.0
    counts: Counter[str] = Counter(label for labels in labelled for label in labels)
    connected = sum(any(counts[label] > 1 for label in labels) for labels in labelled)
    return connected / len(labelled)


class Relationship(StrEnum):
    """How an earlier session relates to this one."""

    CONTINUATION = "continuation"
    """Recent and largely about the same things: this session picks it up."""
    RELATED = "related"
    """Shares entities or themes, but is older or less alike."""


class SessionProfile(BufferModel):
    """What session linking looks at: ids, themes, entities, times."""

    session_id: str
    themes: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    updated_at: datetime


class SessionLink(BufferModel):
    """An earlier session of the same user that shares entities or themes with this one."""

    session_id: str
    relationship: Relationship
    similarity: float = Field(ge=0.0, le=1.0)
    shared_entities: tuple[str, ...] = ()
    shared_themes: tuple[str, ...] = ()
    gap_seconds: float = Field(ge=0.0)


class LinkSettings(BufferModel):
    """Thresholds of session linking (defaults: 24 h look-back, 1 h continuation gap)."""

    lookback: timedelta = timedelta(hours=24)
    continuation_gap: timedelta = timedelta(hours=1)
    min_similarity: float = Field(default=0.3, ge=0.0, le=1.0)
    continuation_overlap: float = Field(default=0.5, ge=0.0, le=1.0)


def link_session(
    current: SessionProfile, other: SessionProfile, now: datetime, settings: LinkSettings
) -> SessionLink | None:
    """The link from ``current`` to ``other``, or ``None`` when they are not related.

    ``similarity = 0.4 x entity Jaccard + 0.4 x theme Jaccard + 0.2 x temporal
    proximity`` (1.0 now, 0.0 at the look-back limit). Sessions that share no
    entity and no theme, lie outside the look-back window, or score under
    ``min_similarity`` are not linked.
    """
    gap = max((now - other.updated_at).total_seconds(), 0.0)
    window = settings.lookback.total_seconds()
    if other.session_id == current.session_id or gap > window:
        return None
    mine_e, theirs_e = _folded(current.entities), _folded(other.entities)
    mine_t, theirs_t = _folded(current.themes), _folded(other.themes)
    shared_e, shared_t = mine_e & theirs_e, mine_t & theirs_t
    if not shared_e and not shared_t:
        return None
    entity_sim = jaccard(mine_e, theirs_e, shared_e)
    theme_sim = jaccard(mine_t, theirs_t, shared_t)
    similarity = 0.4 * entity_sim + 0.4 * theme_sim + 0.2 * (1.0 - gap / window)
    if similarity < settings.min_similarity:
        return None
    close = gap <= settings.continuation_gap.total_seconds()
    alike = max(entity_sim, theme_sim) >= settings.continuation_overlap
    relationship = Relationship.CONTINUATION if close and alike else Relationship.RELATED
    # Every value is one the fields accept (a similarity of shares and a proximity in [0, 1],
    # clamped against rounding; a gap of at least 0), so the link is assembled unchecked.
    return assemble(
        SessionLink,
        {
            "session_id": other.session_id,
            "relationship": relationship,
            "similarity": min(similarity, 1.0),
            "shared_entities": tuple(sorted(shared_e)),
            "shared_themes": tuple(sorted(shared_t)),
            "gap_seconds": gap,
        },
    )


def link_sessions(
    current: SessionProfile,
    others: Iterable[SessionProfile],
    now: datetime,
    settings: LinkSettings | None = None,
) -> tuple[SessionLink, ...]:
    """Every link from ``current`` to ``others``, most similar first (ties by session id)."""
    chosen = settings or LinkSettings()
    links = [link_session(current, o, now, chosen) for o in others]
    found = [link for link in links if link is not None]
    return tuple(sorted(found, key=lambda link: (-link.similarity, link.session_id)))


@remembered(maxsize=4_096)
def _folded(values: tuple[str, ...]) -> frozenset[str]:
    """``values`` case-folded, as a set (cached: a session's profile is compared with many)."""
    return frozenset(v.casefold() for v in values)
