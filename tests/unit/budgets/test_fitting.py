"""Fitting the rendered context: the same fragments as giving them up one at a time, in a
handful of renders; pinned fragments never given up."""

from __future__ import annotations

from random import Random

from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.budgets.tokens import default_counter
from prefrontal.bundle.fitting import fit_rendered, worst_first
from prefrontal.bundle.fragments import Fragment, Provenance, Section
from prefrontal.bundle.render import in_rendering_order, render_in_order, render_sections

COUNT = default_counter().count
SECTIONS = list(Section)


def fragment(n: int, section: Section, words: int, heading: str | None) -> Fragment:
    text = " ".join(f"word{n}x{k}" for k in range(words))
    return Fragment(
        section=section,
        text=text,
        tokens=COUNT(text),
        provenance=Provenance(store="s", item_ids=(f"i{n}",), phase="p"),
        rank=n,
        position=float(n),
        heading=heading,
    )


fragments = st.lists(
    st.tuples(
        st.sampled_from(SECTIONS), st.integers(1, 12), st.sampled_from([None, "1 May", "2 May"])
    ),
    min_size=1,
    max_size=40,
).map(lambda specs: [fragment(n, *spec) for n, spec in enumerate(specs)])


def one_at_a_time(chosen: list[Fragment], limit: int) -> list[Fragment]:
    """The reference: give up the worst fragment, re-render and re-count, until it fits."""
    kept = list(chosen)
    for victim in worst_first(chosen):
        text = render_sections(kept)
        if (COUNT(text) if text else 0) <= limit:
            break
        kept.remove(victim)
    return kept


@settings(max_examples=60, deadline=None)
@given(fragments, st.integers(0, 400))
def test_fitting_keeps_what_giving_up_one_at_a_time_keeps(
    chosen: list[Fragment], limit: int
) -> None:
    """Bisection finds the same fragments as the one-by-one loop, and the text fits the limit."""
    fitted = fit_rendered(chosen, limit, COUNT)
    assert fitted.tokens <= limit
    assert fitted.text == render_sections(fitted.kept)
    assert fitted.tokens == (COUNT(fitted.text) if fitted.text else 0)
    assert fitted.kept == one_at_a_time(chosen, limit)
    assert len(fitted.kept) + len(fitted.dropped) == len(chosen)
    assert fitted.in_order == in_rendering_order(fitted.kept)


@settings(max_examples=60, deadline=None)
@given(fragments, st.randoms(use_true_random=False))
def test_fragments_in_rendering_order_render_as_the_sections_do(
    chosen: list[Fragment], random: Random
) -> None:
    """Rendering in the given order is rendering by section, position and rank, whatever the order
    the fragments came in."""
    random.shuffle(chosen)
    ordered = in_rendering_order(chosen)
    assert render_in_order(ordered) == render_sections(chosen) == render_sections(ordered)
    assert [f.section for f in ordered] == sorted((f.section for f in chosen), key=SECTIONS.index)


def test_fitting_renders_a_logarithmic_number_of_times() -> None:
    """Two hundred fragments over the limit cost about log2(200) renders, not two hundred."""
    counted: list[str] = []

    def count(text: str) -> int:
        counted.append(text)
        return COUNT(text)

    chosen = [fragment(n, Section.EPISODIC, 20, f"{n % 30} May") for n in range(200)]
    fitted = fit_rendered(chosen, 1_000, count)
    assert fitted.tokens <= 1_000
    assert len(fitted.dropped) > 100
    assert len(counted) <= 10


@settings(max_examples=60, deadline=None)
@given(fragments, st.integers(0, 400), st.data())
def test_pinned_fragments_are_never_given_up(
    chosen: list[Fragment], limit: int, data: st.DataObject
) -> None:
    """Fragments named pinned stay whatever the limit; the rest fit the room they leave."""
    pinned = data.draw(st.sets(st.sampled_from(range(len(chosen)))))
    held = {id(chosen[i]) for i in pinned}
    alone = render_sections([chosen[i] for i in sorted(pinned)])
    fitted = fit_rendered(chosen, limit, COUNT, held)
    assert held <= {id(f) for f in fitted.kept}
    assert not held & {id(f) for f in fitted.dropped}
    if (COUNT(alone) if alone else 0) <= limit:
        assert fitted.tokens <= limit
