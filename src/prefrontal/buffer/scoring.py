"""A turn's new offers scored for admission, worked out again only where something changed.

A session's turns offer mostly the same fragments, measured against the
same focus tags, task and dominant themes: only the input changes every
turn (and counts only for an offer without a ``relevance`` of its own), and
a memory's rerank score (its relevance). :class:`Scoring` remembers, for
each offer id, the last offer it scored with what the score depended on:

- the very same offer against an equal measure (and the same instant, for
  an offer with a time) gets the same :class:`Scored` back, nothing worked
  out;
- an offer of the same text and labels (a memory with a new score, say)
  keeps each factor its terms give while what that factor depends on is the
  same (attention: the focus tags and intensity; task relevance: the task;
  coherence: the themes), and works out the others;
- anything else is scored from scratch (:func:`~.salience.salience_factors`).

:data:`refusals` remembers each offer id's last refusal the same way: the
buffer gives the same scored offer, refused against the same threshold for
the same reason, that refusal again (counted again) without deciding anew.

Every path gives the values :func:`~.salience.salience_factors` and
:func:`~.salience.scores` give (the tests compare them). The memory is
process-wide (sessions of one process share fragments), holds offers and
so their text, is registered to be emptied on erase and forget
(:func:`prefrontal.forgetting.register`), and starts again empty past
:data:`REMEMBERED_OFFERS` ids. Entries are found by the offer's id and used
only for the very same offer (or, for the factors of its terms, one of the
same text and labels against the same focus, task and themes): whichever
session offers it, an offer gets exactly the values its own inputs give.
Its entries are tuples replaced whole, so threads sharing it never see half
of one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final, Generic, NamedTuple, TypeVar

from prefrontal.buffer.config import BufferConfig
from prefrontal.buffer.decay import happened_recency
from prefrontal.buffer.models import NewItem, SalienceFactors
from prefrontal.buffer.salience import (
    AdmissionDecision,
    Measure,
    item_terms,
    salience_factors,
    scores,
    urgency,
)
from prefrontal.buffer.snapshot import AddResult
from prefrontal.buffer.text import coverage, overlap
from prefrontal.buffer.trusted import assemble
from prefrontal.forgetting import register

V = TypeVar("V")
REMEMBERED_OFFERS: Final = 1_024
"""Offer ids whose last scoring (and last refusal) is remembered, at most: past it the memory
starts again. About the fragments of the few sessions a process turns between in quick
succession, as :data:`~prefrontal.buffer.state_document.ENCODED_ITEMS` holds their items:
every entry keeps objects alive for the garbage collector to walk."""


class Scored(NamedTuple):
    """An offer new to the buffer, with its id, its tokens, its salience factors and scores
    (a named tuple: one is made for every new offer of every turn)."""

    new: NewItem
    item_id: str
    tokens: int
    factors: SalienceFactors
    salience: float
    """The weighted sum of the four base factors (:func:`~.salience.salience`)."""
    score: float
    """The admission score: salience modulated by task relevance and coherence."""


_Key = tuple[object, ...]
"""What an offer's score depends on besides it (see :meth:`Scoring._key`)."""
_Entry = tuple[NewItem, _Key, Scored]
"""An offer, what its score depended on besides it, and its scoring."""
_TAGS, _INTENSITY, _TASK, _THEMES, _CONFIG, _INPUT, _NOW = range(7)
"""Where each part of a key is."""


