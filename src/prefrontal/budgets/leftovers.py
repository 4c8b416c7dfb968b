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
from functools import lru_cache
from types import MappingProxyType

from prefrontal.budgets.policy import Allocation, BudgetPolicy, SectionRule, allocate, water_fill

MEMORY_SECTIONS = frozenset({"episodic", "semantic", "scratch_page"})


NOMINAL_SHARES_KEPT = 32
"""How many recent policies' nominal shares are kept worked out."""


def nominal_shares(policy: BudgetPolicy) -> Allocation:
    """What each section gets when every section asks for the whole budget."""
    return dict(_kept_nominal_shares(policy))


@lru_cache(maxsize=NOMINAL_SHARES_KEPT)
def _kept_nominal_shares(policy: BudgetPolicy) -> Mapping[str, int]:
    """``nominal_shares``, read-only, worked out once per policy (policies are frozen values)."""
    return MappingProxyType(
        allocate(policy, {rule.section: policy.available for rule in policy.sections})
    )


def memory_first(
    policy: BudgetPolicy,
    demands: Mapping[str, int],
    memory: frozenset[str] = MEMORY_SECTIONS,
    available: int | None = None,
) -> Allocation:
    """``allocate`` with every non-memory section's demand first capped at its nominal share.

    ``available``: the tokens to split when less than ``policy.available``
    (what the owner's pinned section left); nominal shares stay the policy's.
    """
    nominal = _kept_nominal_shares(policy)
    capped = {
        section: demand if section in memory else min(demand, nominal.get(section, 0))
        for section, demand in demands.items()
    }
    first = allocate(policy, capped, available)
    whole = policy.available if available is None else max(min(available, policy.available), 0)
    left = whole - sum(first.values())
    if left <= 0:
        return first
    extra = _share_left(policy, first, demands, left)
    return {s: given + extra[s] for s, given in first.items()}


def _share_left(
    policy: BudgetPolicy, given: Allocation, demands: Mapping[str, int], left: int
) -> Allocation:
    """``left`` tokens shared by the policy's weights, pinned sections included, no minimum.

    Each section takes at most what it still asks for beyond ``given`` and
    what its maximum still allows: ``allocate`` over ``left`` tokens with
    those caps, every rule unpinned and without a minimum, worked out
    without building that policy.
    """
    caps = {r.section: _still_takes(r, given[r.section], demands) for r in policy.sections}
    extra = dict.fromkeys(caps, 0)
    water_fill({r.section: r.weight for r in policy.sections}, caps, extra, left)
    return extra


def _still_takes(rule: SectionRule, given: int, demands: Mapping[str, int]) -> int:
    """What a section given ``given`` tokens still asks for, within what its maximum allows."""
    wanting = max(demands.get(rule.section, 0) - given, 0)
    return wanting if rule.maximum is None else min(wanting, max(rule.maximum - given, 0))
