"""The turn refresh works out again only what changed, and decides exactly as offering
each fragment in turn would."""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import prefrontal.buffer.buffer as buffer_module
import prefrontal.buffer.salience as salience
import prefrontal.buffer.scoring as scoring_module
import prefrontal.trusted as trusted
from prefrontal.buffer import (
    AddResult,
    AdmissionDecision,
    BufferConfig,
    Focus,
    Lifetime,
    NewItem,
    OverflowPolicy,
    RefreshReport,
    SalienceFactors,
    WorkingMemoryBuffer,
)
from prefrontal.buffer.decay import awaits_promotion
from prefrontal.buffer.refresh import best_first
from prefrontal.buffer.salience import admission_score, measure, salience_factors
from prefrontal.buffer.scoring import Scored, Scoring
from prefrontal.buffer.snapshot import Outcome, add_result, refused_later

from .conftest import at, item, words

pytestmark = pytest.mark.anyio
TEXTS = (
    "the payment review is due on friday",
    "Lena signs the payment review off",
    "plan the Lisbon team offsite",
    "hotel near the river in Lisbon",
    "quarterly report for the team meeting",
    "deadline moved to friday",
)
FOCI = (
    Focus(input_text="when is the payment review?", task="Launch Ledgerly"),
    Focus(input_text="who signs it off?", task="Plan the Lisbon team offsite"),
    Focus(input_text="the offsite hotel", tags=("lisbon",), intensity=0.5),
)


async def offer_by_offer(
    buffer: WorkingMemoryBuffer,
    fragments: Sequence[NewItem],
    focus: Focus,
    now: datetime,
    turn_id: str | None,
) -> RefreshReport:
    """A turn's refresh as a plain loop of :meth:`~WorkingMemoryBuffer.add`: everything
    scored from scratch, held fragments first, then new ones best first."""
    offered: dict[str, NewItem] = {}
    for fragment in fragments:
        offered.setdefault(fragment.resolved_id(), fragment)
    turn = [
        f if f.lifetime is Lifetime.TURN else f.model_copy(update={"lifetime": Lifetime.TURN})
        for f in offered.values()
    ]
    evicted = [*await buffer.fade(now)]
    evicted += buffer.retire_turn_items({f.resolved_id() for f in turn}, now)
    placed = {i.item_id for i in buffer.items if awaits_promotion(i)}
    against = measure(focus, buffer.themes)
    keyed: list[tuple[tuple[bool, bool, float, int], NewItem, Any]] = []
    for index, fragment in enumerate(turn):
        if fragment.resolved_id() in buffer:
            keyed.append(((False, not fragment.pinned, 0.0, index), fragment, None))
            continue
        factors = salience_factors(fragment, against, now, buffer.config)
        score = admission_score(factors, buffer.config)
        keyed.append(((True, not fragment.pinned, -score, index), fragment, factors))
    keyed.sort(key=lambda entry: entry[0])
    results: list[AddResult] = []
    for _, fragment, factors in keyed:
        renewed = buffer.renew(fragment, now=now, turn_id=turn_id) if factors is None else None
        result = renewed or await buffer.add(
            fragment, focus=focus, now=now, protected=placed, factors=factors, turn_id=turn_id
        )
        results.append(result)
        evicted += result.evicted
        if result.outcome.value != "refused":
            placed.add(result.item_id)
    themes = buffer.refresh_themes()
    buffer.mark_turn(now)
    return RefreshReport(
        admitted=tuple(r for r in results if r.outcome.value == "admitted"),
        refreshed=tuple(r for r in results if r.outcome.value == "refreshed"),
        refused=tuple(r for r in results if r.outcome.value == "refused"),
        evicted=tuple(evicted),
        items=buffer.items,
        total_tokens=buffer.total_tokens,
        themes=themes,
        coherence=buffer.coherence(),
    )


POOL = [
    item(text, item_id=f"f{n}", relevance=relevance, pinned=n == 5, tags=tags)
    for n, text in enumerate(TEXTS)
    for relevance, tags in ((None, ()), (0.7, ()), (0.2, ("lisbon",)))
]
"""Offers a session's turns bring again: the very same objects, turn after turn."""

