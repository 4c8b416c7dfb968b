"""Where the budget that empty sections leave goes: to memory first.

``allocate`` hands what an empty section leaves to every section that has
more to give, by weight. For the recent conversation, goals or working notes
that is padding (older turns, lower goals), while memory search scales with
the budget: more room holds more of what bears on the input. So
``memory_first`` serves every other section up to its *nominal share* (what
it would get if every section had plenty to give) and lets the memory
sections take the rest; only what memory cannot use then goes back to the
others. The guarantees of ``allocate`` still hold, and no token is left
unallocated while a section still asks for it.
"""

from __future__ import annotations

from collections.abc import Mapping

from prefrontal.budgets.policy import Allocation, BudgetPolicy, allocate

MEMORY_SECTIONS = frozenset({"episodic", "semantic", "scratch_page"})


def nominal_shares(policy: BudgetPolicy) -> Allocation:
    """What each section gets when every section asks for the whole budget."""
    return allocate(policy, {rule.section: policy.available for rule in policy.sections})


def memory_first(
    policy: BudgetPolicy,
    demands: Mapping[str, int],
    memory: frozenset[str] = MEMORY_SECTIONS,
) -> Allocation:
    """``allocate`` with every non-memory section's demand first capped at its nominal share."""
    nominal = nominal_shares(policy)
    capped = {
        section: demand if section in memory else min(demand, nominal.get(section, 0))
        for section, demand in demands.items()
    }
    first = allocate(policy, capped)
    left = policy.available - sum(first.values())
    if left <= 0:
        return first
    wanting = {s: max(demands.get(s, 0) - given, 0) for s, given in first.items()}
    extra = allocate(_remainder_policy(policy, first, left), wanting)
    return {s: given + extra.get(s, 0) for s, given in first.items()}


def _remainder_policy(policy: BudgetPolicy, given: Allocation, left: int) -> BudgetPolicy:
    """The same weights over ``left`` tokens, with what each section may still take."""
    rules = tuple(
        r.model_copy(
            update={
                "minimum": 0,
                "pinned": False,
                "maximum": None if r.maximum is None else max(r.maximum - given[r.section], 0),
            }
        )
        for r in policy.sections
    )
    return BudgetPolicy(total=left, reserve=0, sections=rules)
