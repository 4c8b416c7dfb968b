"""Phase 9, ``context_assembly``: place the owner's pinned section, choose data, render.

The owner's pinned section (:mod:`prefrontal.bundle.pinning`) is placed
first, whole, and never given up; a data fragment whose text folds to the
same as a pinned one is the copy dropped, never the owner's. Data selection
is then greedy by rank within each section's allocation, and a second pass
spends what sections left unused on the best remaining data. Duplicate data
across sections is kept once (the earlier section wins). Below the floor
(the budget cannot hold the pinned section) no data is placed: only the
owner's parts that fit whole, in their order. The rendered text is counted
with the real tokenizer and, if over, the fewest worst data fragments that
bring it within the budget are found by bisection: a handful of renders,
not one per fragment. The bundle never exceeds the budget.
"""

from __future__ import annotations

import re
from operator import attrgetter

from prefrontal.bundle.checksum import checksum
from prefrontal.bundle.costs import LINE_BREAK_TOKENS, fragment_cost, header_cost
from prefrontal.bundle.fitting import PIECEWISE_ENCODINGS, fit_rendered
from prefrontal.bundle.models import SECTION_ORDER, ContextBundle, Fragment, Section
from prefrontal.bundle.pinning import Pin, owner_parts_that_fit
from prefrontal.config import PhaseName
from prefrontal.phases.budget_allocation import pin
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.text_cache import text_cache
from prefrontal.traces.models import DroppedRecord, SectionUsage

NAME: PhaseName = "context_assembly"
_SPACE = re.compile(r"\W+")
_RANK = attrgetter("rank")
_SECTION_NAMES = {section: section.value for section in SECTION_ORDER}
"""Each section's name, looked up rather than read through the enum for every fragment."""


def _key(fragment: Fragment) -> str:
    """Text compared for duplicates: lower case, punctuation and spacing folded."""
    return _folded_text(fragment.text)


@text_cache(max_bytes=4_000_000)
def _folded_text(text: str) -> str:
    """``text`` lower-cased, each run of punctuation and spacing one space (cached per text)."""
    return _SPACE.sub(" ", text.lower()).strip()


class _Selection:
    """The fragments chosen so far, per section, with what they cost."""

    def __init__(self, turn: TurnState) -> None:
        self.turn = turn
        self.chosen: dict[Section, list[Fragment]] = {s: [] for s in SECTION_ORDER}
        self.spent: dict[Section, int] = dict.fromkeys(SECTION_ORDER, 0)
        self.seen: dict[str, Fragment] = {}
        self.dropped: list[DroppedRecord] = []
        self.spare: set[int] = set()
        """``id()`` of the fragments placed by the second pass (from budget left unused)."""
        self.pinned: set[int] = set()
        """``id()`` of the owner's pinned fragments placed (never given up)."""
        self._headers: dict[Section, int] = {}

    def cost(self, fragment: Fragment) -> int:
        """Tokens ``fragment`` adds now: its line, and its section's header if it is the first."""
        if self.chosen[fragment.section]:
            return fragment_cost(fragment)
        return fragment_cost(fragment) + self.header_cost(fragment.section)

    def header_cost(self, section: Section) -> int:
        """``header_cost`` of ``section``, counted once per turn."""
        cost = self._headers.get(section)
        if cost is None:
            cost = self._headers[section] = header_cost(self.turn.count, section)
        return cost

    def place_pinned(self, fragment: Fragment) -> None:
        """Place a pinned fragment: no limit, no duplicate check, never given up."""
        self.spent[fragment.section] += self.cost(fragment)
        self.chosen[fragment.section].append(fragment)
        self.seen.setdefault(_key(fragment), fragment)
        self.pinned.add(id(fragment))

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
    pinned = turn.pin or pin(turn)
    if not pinned.fits:
        return _below_floor(turn, selection, pinned)
    for fragment in pinned.fragments:
        selection.place_pinned(fragment)
    leftovers: list[tuple[Fragment, str]] = []
    seen, placed, pinned_ids = selection.seen, selection.chosen, selection.pinned
    for section in SECTION_ORDER:
        loaded = turn.loads.get(section)
        if not loaded:
            continue
        limit = turn.allocation.get(_SECTION_NAMES[section], 0)
        for fragment in sorted(loaded, key=_RANK):
            if id(fragment) in pinned_ids:
                continue
            key = _folded_text(fragment.text)
            twin = seen.get(key)
            if twin is not None:
                reason = f"duplicate of {twin.provenance.item_ids[0]}"
                selection.dropped.append(_drop(fragment, reason))
                continue
            own = fragment.section  # the cost of ``_Selection.cost``, inlined: one call less each
            cost = fragment.tokens + LINE_BREAK_TOKENS
            if not placed[own]:
                cost += selection.header_cost(own)
            spent = selection.spent[own] + cost
            if spent > limit:
                leftovers.append((fragment, key))
                continue
            selection.spent[own] = spent
            placed[own].append(fragment)
            seen[key] = fragment
    _spend_unused(turn, selection, leftovers)
    return selection


BELOW_FLOOR = "below the floor: no data is delivered"
"""Why every data fragment is dropped when the budget cannot hold the owner's section."""


