"""The pure scoring steps: blending queries, thread scores, neighbour lift."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from prefrontal.retrieval.context import (
    add_thread_scores,
    best,
    blend,
    lift_neighbours,
    smooth_neighbours,
    speaker_named,
    thread_scores,
)
from prefrontal.retrieval.fusion import max_normalised

SCORES = st.dictionaries(st.text(min_size=1, max_size=3), st.floats(0, 100), max_size=20)


def test_blend_normalises_each_signal_before_weighting() -> None:
    """A signal on a large scale does not drown one on a small scale; the best is 1.0."""
    fused = blend({"input": {"a": 10.0, "b": 5.0}, "context": {"b": 0.2}}, {"context": 0.5})
    assert fused == {"a": 1.0, "b": 1.0}


@given(SCORES, SCORES)
def test_blend_is_bounded(first: dict[str, float], second: dict[str, float]) -> None:
    """Whatever the inputs, blended scores lie in [0, 1]."""
    fused = blend({"input": first, "context": second}, {"context": 0.3})
    assert all(0.0 <= v <= 1.0 + 1e-9 for v in fused.values())


def test_a_thread_scores_the_mean_of_its_best_items() -> None:
    """Several good matches beat one lucky hit; items without a thread score nothing."""
    scores = {"a1": 0.9, "a2": 0.8, "a3": 0.7, "b1": 1.0, "x": 1.0}
    threads = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "x": None}
    by_thread = thread_scores(scores, threads, top=3)
    assert by_thread["A"] == 1.0 and by_thread["B"] < 0.5
    boosted = add_thread_scores(scores, threads, 0.5, top=3)
    assert boosted["a1"] > boosted["b1"] - 0.1
    assert boosted["x"] == 1.0


def test_neighbours_of_a_strong_match_are_lifted() -> None:
    """A reply next to a strong match gets a share of its score; a better one keeps its own."""
    around = {"q": [("r", 0.8), ("s", 0.8), ("new", 0.5)]}
    lifted = lift_neighbours({"q": 1.0, "r": 0.1, "s": 0.95}, around)
    assert lifted == {"q": 1.0, "r": 0.8, "s": 0.95, "new": 0.5}


@given(SCORES)
def test_lifting_never_lowers_a_score(scores: dict[str, float]) -> None:
    """Lift only raises: every score is at least what it was."""
    keys = list(scores)
    pairs = tuple((k, 0.7) for k in keys)
    lifted = lift_neighbours(scores, dict.fromkeys(keys[:2], pairs))
    assert all(lifted[k] >= v for k, v in scores.items())


def test_best_breaks_ties_by_id() -> None:
    """The order is deterministic."""
    assert best({"b": 1.0, "a": 1.0, "c": 0.5}, 2) == ["a", "b"]


def test_an_item_said_by_someone_the_query_names_gains() -> None:
    """The speaker's whole name must be in the query; mentioning others changes nothing."""
    scores = {"a": 0.5, "b": 0.5, "c": 0.5}
    speakers = {"a": "Ana Lima", "b": "Ben", "c": None}
    named = speaker_named(scores, speakers, "What does Ana Lima grow?", 0.1)
    assert named == {"a": 0.6, "b": 0.5, "c": 0.5}
    assert speaker_named(scores, speakers, "What does Ana grow?", 0.1) == scores


def test_an_item_in_a_relevant_exchange_gains_from_its_neighbours() -> None:
    """Neighbours in the same thread add a share; other threads and gaps add nothing."""
    scores = {"a": 1.0, "b": 0.5, "c": 0.5, "x": 0.5}
    places = {"a": ("t", 1), "b": ("t", 2), "c": ("t", 4), "x": ("u", 2)}
    smoothed = smooth_neighbours(scores, places, 0.2)
    assert smoothed["b"] > smoothed["c"] == smoothed["x"]
    assert max(smoothed.values()) == 1.0


