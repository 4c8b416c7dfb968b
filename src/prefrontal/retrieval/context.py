"""Pure scoring steps that turn search hits into context candidates.

Each works on plain ``{item id: score}`` maps so it can be tested without a
store or a loop:

- ``blend``: several queries' scores, each normalised to its best hit, summed
  with weights (the input counts most, the surrounding context less);
- ``thread_scores`` / ``add_thread_scores``: a thread (a conversation session,
  a document) whose items match well as a whole lends its items a share of
  that score, so that a match in a relevant session beats an equal match in
  an unrelated one;
- ``lift_neighbours``: an item next to a strong match gets a share of its
  score (an answer is often the reply to the message that matches);
- ``smooth_neighbours``: an item adds a share of its neighbours' scores (a
  message inside a relevant exchange is more likely relevant itself);
- ``speaker_named``: an item said by someone the query names ("what does
  Ana do ...") gains a little over items that only mention them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from prefrontal.retrieval.analysis import term_set
from prefrontal.retrieval.fusion import max_normalised

Scores = dict[str, float]


def blend(signals: Mapping[str, Mapping[str, float]], weights: Mapping[str, float]) -> Scores:
    """Weighted sum of each signal normalised to its best hit, rescaled so the best is 1.0.

    Each signal's normalised scores (:func:`~prefrontal.retrieval.fusion.max_normalised`)
    are added as they are worked out, the same floats in the same order, with no map of
    them made first.
    """
    fused: Scores = {}
    add = fused.get
    for name, scores in signals.items():
        weight = weights.get(name, 1.0)
        top = max(scores.values(), default=0.0)
        if top <= 0:
            for key in scores:
                fused[key] = add(key, 0.0) + weight * 0.0
        else:
            for key, value in scores.items():  # max(value, 0.0), without the call
                fused[key] = add(key, 0.0) + weight * ((0.0 if value < 0.0 else value) / top)
    return max_normalised(fused)


def thread_scores(
    scores: Mapping[str, float], threads: Mapping[str, str | None], *, top: int = 3
) -> Scores:
    """Each thread's score: the mean of its ``top`` best item scores, normalised to the best thread.

    Items without a thread have none. Averaging a few best items rewards
    threads with several good matches over one lucky hit.
    """
    members: dict[str, list[float]] = defaultdict(list)
    for key, value in scores.items():
        thread = threads.get(key)
        if thread is not None:
            members[thread].append(value)
    means = {
        thread: sum(sorted(values, reverse=True)[:top]) / top for thread, values in members.items()
    }
    return max_normalised(means)


def add_thread_scores(
    scores: Mapping[str, float], threads: Mapping[str, str | None], weight: float, *, top: int = 3
) -> Scores:
    """Every item's score plus ``weight`` times its thread's score."""
    by_thread = thread_scores(scores, threads, top=top)
    return {
        key: value + weight * by_thread.get(threads.get(key) or "", 0.0)
        for key, value in scores.items()
    }


def lift_neighbours(
    scores: Mapping[str, float], neighbours: Mapping[str, Sequence[tuple[str, float]]]
) -> Scores:
    """Scores where each neighbour of an anchor has at least its factor times the anchor's score.

    ``neighbours`` maps an anchor's id to ``(neighbour id, factor)`` pairs;
    neighbours that had no score join with the lifted one.
    """
    lifted = dict(scores)
    for anchor, around in neighbours.items():
        for key, factor in around:
            floor = factor * scores.get(anchor, 0.0)
            if lifted.get(key, 0.0) < floor:
                lifted[key] = floor
    return lifted


Place = tuple[str, int]
"""An item's thread and position in it."""


def smooth_neighbours(
    scores: Mapping[str, float], places: Mapping[str, Place], share: float
) -> Scores:
    """Each item's score plus ``share`` of the scores of the items just before and after it.

    Only scored items with a place take part; the result is normalised to its best (1.0).
    """
    placed = [(key, place) for key, place in places.items() if key in scores]
    at = {place: key for key, place in placed}
    near = at.get
    smoothed = dict(scores)
    for key, (thread, position) in placed:  # the one before, then the one after
        before, after = near((thread, position - 1)), near((thread, position + 1))
        if before is not None:
            smoothed[key] += share * scores[before]
        if after is not None:
            smoothed[key] += share * scores[after]
    return max_normalised(smoothed)


def speaker_named(
    scores: Mapping[str, float], speakers: Mapping[str, str | None], query: str, weight: float
) -> Scores:
    """Scores plus ``weight`` for each item whose speaker's name is all in ``query``.

    The query and the names are analysed once while
    :func:`~prefrontal.retrieval.analysis.term_set` remembers them: both stores'
    phases ask with the same input, turn after turn among the same speakers.
    """
    asked = term_set(query)
    named = {
        speaker
        for speaker in set(speakers.values())
        if speaker and (words := term_set(speaker)) and words <= asked
    }
    return {
        key: value + (weight if speakers.get(key) in named else 0.0)
        for key, value in scores.items()
    }


def best(scores: Mapping[str, float], limit: int) -> list[str]:
    """The ids of the ``limit`` best scores (ties by id)."""
    ranked = sorted([(-value, key) for key, value in scores.items()])  # no key function
    return [key for _, key in ranked[:limit]]
