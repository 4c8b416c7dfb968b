"""Token counting and the pure budget allocation policy."""

from prefrontal.budgets.policy import (
    Allocation,
    BudgetPolicy,
    SectionRule,
    allocate,
    default_policy,
)
from prefrontal.budgets.tokens import TokenCounter, default_counter

__all__ = [
    "Allocation",
    "BudgetPolicy",
    "SectionRule",
    "TokenCounter",
    "allocate",
    "default_counter",
    "default_policy",
]
