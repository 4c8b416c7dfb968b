"""Dominant themes, coherence, and the classification of links between sessions."""

from __future__ import annotations

import gc
from collections import Counter
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.buffer import (
    BufferItem,
    ItemSource,
    LinkSettings,
    Relationship,
    SessionProfile,
    link_sessions,
)
from prefrontal.buffer.themes import (
    carriers,
    carries,
    coherence,
    dominant_themes,
    item_themes,
    keywords,
)

from .conftest import T0, at, item, make_buffer

pytestmark = pytest.mark.anyio


async def _items(*specs: tuple[str, tuple[str, ...]]) -> tuple[BufferItem, ...]:
    buffer = make_buffer()
    for n, (text, tags) in enumerate(specs):
        await buffer.add(item(text, item_id=f"i{n}", tags=tags), now=at(n))
    return buffer.items


async def test_labels_and_repeated_keywords_are_themes() -> None:
    """A tag is a theme on its own; a keyword needs two items; stronger themes come first."""
    items = await _items(
        ("planning the summer holiday", ("vacation",)),
        ("summer flights booked", ("vacation",)),
        ("weekly report", ()),
    )
    themes = dominant_themes(items)
    assert themes[0] == "vacation"
    assert "summer" in themes
    assert "report" not in themes


async def test_a_focused_buffer_is_more_coherent_than_a_scattered_one() -> None:
    """Items about one thing score higher coherence than items about unrelated things."""
    focused = await _items(("trip plan", ("trip",)), ("trip costs", ("trip",)))
    scattered = await _items(("trip plan", ("trip",)), ("tax forms", ("tax",)))
    score = coherence(focused, dominant_themes(focused), fade_seconds=300).score
    other = coherence(scattered, dominant_themes(scattered), fade_seconds=300).score
    assert score > other


def test_an_empty_buffer_is_coherent() -> None:
    """Nothing held is nothing incoherent: score 1.0."""
    assert coherence((), (), fade_seconds=300).score == 1.0


def _profile(
    sid: str, themes: tuple[str, ...], entities: tuple[str, ...], hours: float
) -> SessionProfile:
    return SessionProfile(
        session_id=sid, themes=themes, entities=entities, updated_at=T0 - timedelta(hours=hours)
    )


def test_link_classification() -> None:
    """Recent and alike is a continuation; older is related; nothing shared is no link."""
    current = _profile("now", ("vacation", "flights"), ("Lisbon",), 0)
    others = [
        _profile("close", ("vacation", "flights"), ("Lisbon",), 0.5),
        _profile("older", ("vacation", "flights"), ("lisbon",), 10),
        _profile("unrelated", ("taxes",), ("IRS",), 0.1),
        _profile("now", ("vacation",), (), 0),
    ]
    links = link_sessions(current, others, T0, LinkSettings())
    assert [(link.session_id, link.relationship) for link in links] == [
        ("close", Relationship.CONTINUATION),
        ("older", Relationship.RELATED),
    ]
    assert links[0].similarity > links[1].similarity


_WORDS = ("launch", "budget", "review", "berlin", "payment", "the", "lena", "Launch")
# An item as (content, tags, entities), from a small vocabulary so that themes repeat.
_ITEM_SPECS = st.tuples(
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6).map(" ".join),
    st.lists(st.sampled_from(_WORDS), max_size=2).map(tuple),
    st.lists(st.sampled_from(_WORDS), max_size=2).map(tuple),
)


def _made(specs: list[tuple[str, tuple[str, ...], tuple[str, ...]]]) -> list[BufferItem]:
    return [
        BufferItem(
            item_id=f"i{n}",
            content=text,
            source=ItemSource.SYSTEM,
            tokens=1,
            priority=0.5,
            salience=0.0,
            tags=tags,
            entities=entities,
            added_at=T0,
            last_accessed_at=T0,
        )
        for n, (text, tags, entities) in enumerate(specs)
    ]


