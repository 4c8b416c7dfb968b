"""``memory_first``: what empty sections leave goes to memory, and ``allocate``'s guarantees hold."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from prefrontal.budgets.leftovers import memory_first, nominal_shares
from prefrontal.budgets.policy import allocate, default_policy

SECTIONS = [r.section for r in default_policy().sections]
DEMANDS = st.fixed_dictionaries({s: st.integers(0, 6_000) for s in SECTIONS})


def test_an_empty_sections_share_goes_to_memory_not_to_the_conversation() -> None:
    """With only conversation and episodic asking, episodic gets all but the conversation's share."""
    policy = default_policy(1_000)
    demands = {"conversation": 400, "episodic": 4_000}
    plain = allocate(policy, demands)
    first = memory_first(policy, demands)
    assert first["conversation"] == nominal_shares(policy)["conversation"] < plain["conversation"]
    assert first["episodic"] > plain["episodic"]
    assert sum(first.values()) == policy.available


def test_what_memory_cannot_use_goes_back_to_the_others() -> None:
    """A small memory demand leaves the rest to the conversation: nothing is left unspent."""
    policy = default_policy(1_000)
    first = memory_first(policy, {"conversation": 2_000, "episodic": 50})
    assert first["episodic"] == 50
    assert first["conversation"] == policy.available - 50


@given(DEMANDS, st.integers(64, 20_000))
def test_memory_first_keeps_the_guarantees_of_allocate(demands: dict[str, int], total: int) -> None:
    """Within the budget, never above a demand or a maximum, and no hungry section left short."""
    policy = default_policy(total)
    given_ = memory_first(policy, demands)
    assert sum(given_.values()) <= policy.available
    for rule in policy.sections:
        assert given_[rule.section] <= demands[rule.section]
        assert rule.maximum is None or given_[rule.section] <= rule.maximum
    short = any(
        given_[r.section] < min(demands[r.section], r.maximum or 10**9) for r in policy.sections
    )
    assert not short or sum(given_.values()) >= policy.available - len(SECTIONS)


def test_nominal_shares_are_each_policys_own_and_a_caller_cannot_change_them() -> None:
    """Kept shares follow the policy asked about, and changing a returned split changes no other."""
    small, large = default_policy(1_000), default_policy(8_000)
    shares = nominal_shares(small)
    shares["episodic"] = 0
    assert nominal_shares(small)["episodic"] > 0
    assert nominal_shares(large) == allocate(large, dict.fromkeys(SECTIONS, large.available))
    assert nominal_shares(small) == allocate(small, dict.fromkeys(SECTIONS, small.available))
