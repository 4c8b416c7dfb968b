"""The two reference retrievers, on the same token budget as the pipeline.

Both render whole turns as ``Speaker: text``, one per line, and fill the
budget greedily in their own order, skipping a turn that no longer fits:

- ``recency``: the most recent turns first;
- ``bm25``: turns ranked by BM25 (the project's analyser) against the question.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from prefrontal.evaluation.locomo import Turn
from prefrontal.retrieval.postings import Postings
from prefrontal.retrieval.ranking import query_terms, scores, top

Counter = Callable[[str], int]


def line(turn: Turn) -> str:
    """A turn as a baseline renders it."""
    return f"{turn.speaker}: {turn.text}"


def fill(turns: Sequence[Turn], budget: int, count: Counter) -> list[Turn]:
    """The turns, in the order given, that fit ``budget`` tokens rendered one per line."""
    chosen: list[Turn] = []
    spent = 0
    for turn in turns:
        cost = count(line(turn)) + (1 if chosen else 0)
        if spent + cost <= budget:
            chosen.append(turn)
            spent += cost
    while chosen and count("\n".join(line(t) for t in chosen)) > budget:
        chosen.pop()
    return chosen


def recency(turns: Sequence[Turn], budget: int, count: Counter) -> list[Turn]:
    """The most recent turns that fit."""
    return fill(list(reversed(turns)), budget, count)


class Bm25Baseline:
    """BM25 over a conversation's turns, text only."""

    def __init__(self, turns: Sequence[Turn]) -> None:
        self._turns = {t.dia_id: t for t in turns}
        self._index = Postings()
        for turn in turns:
            self._index.add(turn.dia_id, line(turn))

    def select(self, question: str, budget: int, count: Counter) -> list[Turn]:
        """The best-matching turns that fit."""
        scored = scores(self._index.matches(query_terms(question)))
        ranked = [self._turns[dia] for dia, _ in top(scored, len(scored))]
        return fill(ranked, budget, count)
