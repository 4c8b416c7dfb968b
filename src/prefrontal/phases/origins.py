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

from prefrontal.bundle.fence import as_data, speaker_label
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
    if item.scope is Scope.SHARED:
        author = item.metadata.get(AUTHOR_KEY) or item.user_id
        return f"(shared by {as_data(str(author))}) "
    source = item.metadata.get(SOURCE_KEY)
    if source is None or source in OWN_SOURCES:
        return ""
    if source == EXTRACTED:
        return "(extracted) "
    writer = item.metadata.get(AUTHOR_KEY)
    if writer is not None and str(writer) not in TRUSTED:
        return f"(from {as_data(str(source))}, by {as_data(str(writer))}) "
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
    """The item's text as data, after its origin and its speaker when it has them."""
    speaker = item.metadata.get("speaker")
    label = origin_label(item)
    if speaker:
        return f"{label}{speaker_label(str(speaker))}: {as_data(item.content, opens_line=False)}"
    return label + as_data(item.content, opens_line=not label)
