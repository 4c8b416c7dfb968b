"""Whose BM25 statistics an item counts in: the agent's shared items, or one user's own.

A search's collection (:class:`~prefrontal.retrieval.ranking.Corpus`) is
what its user may read: the user's own items and the agent's shared ones,
never another user's private items, whose words would otherwise show in
the user's scores. Every backend keeps its statistics per agent and
*owner*: :data:`SHARED` for the agent's shared items, the user's id for
that user's private items. A search adds up the statistics of the two
owners its user may read (:func:`readable`).
"""

from __future__ import annotations

SHARED = ""
"""The owner of the agent's shared items in the statistics (no user id is empty)."""


def owner_sql(scope: str, user: str) -> str:
    """SQL (SQLite and PostgreSQL alike): the owner a row of ``scope`` and ``user`` counts under."""
    return f"(CASE {scope} WHEN 'shared' THEN '' ELSE {user} END)"


def readable(user: str) -> tuple[str, str]:
    """The owners whose statistics a search by ``user`` adds up: the shared one, its own."""
    return SHARED, user
