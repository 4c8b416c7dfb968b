"""Admission control: should an offered item enter the buffer?

The salience of an item is a weighted sum of four factors in ``[0, 1]``
(default weights 0.4 / 0.2 / 0.2 / 0.2):

- relevance: overlap of its terms with the input and the focus tags
  (or the ``relevance`` the caller measured);
- urgency: given by the caller, or 1.0 for items tagged urgent, risk, alert,
  deadline or blocking;
- recency: 1.0 for something that happened now, halving every half-life;
- attention: the share of the focus tags it carries, times focus intensity.

It is then modulated top-down: ``score = salience x (1 + 0.3 x task relevance
+ 0.2 x coherence)``, where coherence is its overlap with the session's
dominant themes. The threshold rises with how full the buffer is:
``threshold = base x (1 + 0.5 x utilisation)``. A pinned item is admitted
whatever its score. Every decision says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from prefrontal.buffer.config import BufferConfig
from prefrontal.buffer.decay import happened_recency
from prefrontal.buffer.models import Focus, Lifetime, NewItem, SalienceFactors
from prefrontal.buffer.offers import Offer
from prefrontal.buffer.text import coverage, label_terms, overlap
from prefrontal.forgetting import remembered
from prefrontal.retrieval.analysis import term_set, terms
from prefrontal.trusted import assemble

URGENT_TAGS = frozenset({"urgent", "risk", "alert", "deadline", "blocking"})
HIGH = 0.6
"""A factor at or above this is named as a reason for admission."""


@dataclass(frozen=True, slots=True)
class AdmissionDecision:
    """Whether an item was admitted, with its score, the threshold and the reasons.

    A plain value the buffer reports (never stored or sent anywhere): built
    for every offer of every turn, so it is no validated model, and its
    :attr:`reasons` are worked out when read.
    """

    item_id: str
    admitted: bool
    score: float
    threshold: float
    salience: float
    factors: SalienceFactors
    pinned: bool = False
    """Whether the offered item was pinned (admitted whatever its score)."""
    kept_for_priority: bool = False
    """Whether the agent's own item was admitted for its priority alone (see
    :attr:`~prefrontal.buffer.config.BufferConfig.keep_priority`)."""

    @property
    def reasons(self) -> tuple[str, ...]:
        """The factors at or above :data:`HIGH`, ``pinned`` first if it was, then the verdict."""
        named = _reasons(self.pinned, self.factors, self.score, self.threshold)
        if self.kept_for_priority:
            return ("high_priority", *named[:-1], "below_threshold_admitted_priority")
        return named


@dataclass(frozen=True, slots=True)
class Measure:
    """What offered items are measured against: a focus and the session's dominant themes.

    Their terms are worked out once (:func:`measure`), so that the offers of
    a turn, all measured against the same focus and themes, do not each
    analyse them again.
    """

    focus: Focus
    themes: tuple[str, ...]
    input_terms: frozenset[str]
    tag_terms: frozenset[str]
    task_terms: frozenset[str]
    theme_terms: frozenset[str]


def measure(focus: Focus, themes: tuple[str, ...]) -> Measure:
    """The terms offers are compared with for ``focus`` and ``themes``."""
    return Measure(
        focus=focus,
        themes=themes,
        input_terms=labelled_terms(focus.input_text, focus.tags),
        tag_terms=label_terms(focus.tags),
        task_terms=term_set(focus.task),
        theme_terms=label_terms(themes),
    )


def salience_factors(
    item: NewItem, against: Measure, now: datetime, config: BufferConfig
) -> SalienceFactors:
    """The six factors of ``item`` for the focus and dominant themes of ``against``.

    Each is in ``[0, 1]`` by construction (shares of terms, a checked
    relevance or urgency, a halving recency, a focus intensity times a
    share), so the model is assembled unchecked (:mod:`prefrontal.trusted`).
    """
    terms = item_terms(item)
    relevance = item.relevance
    if relevance is None:
        relevance = overlap(terms, against.input_terms)
    age = None if item.occurred_at is None else (now - item.occurred_at).total_seconds()
    return assemble(
        SalienceFactors,
        {
            "relevance": relevance,
            "urgency": urgency(item),
            "recency": happened_recency(age, config),
            "attention": against.focus.intensity * coverage(terms, against.tag_terms),
            "task_relevance": overlap(terms, against.task_terms),
            "coherence": overlap(terms, against.theme_terms),
        },
    )


def item_terms(item: NewItem) -> frozenset[str]:
    """The terms of ``item``'s content, tags and entities (what its factors compare)."""
    return labelled_terms(item.content, (*item.tags, *item.entities))


