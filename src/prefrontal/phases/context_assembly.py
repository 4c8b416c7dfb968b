"""Phase 9, ``context_assembly``: choose fragments within each section's allocation and render.

Selection is greedy by rank within each section's allocation, then a second
pass spends what sections left unused on the best remaining fragments.
Duplicate text across sections is kept once (the earlier section wins). The
rendered text is counted with the real tokenizer and trimmed, worst fragment
first, until it fits: the bundle never exceeds the budget.
"""

from __future__ import annotations

import re

from prefrontal.bundle.checksum import checksum
from prefrontal.bundle.costs import fragment_cost, header_cost
from prefrontal.bundle.models import SECTION_ORDER, ContextBundle, Fragment, Section
from prefrontal.bundle.render import render_sections
from prefrontal.config import PhaseName
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.traces.models import DroppedRecord, SectionUsage

NAME: PhaseName = "context_assembly"
_SPACE = re.compile(r"\W+")


def _key(fragment: Fragment) -> str:
    """Text compared for duplicates: lower case, punctuation and spacing folded."""
    return _SPACE.sub(" ", fragment.text.lower()).strip()


class _Selection:
    """The fragments chosen so far, per section, with what they cost."""

    def __init__(self, turn: TurnState) -> None:
        self.turn = turn
        self.chosen: dict[Section, list[Fragment]] = {s: [] for s in SECTION_ORDER}
        self.spent: dict[Section, int] = dict.fromkeys(SECTION_ORDER, 0)
        self.seen: dict[str, Fragment] = {}
        self.dropped: list[DroppedRecord] = []

    def cost(self, fragment: Fragment) -> int:
        extra = (
            0 if self.chosen[fragment.section] else header_cost(self.turn.count, fragment.section)
        )
        return fragment_cost(fragment) + extra

    def try_add(self, fragment: Fragment, limit: int, key: str) -> bool:
        cost = self.cost(fragment)
        if self.spent[fragment.section] + cost > limit:
            return False
        self.spent[fragment.section] += cost
        self.chosen[fragment.section].append(fragment)
        self.seen[key] = fragment
        return True


def _select(turn: TurnState) -> _Selection:
    selection = _Selection(turn)
    leftovers: list[tuple[Fragment, str]] = []
    for section in SECTION_ORDER:
        limit = turn.allocation.get(section.value, 0)
        for fragment in sorted(turn.loads.get(section, []), key=lambda f: f.rank):
            key = _key(fragment)
            twin = selection.seen.get(key)
            if twin is not None:
                reason = f"duplicate of {twin.provenance.item_ids[0]}"
                selection.dropped.append(_drop(fragment, reason))
            elif not selection.try_add(fragment, limit, key):
                leftovers.append((fragment, key))
    _spend_unused(turn, selection, leftovers)
    return selection


def _spend_unused(
    turn: TurnState, selection: _Selection, leftovers: list[tuple[Fragment, str]]
) -> None:
    """Second pass: the budget sections left unused goes to the best remaining fragments."""
    unused = turn.policy.available - sum(selection.spent.values())
    for fragment, key in leftovers:
        cost = selection.cost(fragment)
        if cost <= unused and key not in selection.seen:
            selection.try_add(fragment, selection.spent[fragment.section] + cost, key)
            unused -= cost
        else:
            selection.dropped.append(_drop(fragment, "over budget"))


def _drop(fragment: Fragment, reason: str) -> DroppedRecord:
    return DroppedRecord(
        section=fragment.section.value,
        item_ids=fragment.provenance.item_ids,
        tokens=fragment.tokens,
        reason=reason,
    )


def _fit(turn: TurnState, selection: _Selection) -> tuple[list[Fragment], str, int]:
    """Render, count with the real tokenizer, and drop the worst fragment until it fits."""
    limit = turn.policy.available
    fragments = [f for s in SECTION_ORDER for f in selection.chosen[s]]
    while True:
        text = render_sections(fragments)
        tokens = turn.count(text) if text else 0
        if tokens <= limit:
            return fragments, text, tokens
        victim = _worst(fragments)
        fragments.remove(victim)
        selection.dropped.append(_drop(victim, "trimmed to fit the rendered total"))


def _worst(fragments: list[Fragment]) -> Fragment:
    """The last-ranked fragment of the last non-pinned section that has any."""
    order = {s: i for i, s in enumerate(SECTION_ORDER)}
    unpinned = [f for f in fragments if f.section is not Section.CONSCIOUSNESS] or fragments
    return max(unpinned, key=lambda f: (order[f.section], f.rank))


def _usage(turn: TurnState, fragments: list[Fragment]) -> list[SectionUsage]:
    used: dict[str, int] = {}
    for f in fragments:
        used[f.section.value] = used.get(f.section.value, 0) + f.tokens
    return [
        SectionUsage(
            section=s.value,
            requested=turn.demands.get(s.value, 0),
            allocated=turn.allocation.get(s.value, 0),
            used=used.get(s.value, 0),
        )
        for s in SECTION_ORDER
    ]


async def run(turn: TurnState) -> PhaseOutcome:
    """Select, render, verify the total, and build the bundle."""
    selection = _select(turn)
    fragments, text, tokens = _fit(turn, selection)
    ordered = sorted(fragments, key=lambda f: (SECTION_ORDER.index(f.section), f.position, f.rank))
    breakdown = {s.value: 0 for s in SECTION_ORDER}
    for f in ordered:
        breakdown[f.section.value] += f.tokens
    turn.bundle = ContextBundle(
        turn_id=turn.context.turn_id,
        text=text,
        total_tokens=tokens,
        budget=turn.policy.total,
        fragments=tuple(ordered),
        source_breakdown=breakdown,
        checksum=checksum(text, ordered),
        tokenizer=turn.counter.encoding_name,
        version=turn.version,
        created_at=turn.context.started_at,
    )
    turn.dropped = selection.dropped
    turn.sections = _usage(turn, ordered)
    return PhaseOutcome(
        items_loaded=len(ordered),
        tokens_loaded=tokens,
        items_dropped=len(selection.dropped),
        tokens_dropped=sum(d.tokens for d in selection.dropped),
    )


SPEC = PhaseSpec(
    name=NAME,
    run=run,
    budget_ms=50,
    needs=("budget_allocation",),
    reads=frozenset({"allocation", "demands", "loads"}),
    writes=frozenset({"bundle", "dropped", "sections"}),
    loads=False,
)