@settings(max_examples=60, deadline=None)
@given(
    specs=st.lists(_ITEM_SPECS, max_size=8),
    limit=st.integers(min_value=1, max_value=6),
)
def test_dominant_themes_are_those_counted_item_by_item(
    specs: list[tuple[str, tuple[str, ...], tuple[str, ...]]], limit: int
) -> None:
    """The strongest themes are those of a plain count: each item's themes once, its labels
    once more; strength 2 at least; strongest first, ties by name."""
    items = _made(specs)
    strength: Counter[str] = Counter()
    for one in items:
        strength.update(item_themes(one))
        strength.update(one.labels)
    expected = sorted((t for t, s in strength.items() if s >= 2), key=lambda t: (-strength[t], t))
    assert dominant_themes(items, limit) == tuple(expected[:limit])
    carried = carriers(items)
    assert dominant_themes((), limit, carried=carried) == tuple(expected[:limit])
    assert coherence(items, ("launch",), fade_seconds=60.0, carried=carried) == coherence(
        items, ("launch",), fade_seconds=60.0
    )


THEME_WORDS = ("payment", "review", "lisbon", "offsite", "hotel", "budget", "the")


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from(THEME_WORDS), max_size=6).map(" ".join),
    st.lists(st.sampled_from(("Lisbon", "budget", "team")), max_size=2, unique=True),
    st.frozensets(st.sampled_from((*THEME_WORDS, "team"))),
)
def test_an_item_carries_a_theme_when_its_themes_meet_them(
    content: str, tags: list[str], themes: frozenset[str]
) -> None:
    """``carries``: the item's themes (its labels and its keywords) meet ``themes``."""
    made = BufferItem(
        item_id="i",
        content=content or "x",
        source=ItemSource.MEMORY_RETRIEVAL,
        tokens=1,
        priority=0.5,
        salience=0.5,
        tags=tuple(tags),
        added_at=at(0),
        last_accessed_at=at(0),
        seq=0,
    )
    assert carries(made, themes) == (bool(themes) and not item_themes(made).isdisjoint(themes))


@settings(max_examples=100, deadline=None)
@given(
    specs=st.lists(_ITEM_SPECS, min_size=1, max_size=8),
    themes=st.lists(st.sampled_from(_WORDS), max_size=3, unique=True).map(tuple),
)
def test_coherence_is_that_of_each_items_label_set(
    specs: list[tuple[str, tuple[str, ...], tuple[str, ...]]], themes: tuple[str, ...]
) -> None:
    """The thematic and entity parts, worked out from the carried items (labels sorted), equal
    those of each item's own label set: a theme met by its labels or keywords, a label shared."""
    items = _made(specs)
    wanted = frozenset(themes)
    met = [
        bool(wanted) and not (one.labels | keywords(one.content)).isdisjoint(wanted)
        for one in items
    ]
    labelled = [one.labels for one in items if one.labels]
    counts = Counter(label for labels in labelled for label in labels)
    shared = [any(counts[label] > 1 for label in labels) for labels in labelled]
    entity = sum(shared) / len(labelled) if len(labelled) >= 2 else 1.0
    made = coherence(items, themes, fade_seconds=60.0, carried=carriers(items))
    assert (made.thematic, made.entity) == (sum(met) / len(items), entity)


def test_carried_items_are_left_untracked_by_the_collector() -> None:
    """What carries the themes (a cache key kept for many turns) holds strings and tuples of
    them only, so the collector stops tracking it: no full collection walks it again."""
    carried = carriers(_made([("launch review", ("Lena",), ("Berlin",)), ("the budget", (), ())]))
    assert carried == (("launch review", ("berlin", "lena")), ("the budget", ()))
    for _ in range(3):  # (a tuple is untracked once its items are: a level a collection)
        gc.collect()
    assert not gc.is_tracked(carried)
