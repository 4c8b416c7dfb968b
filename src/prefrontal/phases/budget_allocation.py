"""Phase 8, ``budget_allocation``: pin the owner's section, then split what is left across data.

The owner's section (:mod:`prefrontal.bundle.pinning`: the profile's parts,
the clock, and the open blocking goals the turn shows) is taken first,
whole, measured rendered with the real tokenizer. Only what it leaves is
split across the data sections, under the turn's policy; when the budget
cannot hold it (below the floor), no data section gets a token.

A section's demand is what its fragments would cost rendered (text, line
breaks, its header: :mod:`prefrontal.bundle.costs`). A section that failed,
timed out or found nothing asks for nothing, so its share flows to the
others: to the memory sections first (``memory_first``), whose search is
what gains from more room.
"""

from __future__ import annotations

from prefrontal.budgets.floor import floor_total
from prefrontal.budgets.leftovers import memory_first
from prefrontal.budgets.policy import BudgetPolicy, default_policy
from prefrontal.bundle.costs import demand, lines_cost
from prefrontal.bundle.models import Fragment, Section
from prefrontal.bundle.pinning import Pin, pin_of
from prefrontal.config import MAX_TOKEN_BUDGET, OrchestratorConfig, PhaseName
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.stores.frontal_cortex import FrontalKind, FrontalStatus

NAME: PhaseName = "budget_allocation"
OPEN = (FrontalStatus.ACTIVE, FrontalStatus.BLOCKED)
PINNED_FROM = frozenset({Section.CONSCIOUSNESS, Section.FRONTAL_CORTEX})
"""The sections :func:`pin` takes the pinned fragments from: the others' are all data."""
_SECTION_NAMES = {section: section.value for section in Section}
"""Each section's name, in the enum's order, read through the enum once."""


def pinned_goal_ids(turn: TurnState) -> frozenset[str]:
    """The ids of the open blocking goals phase 3 chose to show: pinned with the owner."""
    return frozenset(
        item.item_id
        for item in turn.frontal_items
        if item.kind is FrontalKind.GOAL and item.blocking and item.status in OPEN
    )


def base_policy(config: OrchestratorConfig) -> BudgetPolicy:
    """The policy turns of ``config`` scale to their total: the configured one or the default."""
    return config.budget_policy or default_policy()


def pin(turn: TurnState) -> Pin:
    """The turn's pinned section, measured; with its floor when the budget does not hold it."""
    owner = sorted(turn.loads.get(Section.CONSCIOUSNESS, []), key=lambda f: f.rank)
    goal_ids = pinned_goal_ids(turn)
    goals = [
        f
        for f in turn.loads.get(Section.FRONTAL_CORTEX, [])
        if f.provenance.item_ids[0] in goal_ids
    ]
    pinned = pin_of(owner, goals, turn.policy.available, turn.count)
    if pinned.fits:
        return pinned
    floor = floor_total(base_policy(turn.config), pinned.tokens, MAX_TOKEN_BUDGET)
    return Pin(pinned.owner, pinned.goals, pinned.tokens, pinned.available, floor)


def _data_demand(turn: TurnState, section: Section, data: list[Fragment], pinned: bool) -> int:
    """What ``data`` of ``section`` would add: without the header when pinned fragments paid it."""
    if not data:
        return 0
    return lines_cost(data) if pinned else demand(turn.count, section, data)


async def run(turn: TurnState) -> PhaseOutcome:
    """Pin the owner's section; allocate what it leaves across the data under the policy."""
    pinned = turn.pin = pin(turn)
    held = {id(f) for f in pinned.fragments}
    demands: dict[str, int] = {}
    pinned_cost: dict[str, int] = {}
    data_demands: dict[str, int] = {}
    for section, name in _SECTION_NAMES.items():
        loaded = turn.loads.get(section, [])
        whole = demands[name] = demand(turn.count, section, loaded)
        if section not in PINNED_FROM or not held:  # no pinned fragment: all of it is data
            pinned_cost[name], data_demands[name] = 0, whole
            continue
        mine = [f for f in loaded if id(f) in held]
        data = [f for f in loaded if id(f) not in held]
        pinned_cost[name] = demand(turn.count, section, mine)
        data_demands[name] = _data_demand(turn, section, data, bool(mine))
    turn.demands = demands
    left = pinned.available - pinned.tokens if pinned.fits else 0
    shares = memory_first(turn.policy, data_demands, available=left)
    turn.allocation = {n: pinned_cost[n] + shares.get(n, 0) for n in _SECTION_NAMES.values()}
    asked = sum(turn.demands.values())
    given = sum(turn.allocation.values())
    return PhaseOutcome(
        tokens_loaded=asked,
        tokens_dropped=max(asked - given, 0),
        detail={
            "available": turn.policy.available,
            "allocated": given,
            "reserve": turn.policy.reserve,
            "pinned": pinned.tokens,
            "floor": pinned.floor,
        },
    )


SPEC = PhaseSpec(
    name=NAME,
    run=run,
    budget_ms=50,
    needs=(
        "turn_context",
        "consciousness",
        "frontal_cortex",
        "conversation",
        "episodic",
        "semantic",
        "scratch_page",
    ),
    reads=frozenset({"frontal_items", "loads"}),
    writes=frozenset({"allocation", "demands", "pin"}),
    loads=False,
)