def _blend_straightforward(
    signals: dict[str, dict[str, float]], weights: dict[str, float]
) -> dict[str, float]:
    """:func:`blend` as a map of each signal's normalised scores, then their weighted sum."""
    fused: dict[str, float] = {}
    for name, scores in signals.items():
        weight = weights.get(name, 1.0)
        for key, value in _max_normalised_straightforward(scores).items():
            fused[key] = fused.get(key, 0.0) + weight * value
    return _max_normalised_straightforward(fused)


def _max_normalised_straightforward(scores: dict[str, float]) -> dict[str, float]:
    """:func:`max_normalised` with ``max(value, 0.0)``."""
    top = max(scores.values(), default=0.0)
    if top <= 0:
        return dict.fromkeys(scores, 0.0)
    return {key: max(value, 0.0) / top for key, value in scores.items()}


def _signed(scores: dict[str, float]) -> list[tuple[str, str]]:
    """Each key and its score's repr: every bit of a float (-0.0, NaN) told apart."""
    return [(key, repr(value)) for key, value in scores.items()]


@given(st.dictionaries(st.text(max_size=2), st.floats(-5, 100) | st.sampled_from([-0.0, math.nan])))
def test_max_normalised_is_the_straightforward_one_to_the_bit(scores: dict[str, float]) -> None:
    """Negative scores as 0.0, -0.0 and NaN as ``max(value, 0.0)`` leaves them."""
    assert _signed(max_normalised(scores)) == _signed(_max_normalised_straightforward(scores))


def _smooth_straightforward(
    scores: dict[str, float], places: dict[str, tuple[str, int]], share: float
) -> dict[str, float]:
    """:func:`smooth_neighbours` step by step: each placed item, the one before then after."""
    at = {place: key for key, place in places.items() if key in scores}
    smoothed = dict(scores)
    for key, (thread, position) in places.items():
        if key not in scores:
            continue
        for step in (-1, 1):
            other = at.get((thread, position + step))
            if other is not None:
                smoothed[key] += share * scores[other]
    return _max_normalised_straightforward(smoothed)


@given(
    st.dictionaries(st.sampled_from("abcdefgh"), st.floats(0, 10), max_size=8),
    st.dictionaries(
        st.sampled_from("abcdefghij"),
        st.tuples(st.sampled_from(["t", "u"]), st.integers(0, 6)),
        max_size=10,
    ),
    st.floats(0, 1),
)
def test_smoothing_is_the_straightforward_sum_to_the_bit(
    scores: dict[str, float], places: dict[str, tuple[str, int]], share: float
) -> None:
    """The same shares added in the same order, places shared by two items included."""
    got = smooth_neighbours(scores, places, share)
    assert _signed(got) == _signed(_smooth_straightforward(scores, places, share))


SIGNED = st.dictionaries(st.text(min_size=1, max_size=3), st.floats(-5, 100), max_size=20)


@given(
    st.dictionaries(st.sampled_from(["input", "context", "feedback"]), SIGNED, max_size=3),
    st.dictionaries(st.sampled_from(["input", "context", "feedback"]), st.floats(-1, 2)),
)
def test_blend_gives_the_straightforward_sum_to_the_bit(
    signals: dict[str, dict[str, float]], weights: dict[str, float]
) -> None:
    """The same keys in the same order with the same floats as normalising each signal first."""
    got, want = blend(signals, weights), _blend_straightforward(signals, weights)

    def signed(fused: dict[str, float]) -> list[tuple[str, float, float]]:
        return [(key, value, math.copysign(1.0, value)) for key, value in fused.items()]

    assert signed(got) == signed(want)


@given(SIGNED, st.integers(0, 25))
def test_best_is_the_sort_by_score_then_id(scores: dict[str, float], limit: int) -> None:
    """The ids of the key-function sort, in its order."""
    want = [k for k, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]
    assert best(scores, limit) == want
