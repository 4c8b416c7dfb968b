"""Where a memory came from, as the short label its line in the context starts with.

A memory line says who wrote it when that is not the user the turn is for:
``(shared by sam)`` for a shared memory (its author), ``(extracted)`` for
what was drawn from a finished turn, ``(from NAME)`` for another source (a
tool, an import), ``(from NAME, by KEY)`` when a key wrote it. A line
without a label is the user's own memory.

Goals, actions, questions and scratch entries say who wrote them the same
way (:func:`author_label`): ``shared by NAME`` for every one a user shared,
``by KEY`` for any other a key wrote last (the agent's own included); the
agent's own side (its owner's file, its tools, the application) needs none. Every name in a label is
rendered as data (:func:`~prefrontal.bundle.fence.as_data`), and every name
comes from the writer's grant, never from what it wrote
(:mod:`prefrontal.stores.authors`).
"""

from __future__ import annotations

from prefrontal.bundle.fence import CACHED_CHARS, as_data, speaker_label
from prefrontal.forgetting import remembered
from prefrontal.stores.authors import HOLDER, TRUSTED
from prefrontal.stores.long_term import AUTHOR_KEY, SOURCE_KEY, MemoryItem
from prefrontal.stores.tenancy import Scope

__all__ = ["EXTRACTED", "OWN_SOURCES", "author_label", "memory_line", "origin_label"]

EXTRACTED = "end_turn"
"""The source of memories drawn from a finished turn's exchange."""
OWN_SOURCES = frozenset({"user", "conversation"})
"""Sources that are the user's own words: they need no label."""


def origin_label(item: MemoryItem) -> str:
    """The label (with its trailing space) a memory's line starts with, or ``""``."""
    metadata = item.metadata
    return _label(item.scope, item.user_id, metadata.get(SOURCE_KEY), metadata.get(AUTHOR_KEY))


def _label(scope: Scope, user_id: str, source: object, author: object) -> str:
    """:func:`origin_label` of an item of ``scope`` and ``user_id`` with that source and author."""
    if scope is Scope.SHARED:
        return f"(shared by {as_data(str(author or user_id))}) "
    if source is None or source in OWN_SOURCES:
        return ""
    if source == EXTRACTED:
        return "(extracted) "
    if author is not None and str(author) not in TRUSTED:
        return f"(from {as_data(str(source))}, by {as_data(str(author))}) "
    return f"(from {as_data(str(source))}) "


def author_label(author: str | None, scope: Scope, user_id: str) -> str | None:
    """Who wrote a goal or scratch entry, as its label says it, or ``None`` when it needs none.

    ``shared by NAME`` for an item a user shared (its author, else that
    user); ``by KEY`` for the agent's own item or a private one when a key
    wrote it last; nothing for the agent's own side (the owner's file, the
    agent's tools, the application in process).
    """
    if scope is Scope.SHARED and user_id != HOLDER:
        return f"shared by {as_data(author or user_id, opens_line=False)}"
    if author is None or author in TRUSTED:
        return None
    return f"by {as_data(author, opens_line=False)}"


def memory_line(item: MemoryItem) -> str:
    """The item's text as data, after its origin and its speaker when it has them.

    Worked out from the item's content, scope, owner and the three metadata
    values it shows; remembered for contents up to
    :data:`~prefrontal.bundle.fence.CACHED_CHARS` long whose values are
    strings (or absent: ``1`` and ``True`` are one key to a cache, not one
    label), so that an item read again (turn after turn, or a copy with a
    new recall count) gives the very same line without fencing it again.
    """
    metadata = item.metadata
    speaker, source = metadata.get("speaker"), metadata.get(SOURCE_KEY)
    author, content = metadata.get(AUTHOR_KEY), item.content
    if (
        len(content) <= CACHED_CHARS
        and (speaker is None or type(speaker) is str)
        and (source is None or type(source) is str)
        and (author is None or type(author) is str)
    ):
        return _remembered_line(content, item.scope, item.user_id, speaker, source, author)
    return _line(content, item.scope, item.user_id, speaker, source, author)


def _line(
    content: str, scope: Scope, user_id: str, speaker: object, source: object, author: object
) -> str:
    label = _label(scope, user_id, source, author)
    if speaker:
        return f"{label}{speaker_label(str(speaker))}: {as_data(content, opens_line=False)}"
    return label + as_data(content, opens_line=not label)


@remembered(maxsize=8_192)
def _remembered_line(
    content: str, scope: Scope, user_id: str, speaker: object, source: object, author: object
) -> str:
    """:func:`_line`, remembered (at most ``8,192 x CACHED_CHARS`` characters of content, as
    :func:`~prefrontal.bundle.fence.as_data` holds)."""
    return _line(content, scope, user_id, speaker, source, author)
