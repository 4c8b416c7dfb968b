"""A turn's scoring of its offers gives what the salience functions give, to the last bit.

:class:`~prefrontal.buffer.scoring.Scoring` works each offer's factors out
inline, from term sets and sizes read once a turn; whatever the offer (its
tags, urgent ones among them, entities, a time it happened, a relevance or
none) and whatever it is measured against (an input, focus tags and their
intensity, a task, themes, any of them empty), its factors, salience and
admission score equal those of :func:`~prefrontal.buffer.salience.salience_factors`
and :func:`~prefrontal.buffer.salience.scores`.
"""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.buffer import BufferConfig, Focus, NewItem
from prefrontal.buffer.salience import measure, salience_factors, scores
from prefrontal.buffer.scoring import SHARES, Scoring
from prefrontal.forgetting import forget_everything

from .conftest import at

WORDS = ("payment", "review", "lisbon", "offsite", "hotel", "friday", "the", "signs")
LABELS = ("Lisbon", "budget", "urgent", "deadline", "payment review", "")
phrases = st.lists(st.sampled_from(WORDS), max_size=5).map(" ".join)
labels = st.lists(st.sampled_from(LABELS).filter(bool), max_size=3, unique=True).map(tuple)
offers = st.builds(
    lambda content, tags, entities, relevance, urgency, ago: NewItem(
        content=content or "x",
        tags=tags,
        entities=entities,
        relevance=relevance,
        urgency=urgency,
        occurred_at=None if ago is None else at(0) - timedelta(minutes=ago),
    ),
    phrases,
    labels,
    labels,
    st.one_of(st.none(), st.floats(0, 1)),
    st.floats(0, 1),
    st.one_of(st.none(), st.integers(-5, 10_000)),
)
foci = st.builds(
    lambda text, tags, intensity, task: Focus(
        input_text=text, tags=tags, intensity=intensity, task=task
    ),
    phrases,
    labels,
    st.floats(0, 1),
    phrases,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(offers, min_size=1, max_size=4), foci, labels)
def test_scoring_gives_what_the_salience_functions_give(
    offered: list[NewItem], focus: Focus, themes: tuple[str, ...]
) -> None:
    config = BufferConfig()
    against = measure(focus, themes)
    scoring = Scoring(against, at(0), config)
    for new in offered:
        scored = scoring(new, "m", 3)
        factors = salience_factors(new, against, at(0), config)
        assert scored.factors == factors
        assert scored.scores == scores(factors, config)
        assert (scored.item_id, scored.tokens, scored.new) == ("m", 3, new)


@settings(max_examples=150, deadline=None)
@given(st.lists(offers, min_size=1, max_size=4), foci, labels, st.sampled_from(WORDS))
def test_a_later_turn_scores_from_the_remembered_shares_what_the_functions_give(
    offered: list[NewItem], focus: Focus, themes: tuple[str, ...], word: str
) -> None:
    """A later turn with the same focus tags, task and themes (another input, another
    instant) reads each offer's attention, task relevance and coherence from
    :data:`~prefrontal.buffer.scoring.SHARES`: the same factors and scores, to the last bit."""
    config = BufferConfig()
    Scoring(measure(focus, themes), at(0), config)  # the first turn remembers the shares
    first = Scoring(measure(focus, themes), at(0), config)
    for new in offered:
        first(new, "m", 3)
    later = focus.model_copy(update={"input_text": f"{focus.input_text} {word}"})
    against = measure(later, themes)
    scoring = Scoring(against, at(60), config)
    for new in offered:
        scored = scoring(new, "m", 3)
        factors = salience_factors(new, against, at(60), config)
        assert scored.factors == factors
        assert scored.scores == scores(factors, config)


def test_forgetting_empties_the_remembered_shares() -> None:
    """The shares are worked out from a user's words: forgetting empties them."""
    Scoring(
        measure(Focus(input_text="the hotel", task="plan the offsite"), ()), at(0), BufferConfig()
    )(NewItem(content="the offsite hotel"), "m", 3)
    assert len(SHARES)
    forget_everything()
    assert not len(SHARES)
