"""A turn's new offers scored for admission: the score first, the factors model when read.

A turn's refresh scores every offer new to the buffer, to offer them best
first, and most of them are then refused: the buffer is full of this turn's
fragments. What ranks them is the admission score alone, a number; the
:class:`~.models.SalienceFactors` model a decision or an admitted item
carries is made from the same six numbers only when one of them is read
(:attr:`Scored.factors`).

:class:`Scoring` holds what the turn's offers are measured against (the
focus, the themes, the instant, the settings) and scores each offer as
:func:`~.salience.salience_factors` and :func:`~.salience.scores` do, the
same operations in the same order: the same values to the last bit (the
tests compare them). An offer's terms are remembered by its text
(:func:`~.salience.item_terms`), and so are the three factors its terms
alone decide against a measure's focus tags, task and themes (attention,
task relevance, coherence: :data:`SHARES`), which change only when those do;
what a turn changes (a memory's relevance, its rerank score, moves with every
recall; an offer's recency moves with the clock) is worked out every turn.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from prefrontal.buffer.config import BufferConfig
from prefrontal.buffer.decay import happened_recency
from prefrontal.buffer.models import SalienceFactors
from prefrontal.buffer.offers import Offer
from prefrontal.buffer.salience import Measure, labelled_terms, urgency
from prefrontal.forgetting import register
from prefrontal.recent import Recent
from prefrontal.trusted import assemble

FACTORS: Final = (
    "relevance",
    "urgency",
    "recency",
    "attention",
    "task_relevance",
    "coherence",
)
"""The fields of :class:`~.models.SalienceFactors`, in the order :class:`Scored` keeps them."""


Shares = dict[frozenset[str], tuple[float, float, float]]
"""An offer's attention, task relevance and coherence, by its terms (for one measure)."""
SHARES: Final[Recent[tuple[frozenset[str], frozenset[str], frozenset[str], float], Shares]] = (
    Recent(16)
)
"""Per measure (its focus tag, task and theme terms, its focus intensity), the
:data:`Shares` of the offers scored against it: a session's turns mostly keep their task
and themes, and offer the same fragments again. In the forgetting registry (the terms are
a user's words)."""
MAX_SHARES: Final = 4_096
"""Offers remembered per measure, at most (past it that measure's start again empty)."""
register(SHARES)


class Scored:
    """An offer new to the buffer, with its id, its tokens, its salience and admission score
    (one is made for every new offer of every turn; its factors model only when read)."""

    __slots__ = ("_factors", "_values", "item_id", "new", "salience", "score", "tokens")

    def __init__(
        self,
        new: Offer,
        item_id: str,
        tokens: int,
        values: tuple[float, float, float, float, float, float],
        salience: float,
        score: float,
    ) -> None:
        self.new = new
        self.item_id = item_id
        self.tokens = tokens
        self._values = values
        self.salience = salience
        """The weighted sum of the four base factors (:func:`~.salience.salience`)."""
        self.score = score
        """The admission score: salience modulated by task relevance and coherence."""
        self._factors: SalienceFactors | None = None

    @property
    def scores(self) -> tuple[float, float]:
        """The salience and the admission score (what :func:`~.salience.scores` gives)."""
        return self.salience, self.score

    @property
    def factors(self) -> SalienceFactors:
        """The salience factors the scores were worked out from (made once, when first read)."""
        if self._factors is None:
            self._factors = assemble(SalienceFactors, dict(zip(FACTORS, self._values, strict=True)))
        return self._factors


class Scoring:
    """Offers scored against one turn's measure, at one instant, under one configuration.

    What is the same for every offer of the turn (the measure's term sets and their sizes,
    the focus intensity, the weights, the measure's :data:`SHARES`) is read once, here; each
    offer's overlaps are worked out inline, as :func:`~.text.overlap` and
    :func:`~.text.coverage` do them (those with the focus tags, the task and the themes once
    per measure and offered terms).
    """

    def __init__(self, against: Measure, now: datetime, config: BufferConfig) -> None:
        self.against = against
        self.now = now
        self.config = config
        weights = config.weights
        self._weights = (weights.relevance, weights.urgency, weights.recency, weights.attention)
        self._modulation = (config.task_modulation, config.coherence_modulation)
        self._terms = (
            (against.input_terms, len(against.input_terms)),
            (against.tag_terms, len(against.tag_terms)),
            (against.task_terms, len(against.task_terms)),
            (against.theme_terms, len(against.theme_terms)),
        )
        self._intensity = against.focus.intensity
        key = (against.tag_terms, against.task_terms, against.theme_terms, self._intensity)
        shares = SHARES.get(key)
        self._shares: Shares = SHARES.put(key, {}) if shares is None else shares

    def __call__(self, new: Offer, item_id: str, tokens: int) -> Scored:
        """``new`` (held as ``item_id``, of ``tokens``) scored: what
        :func:`~.salience.salience_factors` and :func:`~.salience.scores` give it."""
        (inputs, n_inputs), (tags, n_tags), (task_terms, n_task), (themes, n_themes) = self._terms
        terms = labelled_terms(new.content, (*new.tags, *new.entities))  # item_terms(new)
        size = len(terms)
        relevance = new.relevance  # (``min`` of two counts, as a comparison: no call)
        if relevance is None:
            relevance = (
                len(terms & inputs) / (size if size < n_inputs else n_inputs)
                if size and n_inputs
                else 0.0
            )
        at = new.occurred_at
        recency = (
            1.0 if at is None else happened_recency((self.now - at).total_seconds(), self.config)
        )
        shares = self._shares
        kept = shares.get(terms)
        if kept is None:
            attention = self._intensity * (len(terms & tags) / n_tags if n_tags else 0.0)
            task = (
                len(terms & task_terms) / (size if size < n_task else n_task)
                if size and n_task
                else 0.0
            )
            coherence = (
                len(terms & themes) / (size if size < n_themes else n_themes)
                if size and n_themes
                else 0.0
            )
            if len(shares) >= MAX_SHARES:
                shares.clear()
            shares[terms] = (attention, task, coherence)
        else:
            attention, task, coherence = kept
        felt = urgency(new) if new.tags else new.urgency
        w_relevance, w_urgency, w_recency, w_attention = self._weights
        base = (
            w_relevance * relevance
            + w_urgency * felt
            + w_recency * recency
            + w_attention * attention
        )
        task_weight, coherence_weight = self._modulation
        score = base * (1.0 + task_weight * task + coherence_weight * coherence)
        values = (relevance, felt, recency, attention, task, coherence)
        return Scored(new, item_id, tokens, values, base, score)
