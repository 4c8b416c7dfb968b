"""Building fragments and judging relevance: helpers shared by the loading phases."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Set
from datetime import datetime

from prefrontal.bundle.models import Fragment, Provenance, Section
from prefrontal.object_cache import ObjectCache
from prefrontal.phases.state import TurnState
from prefrontal.retrieval.analysis import term_set, terms
from prefrontal.trusted import assemble

FRAGMENTS_KEPT = 8_192
"""Fragments remembered by the records they were made of (see :func:`made_once`)."""
INPUTS_KEPT = 64
"""Requests whose input terms are remembered (see :func:`input_terms`)."""
_FRAGMENTS: ObjectCache[Fragment] = ObjectCache(FRAGMENTS_KEPT)
_INPUT_TERMS: ObjectCache[frozenset[str]] = ObjectCache(INPUTS_KEPT)


# Keyword-only past the text: one argument per field of Provenance and Fragment.
def fragment(  # noqa: PLR0913
    turn: TurnState,
    section: Section,
    text: str,
    *,
    store: str,
    item_ids: tuple[str, ...],
    phase: str,
    rank: int,
    position: float = 0.0,
    score: float | None = None,
    created_at: datetime | None = None,
    updated_at: datetime | None = None,
    version: str | None = None,
    heading: str | None = None,
    role: str | None = None,
    volatile: bool = False,
) -> Fragment:
    """A fragment of ``text`` with its token count and provenance filled in.

    The loading phases make dozens a turn (every memory that may be shown),
    from values of the types the fields take: the fragment is assembled
    without validating them again (:mod:`prefrontal.trusted`), the
    numbers made the fields' types first. What the fields' constraints
    refuse (an empty text, no item ids, no store or phase) is validated, and
    raises as before.
    """
    if not (text and item_ids and store and phase):
        return _validated(
            turn,
            section,
            text,
            store,
            item_ids,
            phase,
            rank,
            position,
            score,
            created_at,
            updated_at,
            version,
            heading,
            role,
            volatile,
        )
    return assembled(
        turn,
        section,
        text,
        store,
        tuple(item_ids),
        phase,
        None if score is None else float(score),
        created_at,
        updated_at,
        version,
        int(rank),
        float(position),
        heading,
        role,
        bool(volatile),
    )


def assembled(  # noqa: PLR0913 (one argument per field of Provenance and Fragment)
    turn: TurnState,
    section: Section,
    text: str,
    store: str,
    item_ids: tuple[str, ...],
    phase: str,
    score: float | None,
    created_at: datetime | None,
    updated_at: datetime | None,
    version: str | None,
    rank: int,
    position: float,
    heading: str | None,
    role: str | None,
    volatile: bool,
) -> Fragment:
    """The fragment :func:`fragment` makes, from values already of the fields' types and
    passing their constraints (a non-empty text, item ids, store and phase), assembled
    without validating them again: the loading phases' hot path."""
    provenance = assemble(
        Provenance,
        {
            "store": store,
            "item_ids": item_ids,
            "phase": phase,
            "score": score,
            "created_at": created_at,
            "updated_at": updated_at,
            "version": version,
        },
    )
    return assemble(
        Fragment,
        {
            "section": section,
            "text": text,
            "tokens": turn.count(text),
            "provenance": provenance,
            "rank": rank,
            "position": position,
            "heading": heading,
            "role": role,
            "volatile": volatile,
        },
    )


def _validated(  # noqa: PLR0913
    turn: TurnState,
    section: Section,
    text: str,
    store: str,
    item_ids: tuple[str, ...],
    phase: str,
    rank: int,
    position: float,
    score: float | None,
    created_at: datetime | None,
    updated_at: datetime | None,
    version: str | None,
    heading: str | None,
    role: str | None,
    volatile: bool,
) -> Fragment:
    """The fragment validated in one call, its provenance as a plain row."""
    return Fragment.model_validate(
        {
            "section": section,
            "text": text,
            "tokens": turn.count(text),
            "provenance": {
                "store": store,
                "item_ids": item_ids,
                "phase": phase,
                "score": score,
                "created_at": created_at,
                "updated_at": updated_at,
                "version": version,
            },
            "rank": rank,
            "position": position,
            "heading": heading,
            "role": role,
            "volatile": volatile,
        }
    )


def made_once(
    turn: TurnState, source: object, place: Hashable, build: Callable[[], Fragment]
) -> Fragment:
    """The fragment ``build()`` makes of ``source``, made once for that record and place.

    ``source`` is the immutable record (a stored item, a profile, a trace)
    the fragment is made of, and ``place`` names everything else ``build``
    depends on: the phase and the part, the rank and the position, any
    setting. The turn's token counter is part of the key too, as the
    fragment's token count is its. A turn that reads the very same record
    again (an in-memory store hands out the same objects) is given the
    same fragment, a frozen model, instead of a newly validated one.
    """
    return _FRAGMENTS((source, turn.counter), place, build)


def overlap(query_terms: Set[str], text: str) -> float:
    """Share of ``text``'s distinct terms that occur in the query (0.0-1.0)."""
    return shared(query_terms, term_set(text))


def shared(query_terms: Set[str], text_terms: frozenset[str]) -> float:
    """Share of the distinct ``text_terms`` that occur in the query (0.0-1.0)."""
    if not text_terms or not query_terms:
        return 0.0
    return len(text_terms & query_terms) / len(text_terms)


def input_terms(turn: TurnState) -> frozenset[str]:
    """The analysed terms of the user's input and the request's focus tags (once per request)."""
    request = turn.request
    return _INPUT_TERMS(
        (request,), None, lambda: frozenset(terms(" ".join((request.user_input, *request.focus))))
    )


def loaded(fragments: list[Fragment]) -> tuple[int, int]:
    """``(items, tokens)`` of a list of fragments."""
    return len(fragments), sum(f.tokens for f in fragments)
