"""The floor: the smallest total whose share for context holds the pinned section; and the
split of what the pin leaves."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.budgets.floor import floor_total
from prefrontal.budgets.leftovers import memory_first
from prefrontal.budgets.policy import BudgetPolicy, SectionRule, allocate, default_policy
from prefrontal.config import MAX_TOKEN_BUDGET, OrchestratorConfig
from prefrontal.phases.budget_allocation import base_policy

CUSTOM = BudgetPolicy(
    total=8_000,
    reserve=1_000,
    sections=(
        SectionRule(section="consciousness", maximum=600, pinned=True),
        SectionRule(section="episodic", weight=4),
        SectionRule(section="semantic", weight=2),
    ),
)
SECTIONS = ("consciousness", "frontal_cortex", "conversation", "episodic", "semantic")


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([default_policy(), CUSTOM]), st.integers(1, 50_000))
def test_the_floor_is_the_smallest_total_that_holds_what_is_needed(
    base: BudgetPolicy, needed: int
) -> None:
    """At the floor the share for context holds ``needed`` tokens; one token less it does not."""
    floor = floor_total(base, needed, MAX_TOKEN_BUDGET)
    assert base.with_total(floor).available >= needed
    assert floor == 1 or base.with_total(floor - 1).available < needed


def test_a_need_no_allowed_budget_holds_gives_a_floor_above_the_largest() -> None:
    """Needing more than the largest budget leaves has a floor no request may ask for."""
    assert floor_total(default_policy(), MAX_TOKEN_BUDGET, MAX_TOKEN_BUDGET) == MAX_TOKEN_BUDGET + 1


def test_the_base_policy_is_the_configured_one_or_the_default() -> None:
    """Turns scale the configured policy, else the default at 4,000."""
    assert base_policy(OrchestratorConfig()) == default_policy()
    assert base_policy(OrchestratorConfig(budget_policy=CUSTOM)) is CUSTOM


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.sampled_from(SECTIONS), st.integers(0, 5_000)),
    st.integers(-10, 5_000),
    st.integers(64, 20_000),
)
def test_what_the_pin_leaves_is_all_the_split_gives(
    demands: dict[str, int], available: int, total: int
) -> None:
    """Given what the pin leaves, ``allocate`` and ``memory_first`` give no more than that (nor
    than the policy's own share), and no section more than it asked for."""
    policy = default_policy(total)
    room = max(min(available, policy.available), 0)
    for split in (
        allocate(policy, demands, available),
        memory_first(policy, demands, available=available),
    ):
        assert sum(split.values()) <= room
        assert all(split[s] <= demands.get(s, 0) for s in split)