offers = st.one_of(
    st.sampled_from(POOL),
    st.builds(
        lambda text, n, relevance: item(text, item_id=f"f{n}", relevance=relevance),
        st.sampled_from(TEXTS),
        st.integers(0, 5),
        st.one_of(st.none(), st.floats(0, 1)),
    ),
)
turns = st.lists(
    st.tuples(st.lists(offers, max_size=8), st.integers(0, 2), st.integers(1, 400)),
    min_size=1,
    max_size=6,
)


@given(turns=turns, policy=st.sampled_from(list(OverflowPolicy)), room=st.integers(1, 4))
@settings(max_examples=60, deadline=None)
def test_the_refresh_decides_as_offering_each_fragment_in_turn_would(
    turns: list[tuple[list[NewItem], int, int]], policy: OverflowPolicy, room: int
) -> None:
    """Over any turns (offers brought again as the same objects or as new ones, the focus
    and the time changing), the refresh admits, refreshes, refuses and evicts what a loop of
    ``add`` does, for the same reasons, and leaves the same buffer."""
    config = BufferConfig(policy=policy, max_items=room, max_tokens=24, base_threshold=0.25)
    made = [WorkingMemoryBuffer(config, count_tokens=words) for _ in range(2)]
    incremental, reference = made

    async def run() -> None:
        elapsed = 0
        for number, (fragments, focus, step) in enumerate(turns):
            elapsed += step
            now, turn_id = at(elapsed), f"turn-{number}"
            got = await incremental.refresh_turn(
                fragments, focus=FOCI[focus], now=now, turn_id=turn_id
            )
            want = await offer_by_offer(reference, fragments, FOCI[focus], now, turn_id)
            assert got == want
            assert incremental.snapshot() == reference.snapshot()

    anyio.run(run)


class Counted:
    """Counts the admission decisions made and the salience factors models built."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.decisions = self.factors = 0
        decide, assemble = salience.decide, trusted.assemble

        def counted_decide(*args: Any) -> Any:
            self.decisions += 1
            return decide(*args)

        def counted_assemble(cls: Any, fields: Any) -> Any:
            self.factors += cls is SalienceFactors
            return assemble(cls, fields)

        monkeypatch.setattr(buffer_module, "decide", counted_decide)
        monkeypatch.setattr(scoring_module, "assemble", counted_assemble)

    def reset(self) -> tuple[int, int]:
        seen = (self.decisions, self.factors)
        self.decisions = self.factors = 0
        return seen


async def test_a_turn_offering_nothing_new_makes_no_decision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A full buffer offered the same 40 fragments again makes no admission decision and
    builds no factors model: the offers left once the turn's fragments fill it are refused
    at once, each refusal's reason and decision worked out when read (equal to those of an
    offer-by-offer refresh), and every refusal counted."""
    counted = Counted(monkeypatch)
    config = BufferConfig(max_items=8, max_tokens=400, base_threshold=0.3)
    buffer = WorkingMemoryBuffer(config, count_tokens=words)
    reference = WorkingMemoryBuffer(config, count_tokens=words)
    fragments = [
        item(f"{TEXTS[n % 6]} #{n}", item_id=f"m{n}", relevance=n / 40, lifetime=Lifetime.TURN)
        for n in range(40)
    ]
    focus = FOCI[0]
    first = await buffer.refresh_turn(fragments, focus=focus, now=at(0))
    assert counted.reset() == (8, 8)  # the admitted alone: the buffer then holds the 8
    assert len(first.admitted) == 8 and len(first.refused) == 32
    reports = []
    for step in (10, 20):
        reports.append(await buffer.refresh_turn(fragments, focus=focus, now=at(step)))
        assert counted.reset() == (0, 0)
    lowest = item(fragments[0].content, item_id="m0", relevance=0.01, lifetime=Lifetime.TURN)
    third = await buffer.refresh_turn([lowest, *fragments[1:]], focus=focus, now=at(30))
    assert counted.reset() == (0, 0)
    assert buffer.counters.refused == 32 * 4
    offered = [fragments, fragments, fragments, [lowest, *fragments[1:]]]
    for step, turn, report in zip((0, 10, 20, 30), offered, (first, *reports, third), strict=True):
        assert report == await offer_by_offer(reference, turn, focus, at(step), None)
    assert third.refused[0].reason.startswith(("below_threshold: ", "no_room: "))