class _Remembered(Generic[V]):
    """The last entry of each offer id (a plain dictionary: atomic reads and writes)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self.entries: dict[str, V] = {}

    def put(self, item_id: str, entry: V) -> None:
        if len(self.entries) >= self._size:
            self.entries = {}
        self.entries[item_id] = entry

    def clear(self) -> None:
        """Drop every entry (an erased user's offers among them)."""
        self.entries = {}


_remembered: _Remembered[_Entry] = _Remembered(REMEMBERED_OFFERS)
register(_remembered)
Refusal = tuple[Scored, float, AdmissionDecision, object, AddResult]
"""A scored offer refused: the threshold it met, the decision, what the refusal's reason
depended on besides them, and the refusal."""
refusals: _Remembered[Refusal] = _Remembered(REMEMBERED_OFFERS)
"""The last refusal of each offer id: a turn offering the same scored offer against the same
threshold, refused for the same reason, finds it here (see
:meth:`~prefrontal.buffer.WorkingMemoryBuffer.admit_scored`)."""
register(refusals)


class Scoring:
    """Offers scored against one turn's measure, at one instant, under one configuration."""

    def __init__(self, against: Measure, now: datetime, config: BufferConfig) -> None:
        self.against = against
        self.now = now
        self.config = _same_as_last(config)
        self._parts = (
            against.tag_terms,
            against.focus.intensity,
            against.task_terms,
            against.theme_terms,
            self.config,
        )

    def __call__(self, new: NewItem, item_id: str, tokens: int) -> Scored:
        """``new`` (held as ``item_id``, of ``tokens``) scored: remembered, or worked out."""
        key = self._key(new)
        last = _remembered.entries.get(item_id)
        if last is not None and last[0] is new and last[1] == key:
            scored = last[2]
            if scored.tokens == tokens:
                return scored
            return Scored(new, item_id, tokens, scored.factors, scored.salience, scored.score)
        factors = self._factors(new, key, last if last and _same_terms(last[0], new) else None)
        base, score = scores(factors, self.config)
        scored = Scored(new, item_id, tokens, factors, base, score)
        _remembered.put(item_id, (new, key, scored))
        return scored

    def _key(self, new: NewItem) -> _Key:
        """What ``new``'s score depends on besides the offer: the focus tags and intensity,
        the task's and the themes' terms, the settings; the input's terms when it has no
        relevance of its own; the instant when it has a time."""
        return (
            *self._parts,
            self.against.input_terms if new.relevance is None else None,
            None if new.occurred_at is None else self.now,
        )

    def _factors(self, new: NewItem, key: _Key, like: _Entry | None) -> SalienceFactors:
        """``new``'s factors; each of those its terms give taken from ``like`` (the last
        scoring of an offer of the same terms) when what it depends on is the same."""
        if like is None:
            return salience_factors(new, self.against, self.now, self.config)
        was, before = like[1], like[2].factors
        terms = item_terms(new)
        against = self.against
        relevance = new.relevance
        if relevance is None:
            relevance = overlap(terms, against.input_terms)
        age = None if new.occurred_at is None else (self.now - new.occurred_at).total_seconds()
        same_focus = was[_TAGS] == key[_TAGS] and was[_INTENSITY] == key[_INTENSITY]
        return assemble(
            SalienceFactors,
            {
                "relevance": relevance,
                "urgency": urgency(new),
                "recency": happened_recency(age, self.config),
                "attention": before.attention
                if same_focus
                else against.focus.intensity * coverage(terms, against.tag_terms),
                "task_relevance": before.task_relevance
                if was[_TASK] == key[_TASK]
                else overlap(terms, against.task_terms),
                "coherence": before.coherence
                if was[_THEMES] == key[_THEMES]
                else overlap(terms, against.theme_terms),
            },
        )


def _same_terms(old: NewItem, new: NewItem) -> bool:
    """Whether ``old`` and ``new`` have the same terms (the same content, tags and entities)."""
    return old.content == new.content and old.tags == new.tags and old.entities == new.entities


class _LastConfig:
    """The settings the last scoring used: an equal configuration is replaced by it, so that
    keys compare their settings by identity (one comparison a turn, not one an offer)."""

    config: BufferConfig | None = None


def _same_as_last(config: BufferConfig) -> BufferConfig:
    last = _LastConfig.config
    if last is not None and (last is config or last == config):
        return last
    _LastConfig.config = config
    return config
