"""Dominant themes, coherence, and the classification of links between sessions."""

from __future__ import annotations

from datetime import timedelta

import pytest

from prefrontal.buffer import BufferItem, LinkSettings, Relationship, SessionProfile, link_sessions
from prefrontal.buffer.themes import coherence, dominant_themes

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