@remembered(maxsize=4_096)
def labelled_terms(text: str, labels: tuple[str, ...]) -> frozenset[str]:
    """The terms of ``text`` and of ``labels`` (tags and entities), remembered."""
    # Not through term_set's cache: this cache already holds the result, and an
    # offered text such as the clock's line is new every minute. As many as the
    # offers remembered (phase 10's): a growing session offers a few hundred
    # texts over and over, more than a smaller cache keeps.
    return frozenset(terms(text)) | label_terms(labels)


def urgency(item: Offer) -> float:
    """The urgency of ``item``: its own, or 1.0 when it carries an urgent tag."""
    if not item.tags:  # (most offers: a turn's fragments carry no tags)
        return item.urgency
    tagged = any(tag.casefold() in URGENT_TAGS for tag in item.tags)
    return 1.0 if tagged else item.urgency


def salience(factors: SalienceFactors, config: BufferConfig) -> float:
    """The weighted sum of the four base factors."""
    w = config.weights
    return (
        w.relevance * factors.relevance
        + w.urgency * factors.urgency
        + w.recency * factors.recency
        + w.attention * factors.attention
    )


def admission_score(
    factors: SalienceFactors, config: BufferConfig, base: float | None = None
) -> float:
    """Salience (``base``, when computed already) modulated by task relevance and coherence."""
    modulation = (
        1.0
        + config.task_modulation * factors.task_relevance
        + config.coherence_modulation * factors.coherence
    )
    return (salience(factors, config) if base is None else base) * modulation


def scores(factors: SalienceFactors, config: BufferConfig) -> tuple[float, float]:
    """Salience and admission score of ``factors``: what :func:`decide` compares."""
    base = salience(factors, config)
    return base, admission_score(factors, config, base)


def threshold(utilisation: float, config: BufferConfig) -> float:
    """The admission threshold when the buffer is ``utilisation`` full (0 to 1)."""
    return config.base_threshold * (1.0 + config.pressure * min(max(utilisation, 0.0), 1.0))


def decide(
    item_id: str,
    item: Offer,
    factors: SalienceFactors,
    utilisation: float,
    config: BufferConfig,
    scored: tuple[float, float] | None = None,
) -> AdmissionDecision:
    """Admit ``item`` when pinned, when its score reaches the threshold, or when it is the
    agent's own (session lifetime) and its priority is at least ``config.keep_priority``.

    ``scored`` is what :func:`scores` gives for ``factors``, when known already.
    """
    base, score = scored or scores(factors, config)
    bar = threshold(utilisation, config)
    for_priority = (
        not item.pinned
        and score < bar
        and item.lifetime is Lifetime.SESSION
        and item.priority >= config.keep_priority
    )
    admitted = item.pinned or score >= bar or for_priority
    return _decision(item_id, admitted, score, bar, base, factors, item.pinned, for_priority)


_decision_setters = tuple(
    AdmissionDecision.__dict__[name].__set__ for name in AdmissionDecision.__slots__
)
_new = object.__new__


def _decision(
    item_id: str,
    admitted: bool,
    score: float,
    bar: float,
    base: float,
    factors: SalienceFactors,
    pinned: bool,
    for_priority: bool,
) -> AdmissionDecision:
    """An :class:`AdmissionDecision` made without the dataclass's ``__init__`` (a third of
    its time: one is made for every new offer of every turn)."""
    s_id, s_admitted, s_score, s_bar, s_base, s_factors, s_pinned, s_priority = _decision_setters
    decision: AdmissionDecision = _new(AdmissionDecision)
    s_id(decision, item_id)
    s_admitted(decision, admitted)
    s_score(decision, score)
    s_bar(decision, bar)
    s_base(decision, base)
    s_factors(decision, factors)
    s_pinned(decision, pinned)
    s_priority(decision, for_priority)
    return decision


def _reasons(pinned: bool, factors: SalienceFactors, score: float, bar: float) -> tuple[str, ...]:
    named = [
        f"high_{name}"
        for name in ("relevance", "urgency", "recency", "attention", "task_relevance", "coherence")
        if getattr(factors, name) >= HIGH
    ]
    if pinned:
        named.insert(0, "pinned")
    verdict = "above_threshold" if score >= bar else "below_threshold"
    if pinned and score < bar:
        verdict = "below_threshold_admitted_pinned"
    return (*named, verdict)
