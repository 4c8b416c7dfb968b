"""Building fragments and judging relevance: helpers shared by the loading phases."""

from __future__ import annotations

from datetime import datetime

from prefrontal.bundle.models import Fragment, Section
from prefrontal.phases.state import TurnState
from prefrontal.retrieval.analysis import term_set, terms


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

    Validated in one call, its provenance as a plain row: a nested model
    built in Python costs twice as much.
    """
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


def overlap(query_terms: set[str], text: str) -> float:
    """Share of ``text``'s distinct terms that occur in the query (0.0-1.0)."""
    text_terms = term_set(text)
    if not text_terms or not query_terms:
        return 0.0
    return len(text_terms & query_terms) / len(text_terms)


def input_terms(turn: TurnState) -> set[str]:
    """The analysed terms of the user's input and the request's focus tags."""
    return set(terms(" ".join((turn.request.user_input, *turn.request.focus))))


def loaded(fragments: list[Fragment]) -> tuple[int, int]:
    """``(items, tokens)`` of a list of fragments."""
    return len(fragments), sum(f.tokens for f in fragments)
