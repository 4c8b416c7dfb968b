"""Fitting the rendered context within its budget, counted with the real tokenizer.

Selection works with each fragment's own token count; the rendered text can
come out a little longer (group headers, merges across line breaks). When
it does, the fewest fragments are given up, worst first, that bring it
within the limit: the agent's profile last, and within the rest the
last-ranked fragment of the last section first. Pinned fragments (the
owner's section, :mod:`prefrontal.bundle.pinning`) are never given up.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from prefrontal.bundle.fragments import SECTION_ORDER, Fragment, Section
from prefrontal.bundle.render import in_rendering_order, render_in_order

__all__ = ["Fitted", "fit_rendered", "worst_first"]


@dataclass(frozen=True, slots=True)
class Fitted:
    """What fits: the fragments kept, those given up, the text and its token count.

    ``kept`` is in the order the fragments were given; ``in_order`` holds
    the same fragments in rendering order (:func:`~prefrontal.bundle.render.in_rendering_order`).
    """

    kept: list[Fragment]
    dropped: list[Fragment]
    text: str
    tokens: int
    in_order: list[Fragment]


def worst_first(fragments: Sequence[Fragment]) -> list[Fragment]:
    """Fragments in the order they are given up: the agent's profile (pinned) only after
    everything else, and within each group the last-ranked of the last section first."""
    order = {s: i for i, s in enumerate(SECTION_ORDER)}

    def worst(f: Fragment) -> tuple[bool, int, int]:
        return (f.section is not Section.CONSCIOUSNESS, order[f.section], f.rank)

    return sorted(fragments, key=worst, reverse=True)


def fit_rendered(
    fragments: Sequence[Fragment],
    limit: int,
    count: Callable[[str], int],
    pinned: Collection[int] = (),
) -> Fitted:
    """The fragments, rendered, within ``limit`` tokens by ``count``.

    They are put in rendering order once; when all of them fit, that is one
    render and the worst-first order is not needed. Otherwise see
    :func:`_fewest_given_up`. ``pinned`` holds the ``id()`` of fragments
    never given up: the caller makes sure they fit on their own.
    """
    ordered = in_rendering_order(fragments)
    whole = _rendered(list(fragments), [], ordered, count)
    if whole.tokens <= limit:
        return whole
    return _fewest_given_up(fragments, ordered, limit, count, pinned)


def _fewest_given_up(
    fragments: Sequence[Fragment],
    ordered: list[Fragment],
    limit: int,
    count: Callable[[str], int],
    pinned: Collection[int],
) -> Fitted:
    """The fragments within ``limit`` once the fewest of the worst (at least one) are given up.

    ``ordered`` is ``fragments`` in rendering order. Giving up more of the
    worst-first order never adds tokens, so the fewest to give up are found
    by bisection: about log2(n) renders, where giving them up one at a time
    re-rendered and re-counted everything n times. Fragments in ``pinned``
    are never in that order.
    """
    order = worst_first([f for f in fragments if id(f) not in pinned])
    if not order:
        return _rendered(list(fragments), [], ordered, count)

    def attempt(drop: int) -> Fitted:
        gone = {id(f) for f in order[:drop]}
        kept = [f for f in fragments if id(f) not in gone]
        return _rendered(kept, order[:drop], [f for f in ordered if id(f) not in gone], count)

    low, high = 1, len(order)
    while low < high:
        middle = (low + high) // 2
        if attempt(middle).tokens <= limit:
            high = middle
        else:
            low = middle + 1
    return attempt(low)


def _rendered(
    kept: list[Fragment],
    dropped: list[Fragment],
    in_order: list[Fragment],
    count: Callable[[str], int],
) -> Fitted:
    """``in_order`` (``kept`` in rendering order) rendered and counted (an empty text counts 0)."""
    text = render_in_order(in_order)
    return Fitted(kept, dropped, text, count(text) if text else 0, in_order)
