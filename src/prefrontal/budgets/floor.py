"""The floor: the smallest total token budget whose share for context holds what is pinned.

A policy keeps a reserve for the model's output that scales with the total
(:meth:`~prefrontal.budgets.policy.BudgetPolicy.with_total`), so the total
a turn needs is more than the tokens its pinned part takes. What is left for
context never falls as the total grows, so the floor is found by bisection.
"""

from __future__ import annotations

from prefrontal.budgets.policy import BudgetPolicy, default_policy
from prefrontal.config import MAX_TOKEN_BUDGET, OrchestratorConfig

__all__ = ["base_policy", "floor_total"]


def base_policy(config: OrchestratorConfig) -> BudgetPolicy:
    """The policy turns of ``config`` scale to their total: the configured one or the default."""
    return config.budget_policy or default_policy()


def floor_total(base: BudgetPolicy, needed: int) -> int:
    """The smallest total whose ``base.with_total(total).available`` is at least ``needed``.

    Above :data:`~prefrontal.config.MAX_TOKEN_BUDGET` no total may be asked
    for: a ``needed`` no allowed total holds gives ``MAX_TOKEN_BUDGET + 1``.
    """
    if needed <= 0:
        return 1
    low, high = needed, MAX_TOKEN_BUDGET + 1
    while low < high:
        middle = (low + high) // 2
        if base.with_total(middle).available >= needed:
            high = middle
        else:
            low = middle + 1
    return low
