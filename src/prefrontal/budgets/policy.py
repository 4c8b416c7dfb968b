"""The budget policy and ``allocate``: how a total token budget is split across sections.

``allocate`` is a pure function of a policy and each section's demand (the
tokens it has to offer). Its guarantees, checked by property tests:

- the allocations add up to at most ``policy.total - policy.reserve``;
- no section gets more than it asked for, nor more than its ``maximum``;
- pinned sections are cut last: they are served, in the policy's order,
  before any other section gets a token;
- a section that asks for nothing (empty, failed, timed out) gets nothing,
  and its share flows to the sections that have more to give;
- the result depends only on its inputs.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ConfigDict, Field, model_validator

from prefrontal.errors import BudgetError
from prefrontal.forgetting import remembered
from prefrontal.model_reads import FastReads


class SectionRule(FastReads):
    """How one section takes part in the split.

    ``weight`` is the section's share of the contested budget; ``minimum`` is
    served before weights apply; ``maximum`` caps the section (``None``: no cap).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    section: str = Field(min_length=1)
    weight: float = Field(default=1.0, gt=0)
    minimum: int = Field(default=0, ge=0)
    maximum: int | None = Field(default=None, ge=0)
    pinned: bool = False


class BudgetPolicy(FastReads):
    """A total, a reserve held back for output and tools, and one rule per section."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    total: int = Field(default=4_000, ge=1, le=2_000_000)
    reserve: int = Field(default=0, ge=0)
    sections: tuple[SectionRule, ...]

    @model_validator(mode="after")
    def _consistent(self) -> BudgetPolicy:
        if self.reserve >= self.total:
            raise ValueError(f"reserve {self.reserve} leaves nothing of total {self.total}")
        names = [rule.section for rule in self.sections]
        if len(set(names)) != len(names):
            raise ValueError(f"sections named twice in {names}")
        return self

    @property
    def available(self) -> int:
        """Tokens that sections may share: the total less the reserve."""
        return self.total - self.reserve

    def rule(self, section: str) -> SectionRule | None:
        """The rule for ``section``, if the policy has one."""
        return next((r for r in self.sections if r.section == section), None)

    def with_total(self, total: int) -> BudgetPolicy:
        """The same policy scaled to another total (reserve and bounds scale with it)."""
        if total == self.total:
            return self
        factor = total / self.total

        def scaled(value: int | None) -> int | None:
            return None if value is None else int(value * factor)

        rules = tuple(
            r.model_copy(update={"minimum": int(r.minimum * factor), "maximum": scaled(r.maximum)})
            for r in self.sections
        )
        return BudgetPolicy(total=total, reserve=int(self.reserve * factor), sections=rules)


Allocation = dict[str, int]


def allocate(
    policy: BudgetPolicy, demands: Mapping[str, int], available: int | None = None
) -> Allocation:
    """Split ``policy.available`` (or ``available``, when given) across the policy's sections.

    ``available`` is what is left once something outside the policy (the
    owner's pinned section) has taken its part. Sections the policy does not
    name get nothing. See the module docstring for the guarantees.
    """
    for section, demand in demands.items():
        if demand < 0:
            raise BudgetError(f"section {section!r} has a negative demand ({demand})")
    caps = {r.section: _cap(r, demands.get(r.section, 0)) for r in policy.sections}
    given = dict.fromkeys(caps, 0)
    left = policy.available if available is None else max(min(available, policy.available), 0)
    for rule in policy.sections:
        if rule.pinned:
            given[rule.section] = min(caps[rule.section], left)
            left -= given[rule.section]
    for rule in policy.sections:
        if not rule.pinned:
            grant = min(rule.minimum, caps[rule.section], left)
            given[rule.section] = grant
            left -= grant
    water_fill(_unpinned_weights(policy), caps, given, left)
    return given


def _cap(rule: SectionRule, demand: int) -> int:
    return demand if rule.maximum is None else min(demand, rule.maximum)


def _unpinned_weights(policy: BudgetPolicy) -> dict[str, float]:
    """The weight of each section that is not pinned, in the policy's order."""
    return {r.section: r.weight for r in policy.sections if not r.pinned}


def water_fill(
    weights: Mapping[str, float], caps: Mapping[str, int], given: dict[str, int], left: int
) -> None:
    """Share ``left`` by weight among the weighted sections still short of their cap.

    Adds to ``given`` in place, refilling as sections reach their cap, until
    ``left`` is spent or every weighted section holds its cap. ``caps`` and
    ``given`` name every section of ``weights``; the order of ``weights``
    is the order shares are computed in.
    """
    while left > 0:
        hungry = [s for s in weights if given[s] < caps[s]]
        if not hungry:
            return
        total_weight = sum(weights[s] for s in hungry)
        spent = 0
        for section in hungry:
            share = int(left * weights[section] / total_weight)
            grant = min(share, caps[section] - given[section])
            given[section] += grant
            spent += grant
        if spent == 0:
            _hand_out_remainder(hungry, weights, caps, given, left)
            return
        left -= spent


def _hand_out_remainder(
    hungry: list[str],
    weights: Mapping[str, float],
    caps: Mapping[str, int],
    given: dict[str, int],
    left: int,
) -> None:
    """Give the last few tokens one at a time, heaviest section first (ties by name)."""
    for section in sorted(hungry, key=lambda s: (-weights[s], s)):
        grant = min(left, caps[section] - given[section])
        given[section] += grant
        left -= grant
        if left == 0:
            return


def default_policy(total: int = 4_000) -> BudgetPolicy:
    """The specification's split at 4,000 tokens, scaled to ``total``.

    Identity and governance (``consciousness``) are pinned (up to 400
    tokens; a turn pins the owner's whole section before the split, see
    :mod:`prefrontal.bundle.pinning`, so the cap limits nothing it pins).
    Each other section is first served up to the specification's figure
    (goals 300, conversation 500, episodic 500, semantic 300, scratch 100,
    the agent's own working notes 1,500); what is left, and what empty
    sections leave, goes by weight to the sections that have more to give.
    500 tokens are reserved for the model's output and tool results.

    The policy of each recent total is built once and shared: policies are frozen.
    """
    return _default_policy(total)


DEFAULT_POLICIES_KEPT = 32
"""How many totals' default policies are kept built (a turn may ask for its own total)."""


@remembered(maxsize=DEFAULT_POLICIES_KEPT, holds_text=False)
def _default_policy(total: int) -> BudgetPolicy:
    """The default policy scaled to ``total``, built afresh."""
    policy = BudgetPolicy(
        total=4_000,
        reserve=500,
        sections=(
            SectionRule(section="consciousness", weight=1.0, maximum=400, pinned=True),
            SectionRule(section="frontal_cortex", weight=3.0, minimum=300, maximum=800),
            SectionRule(section="conversation", weight=5.0, minimum=500),
            SectionRule(section="episodic", weight=5.0, minimum=500),
            SectionRule(section="semantic", weight=3.0, minimum=300),
            SectionRule(section="scratch_page", weight=1.0, minimum=100, maximum=400),
            SectionRule(section="working_memory", weight=2.0, minimum=1_500, maximum=1_500),
        ),
    )
    return policy.with_total(total)