def test_a_rescored_offer_is_scored_as_salience_factors_scores_it() -> None:
    """An offer of the same text with a new relevance, against another task and other
    themes, is scored as :func:`salience_factors` and :func:`admission_score` score it."""
    config = BufferConfig()
    first = Scoring(measure(FOCI[0], ("payment", "review")), at(0), config)
    second = Scoring(measure(FOCI[1], ("lisbon",)), at(5), config)
    before = item(TEXTS[0], item_id="m", relevance=0.4)
    after = item(TEXTS[0], item_id="m", relevance=0.9)
    first(before, "m", 7)
    scored = second(after, "m", 7)
    assert scored.factors == salience_factors(after, second.against, at(5), config)
    assert scored.score == admission_score(scored.factors, config)
    assert scored.scores == salience.scores(scored.factors, config)


class Told:
    """An explainer that gives its subject as the reason, and one decision."""

    def __init__(self, decision: AdmissionDecision) -> None:
        self.told = decision

    def reason(self, subject: str) -> str:
        return subject

    def decision(self, subject: str) -> AdmissionDecision:
        return self.told


def test_reports_made_without_init_equal_those_made_with_it() -> None:
    """A refusal and a decision made field by field equal the dataclasses built as usual,
    every field set (a field added to either would show here)."""
    factors = SalienceFactors(relevance=0.5, recency=1.0)
    decision = salience.decide("m", item("text", item_id="m"), factors, 0.5, BufferConfig())
    base, score = salience.scores(factors, BufferConfig())
    assert decision == AdmissionDecision(
        item_id="m",
        admitted=score >= decision.threshold,
        score=score,
        threshold=decision.threshold,
        salience=base,
        factors=factors,
    )
    made = add_result("m", Outcome.REFUSED, "no_room", 3, decision)
    assert made == AddResult(
        item_id="m", outcome=Outcome.REFUSED, reason="no_room", tokens=3, decision=decision
    )
    every = [getattr(made, name) for name in AddResult.FIELDS]
    assert every == ["m", Outcome.REFUSED, "no_room", 3, decision, None, ()]
    later = refused_later("m", 3, Told(decision), "no_room")
    assert later == made and hash(later) == hash(made)
    assert [getattr(later, name) for name in AddResult.FIELDS] == every


def test_a_refusal_explained_later_is_frozen_and_copies_as_its_fields() -> None:
    """A refusal made with its reason left to work out cannot be changed, and a copy of it
    (pickled and read back) has the same fields, its reason and decision worked out."""
    decision = salience.decide(
        "m", item("text", item_id="m"), SalienceFactors(), 1.0, BufferConfig()
    )
    later = refused_later("m", 3, Told(decision), "below_threshold")
    with pytest.raises(AttributeError):
        later.tokens = 4  # type: ignore[misc]
    copied = pickle.loads(pickle.dumps(later))
    assert copied == later and copied.reason == "below_threshold" and copied.decision == decision


@given(
    st.lists(
        st.tuples(st.booleans(), st.sampled_from([0.0, -0.0, 0.25, 0.5, 1.0, 2.5])), max_size=12
    )
)
def test_best_first_is_the_sort_by_pin_then_score_then_as_given(
    offers: list[tuple[bool, float]],
) -> None:
    """Pinned first, then best score first, equal scores as given: what sorting by
    ``(not pinned, -score)`` gives, the very objects in the very order."""
    scored = [
        Scored(item(f"offer {n}", pinned=pinned), f"o{n}", 2, (0.0,) * 6, score, score)
        for n, (pinned, score) in enumerate(offers)
    ]
    expected = sorted(scored, key=lambda s: (not s.new.pinned, -s.score))
    assert best_first(list(scored)) == expected
    assert [id(s) for s in best_first(list(scored))] == [id(s) for s in expected]
