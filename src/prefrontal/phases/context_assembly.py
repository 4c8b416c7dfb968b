"""Phase 9, ``context_assembly``: choose fragments within each section's allocation and render.

Selection is greedy by rank within each section's allocation, then a second
pass spends what sections left unused on the best remaining fragments. A
part of the agent's profile (its identity, its rules) that still does not
fit is trimmed to the room left, with a warning, never dropped in silence.
Duplicate text across sections is kept once (the earlier section wins). The
rendered text is counted with the real tokenizer and, if over, the fewest
worst fragments that bring it within the budget are found by bisection: a
handful of renders, not one per fragment. The bundle never exceeds the budget.
"""

from __future__ import annotations

import re

from prefrontal.bundle.checksum import checksum
from prefrontal.bundle.costs import fragment_cost, header_cost
from prefrontal.bundle.fitting import fit_rendered
from prefrontal.bundle.models import SECTION_ORDER, ContextBundle, Fragment, Section
from prefrontal.bundle.trimming import trim_to_tokens
from prefrontal.config import PhaseName
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.text_cache import text_cache
from prefrontal.traces.models import DroppedRecord, SectionUsage

NAME: PhaseName = "context_assembly"
_SPACE = re.compile(r"\W+")


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
        self.warnings: list[str] = []
        self.spare: set[int] = set()
        """``id()`` of the fragments placed by the second pass (from budget left unused)."""
        self._headers: dict[Section, int] = {}

    def cost(self, fragment: Fragment) -> int:
        """Tokens ``fragment`` adds now: its line, and its section's header if it is the first."""
        if self.chosen[fragment.section]:
            return fragment_cost(fragment)
        return fragment_cost(fragment) + self._header_cost(fragment.section)

    def _header_cost(self, section: Section) -> int:
        """``header_cost`` of ``section``, counted once per turn."""
        cost = self._headers.get(section)
        if cost is None:
            cost = self._headers[section] = header_cost(self.turn.count, section)
        return cost

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
        if key in selection.seen:
            selection.dropped.append(_drop(fragment, "over budget"))
            continue
        placed = (
            fragment
            if selection.cost(fragment) <= unused
            else _trimmed(selection, fragment, unused)
        )
        if placed is None:
            selection.dropped.append(_drop(fragment, "over budget"))
            continue
        cost = selection.cost(placed)
        selection.try_add(placed, selection.spent[placed.section] + cost, key)
        selection.spare.add(id(placed))
        unused -= cost


MIN_TRIMMED_TOKENS = 8
"""A trimmed part of the profile shorter than this is not worth its header: it is dropped."""


def _trimmed(selection: _Selection, fragment: Fragment, room: int) -> Fragment | None:
    """A profile fragment cut to ``room`` tokens (with a warning), or ``None``."""
    if fragment.section is not Section.CONSCIOUSNESS:
        return None
    overhead = selection.cost(fragment) - fragment.tokens
    count = selection.turn.count
    text = trim_to_tokens(fragment.text, room - overhead, count)
    tokens = count(text) if text else 0
    if tokens < MIN_TRIMMED_TOKENS:
        return None
    part = fragment.provenance.item_ids[0]
    selection.warnings.append(
        f"{part} trimmed from {fragment.tokens} to {tokens} tokens to fit the budget"
    )
    selection.dropped.append(_drop(fragment, f"trimmed to {tokens} tokens"))
    return fragment.model_copy(update={"text": text, "tokens": tokens})


def _drop(fragment: Fragment, reason: str) -> DroppedRecord:
    return DroppedRecord(
        section=fragment.section.value,
        item_ids=fragment.provenance.item_ids,
        tokens=fragment.tokens,
        reason=reason,
    )


def _fit(turn: TurnState, selection: _Selection) -> tuple[list[Fragment], str, int]:
    """Render and count; if over, drop the fewest worst fragments that make it fit.

    Returns the fragments kept, in rendering order, the text and its tokens.
    """
    chosen = [f for s in SECTION_ORDER for f in selection.chosen[s]]
    fitted = fit_rendered(chosen, turn.policy.available, turn.count)
    reason = "trimmed to fit the rendered total"
    selection.dropped.extend(_drop(f, reason) for f in fitted.dropped)
    return fitted.in_order, fitted.text, fitted.tokens


FRAGMENT_LIMIT = 64
"""At most this many fragments of the bundle are described in the trace detail."""


def _provenance(selection: _Selection, fragments: list[Fragment]) -> list[dict[str, object]]:
    """Each fragment of the bundle as the trace records it: where it came from and why it is in.

    No text: the trace says which items made the context, the stores hold what they say.
    """
    return [
        {
            "section": f.section.value,
            "store": f.provenance.store,
            "item_ids": list(f.provenance.item_ids),
            "phase": f.provenance.phase,
            "score": None if f.provenance.score is None else round(f.provenance.score, 4),
            "rank": f.rank,
            "tokens": f.tokens,
            "taken": (
                "from budget other sections left unused"
                if id(f) in selection.spare
                else f"ranked {f.rank} in its section, within its allocation"
            ),
        }
        for f in fragments[:FRAGMENT_LIMIT]
    ]


def _tokens_by_section(fragments: list[Fragment]) -> dict[str, int]:
    """Each section's tokens in ``fragments``, by section name, every section in the fixed order."""
    used = dict.fromkeys(SECTION_ORDER, 0)
    for f in fragments:
        used[f.section] += f.tokens
    return {s.value: tokens for s, tokens in used.items()}


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
        warnings=tuple(selection.warnings),
        detail={"fragments": _provenance(selection, ordered)},
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
