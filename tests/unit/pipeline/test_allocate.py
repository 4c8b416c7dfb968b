"""The budget policy and ``allocate``: examples and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefrontal.budgets.policy import BudgetPolicy, SectionRule, allocate, default_policy
from prefrontal.errors import BudgetError

SECTIONS = (
    "consciousness",
    "frontal_cortex",
    "conversation",
    "episodic",
    "semantic",
    "scratch_page",
    "working_memory",
)


@st.composite
def policies(draw: st.DrawFn) -> BudgetPolicy:
    total = draw(st.integers(min_value=10, max_value=20_000))
    reserve = draw(st.integers(min_value=0, max_value=total - 1))
    names = draw(st.lists(st.sampled_from(SECTIONS), min_size=1, max_size=7, unique=True))
    rules = tuple(
        SectionRule(
            section=name,
            weight=draw(st.floats(min_value=0.1, max_value=10)),
            minimum=draw(st.integers(min_value=0, max_value=2_000)),
            maximum=draw(st.none() | st.integers(min_value=0, max_value=5_000)),
            pinned=draw(st.booleans()),
        )
        for name in names
    )
    return BudgetPolicy(total=total, reserve=reserve, sections=rules)


demands_strategy = st.dictionaries(
    st.sampled_from(SECTIONS), st.integers(min_value=0, max_value=10_000)
)


@settings(max_examples=300, deadline=None)
@given(policy=policies(), demands=demands_strategy)
def test_never_over_budget_nor_over_demand_or_maximum(
    policy: BudgetPolicy, demands: dict[str, int]
) -> None:
    """Allocations add up to at most the available budget, and no section gets more than it asked or may have."""
    allocation = allocate(policy, demands)
    assert sum(allocation.values()) <= policy.available
    for rule in policy.sections:
        got = allocation[rule.section]
        assert 0 <= got <= demands.get(rule.section, 0)
        assert rule.maximum is None or got <= rule.maximum


@settings(max_examples=300, deadline=None)
@given(policy=policies(), demands=demands_strategy)
def test_pinned_sections_survive(policy: BudgetPolicy, demands: dict[str, int]) -> None:
    """When the pinned sections' wants fit the budget, each pinned section gets all it wants."""
    allocation = allocate(policy, demands)
    wants = {
        r.section: min(demands.get(r.section, 0), r.maximum if r.maximum is not None else 10**9)
        for r in policy.sections
        if r.pinned
    }
    if sum(wants.values()) <= policy.available:
        for section, want in wants.items():
            assert allocation[section] == want


@settings(max_examples=200, deadline=None)
@given(policy=policies(), demands=demands_strategy)
def test_deterministic(policy: BudgetPolicy, demands: dict[str, int]) -> None:
    """The same policy and demands always give the same allocation."""
    assert allocate(policy, demands) == allocate(policy, dict(reversed(list(demands.items()))))


@settings(max_examples=200, deadline=None)
@given(policy=policies(), demands=demands_strategy)
def test_budget_is_not_wasted_while_sections_want_more(
    policy: BudgetPolicy, demands: dict[str, int]
) -> None:
    """Either the whole available budget is spent, or every section got all it could take."""
    allocation = allocate(policy, demands)
    if sum(allocation.values()) < policy.available:
        for rule in policy.sections:
            cap = demands.get(rule.section, 0)
            if rule.maximum is not None:
                cap = min(cap, rule.maximum)
            assert allocation[rule.section] == cap


def test_default_split_matches_the_specification_when_everything_is_hungry() -> None:
    """With a 200-token identity and every other section hungry, the default policy gives the spec's split."""
    demands = dict.fromkeys(SECTIONS, 10_000) | {"consciousness": 200}
    allocation = allocate(default_policy(), demands)
    assert sum(allocation.values()) == 3_500
    assert allocation["consciousness"] == 200
    assert allocation["working_memory"] == 1_500
    floors = {
        "frontal_cortex": 300,
        "conversation": 500,
        "episodic": 500,
        "semantic": 300,
        "scratch_page": 100,
    }
    for section, floor in floors.items():
        assert floor <= allocation[section] <= floor + 100, section


def test_an_empty_section_gives_its_share_to_the_others() -> None:
    """A section that asks for nothing gets nothing and its share flows to hungry sections."""
    hungry = dict.fromkeys(SECTIONS, 10_000)
    full = allocate(default_policy(), hungry)
    hungry["conversation"] = 0
    without = allocate(default_policy(), hungry)
    assert without["conversation"] == 0
    assert without["episodic"] > full["episodic"]
    assert sum(without.values()) == sum(full.values())


def test_negative_demand_is_an_error() -> None:
    """A negative demand is a programming error and says which section."""
    with pytest.raises(BudgetError, match="episodic"):
        allocate(default_policy(), {"episodic": -1})


def test_policy_rejects_a_reserve_that_leaves_nothing() -> None:
    """A reserve as large as the total is refused at construction."""
    with pytest.raises(ValueError, match="reserve"):
        BudgetPolicy(total=100, reserve=100, sections=(SectionRule(section="episodic"),))


def test_scaled_policy_keeps_proportions() -> None:
    """``default_policy(1000)`` is the 4,000 policy scaled down."""
    policy = default_policy(1_000)
    assert policy.total == 1_000
    assert policy.reserve == 125
    rule = policy.rule("consciousness")
    assert rule is not None and rule.maximum == 100


def test_default_policies_are_shared_per_total_and_each_scaled_to_its_own() -> None:
    """A total asked for again gets the same policy; other totals are not given a kept one."""
    assert default_policy(1_000) is default_policy(1_000)
    assert default_policy() is default_policy(4_000)
    for total in (1_000, 4_000, 1_000, 9_000, 1_000):
        policy = default_policy(total)
        assert policy.total == total
        assert policy == default_policy(4_000).with_total(total)
