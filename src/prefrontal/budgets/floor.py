"""The floor: the smallest total token budget whose share for context holds what is pinned.

A policy keeps a reserve for the model's output that scales with the total
(:meth:`~prefrontal.budgets.policy.BudgetPolicy.with_total`), so the total
a turn needs is more than the tokens its pinned part takes. What is left for
context never falls as the total grows, so the floor is found by bisection.
"""

from __future__ import annotations

from prefrontal.budgets.policy import BudgetPolicy

__all__ = ["floor_total"]


def floor_total(base: BudgetPolicy, needed: int, largest: int) -> int:
    """The smallest total whose ``base.with_total(total).available`` is at least ``needed``.

    ``largest`` is the largest total a turn may ask for: a ``needed`` that
    no total up to it holds gives ``largest + 1``.
    """
    if needed <= 0:
        return 1
    low, high = needed, largest + 1
    while low < high:
        middle = (low + high) // 2
        if base.with_total(middle).available >= needed:
            high = middle
        else:
            low = middle + 1
    return low
