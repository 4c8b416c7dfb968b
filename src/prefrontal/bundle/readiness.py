"""Whether a bundle is fit to hand to the router, and if not, why.

A turn always returns context; it is *ready for the router* only when that
context holds what an agent must never run without: its identity, and its
rules whenever it has any. An empty context because stores failed is not
ready either, nor is a turn whose budget was below the floor of the owner's
pinned section (:mod:`prefrontal.bundle.pinning`): it delivered no data.
"""

from __future__ import annotations

from prefrontal.bundle.models import ContextBundle, Section

IDENTITY = "identity"
"""The part of the agent's profile that says who it is (``<agent>#identity``)."""
RULES = "governance"
"""The part of the agent's profile that holds its rules (``<agent>#governance``)."""


def profile_parts(bundle: ContextBundle) -> set[str]:
    """The parts of the agent's profile (``identity``, ``governance``, ...) the bundle holds."""
    fragments = bundle.section(Section.CONSCIOUSNESS)
    return {item.rsplit("#", 1)[-1] for f in fragments for item in f.provenance.item_ids}


NO_PROFILE = (
    "the agent has no profile (apply an agent file with `prefrontal agent apply`,"
    " or set one with orchestrator.agents.set_profile)"
)
"""Why the identity is missing when the consciousness store answered with no profile."""


def not_ready(
    bundle: ContextBundle | None,
    *,
    has_rules: bool,
    stores_failed: bool,
    identity_cause: str | None = None,
    below_floor: str | None = None,
) -> list[str]:
    """Why ``bundle`` is not ready for the router (empty: it is).

    ``has_rules``: the agent's profile holds rules, so the context must too;
    ``stores_failed``: a loading phase failed or timed out;
    ``identity_cause``: why the profile was not loaded, if it was not (no
    profile, the store failed), appended to the identity's reason;
    ``below_floor``: why no data was delivered, when the budget is below the
    floor of the owner's pinned section.
    """
    if bundle is None:
        return ["no context was assembled"]
    reasons = []
    parts = profile_parts(bundle)
    if IDENTITY not in parts:
        cause = f": {identity_cause}" if identity_cause else ""
        reasons.append(f"the agent's identity is not in the context{cause}")
    if has_rules and RULES not in parts:
        reasons.append("the agent's rules are not in the context")
    if below_floor is not None:
        reasons.append(below_floor)
    if bundle.total_tokens == 0 and stores_failed:
        reasons.append("the context is empty because stores failed")
    return reasons