def _below_floor(turn: TurnState, selection: _Selection, pinned: Pin) -> _Selection:
    """No data: only the owner's parts that fit whole, in their order; the rest dropped."""
    kept = owner_parts_that_fit(pinned.owner, turn.policy.available, turn.count)
    for fragment in kept:
        selection.place_pinned(fragment)
    for section in SECTION_ORDER:
        for fragment in sorted(turn.loads.get(section, []), key=_RANK):
            if id(fragment) not in selection.pinned:
                selection.dropped.append(_drop(fragment, BELOW_FLOOR))
    return selection


def _spend_unused(
    turn: TurnState, selection: _Selection, leftovers: list[tuple[Fragment, str]]
) -> None:
    """Second pass: the budget sections left unused goes to the best remaining data."""
    unused = turn.policy.available - sum(selection.spent.values())
    for fragment, key in leftovers:
        cost = selection.cost(fragment)
        if key in selection.seen or cost > unused:
            selection.dropped.append(_drop(fragment, "over budget"))
            continue
        selection.try_add(fragment, selection.spent[fragment.section] + cost, key)
        selection.spare.add(id(fragment))
        unused -= cost


def _drop(fragment: Fragment, reason: str) -> DroppedRecord:
    return DroppedRecord(
        section=_SECTION_NAMES[fragment.section],
        item_ids=fragment.provenance.item_ids,
        tokens=fragment.tokens,
        reason=reason,
        text=fragment.text,
    )


def _fit(turn: TurnState, selection: _Selection) -> tuple[list[Fragment], str, int]:
    """Render and count; if over, drop the fewest worst fragments that make it fit.

    Returns the fragments kept, in rendering order, the text and its tokens.
    """
    chosen = [f for s in SECTION_ORDER for f in selection.chosen[s]]
    piecewise = turn.counter.encoding_name in PIECEWISE_ENCODINGS
    fitted = fit_rendered(
        chosen, turn.policy.available, turn.counter.count, selection.pinned, piecewise=piecewise
    )
    reason = "trimmed to fit the rendered total"
    selection.dropped.extend(_drop(f, reason) for f in fitted.dropped)
    return fitted.in_order, fitted.text, fitted.tokens


FRAGMENT_LIMIT = 64
"""At most this many fragments of the bundle are described in the trace detail."""


def _provenance(selection: _Selection, fragments: list[Fragment]) -> list[dict[str, object]]:
    """Each fragment of the bundle as the trace records it: where it came from and why it is in.

    No text: the trace says which items made the context, the stores hold what they say.
    """
    described: list[dict[str, object]] = []
    for f in fragments[:FRAGMENT_LIMIT]:
        source = f.provenance
        score = source.score
        described.append(
            {
                "section": _SECTION_NAMES[f.section],
                "store": source.store,
                "item_ids": list(source.item_ids),
                "phase": source.phase,
                "score": None if score is None else round(score, 4),
                "rank": f.rank,
                "tokens": f.tokens,
                "taken": _taken(selection, f),
            }
        )
    return described


PINNED_TAKEN = "pinned: the owner's section, placed before any data"
SPARE_TAKEN = "from budget other sections left unused"


def _taken(selection: _Selection, fragment: Fragment) -> str:
    """Why ``fragment`` is in the bundle, as the trace says it."""
    if id(fragment) in selection.pinned:
        return PINNED_TAKEN
    if id(fragment) in selection.spare:
        return SPARE_TAKEN
    return f"ranked {fragment.rank} in its section, within its allocation"


def _tokens_by_section(fragments: list[Fragment]) -> dict[str, int]:
    """Each section's tokens in ``fragments``, by section name, every section in the fixed order."""
    used = dict.fromkeys(SECTION_ORDER, 0)
    for f in fragments:
        used[f.section] += f.tokens
    return {_SECTION_NAMES[s]: tokens for s, tokens in used.items()}


def _usage(turn: TurnState, used: dict[str, int]) -> list[SectionUsage]:
    """What each section asked for, was allocated and used (``used``: by section name)."""
    return [
        SectionUsage(
            section=name,
            requested=turn.demands.get(name, 0),
            allocated=turn.allocation.get(name, 0),
            used=tokens,
        )
        for name, tokens in used.items()
    ]


async def run(turn: TurnState) -> PhaseOutcome:
    """Select, render, verify the total, and build the bundle."""
    selection = _select(turn)
    ordered, text, tokens = _fit(turn, selection)
    breakdown = _tokens_by_section(ordered)
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
    turn.sections = _usage(turn, breakdown)
    return PhaseOutcome(
        items_loaded=len(ordered),
        tokens_loaded=tokens,
        items_dropped=len(selection.dropped),
        tokens_dropped=sum(d.tokens for d in selection.dropped),
        detail={"fragments": _provenance(selection, ordered)},
    )


SPEC = PhaseSpec(
    name=NAME,
    run=run,
    budget_ms=50,
    needs=("budget_allocation",),
    reads=frozenset({"allocation", "demands", "loads", "pin"}),
    writes=frozenset({"bundle", "dropped", "sections"}),
    loads=False,
)
