"""Phase 2, ``consciousness``: identity, values and mandates; governance; mode; capabilities."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from prefrontal.bundle.models import Fragment, Section
from prefrontal.bundle.readiness import IDENTITY, RULES
from prefrontal.config import PhaseName
from prefrontal.object_cache import ObjectCache
from prefrontal.phases.ahead import taken
from prefrontal.phases.fragments import fragment, loaded, made_once
from prefrontal.phases.spec import PhaseSpec
from prefrontal.phases.state import PhaseOutcome, TurnState
from prefrontal.phases.store_calls import call_store, one_of
from prefrontal.stores.consciousness import AgentProfile

NAME: PhaseName = "consciousness"
CLOCK = "clock"
PARTS = (IDENTITY, RULES, CLOCK, "mode", "capabilities")
"""The profile's parts in rank order; the clock is rendered last."""
PROFILES_KEPT = 256
"""Profiles (with a requested mode) whose texts are remembered (see :func:`profile_texts`)."""
_TEXTS: ObjectCache[tuple[str, str, str, str]] = ObjectCache(PROFILES_KEPT)


def _lines(title: str, entries: tuple[str, ...]) -> str:
    """``Title: a; b; c``, entries as written; one ending a sentence is followed by a space."""
    if not entries:
        return ""
    joined = entries[0]
    for entry in entries[1:]:
        joined += (" " if joined.rstrip().endswith((".", "!", "?", ";")) else "; ") + entry
    return f"{title}: {joined}"


def identity_text(profile: AgentProfile) -> str:
    """Who the agent is, what it values, what it must do."""
    parts = [
        f"You are {profile.name}." + (f" {profile.description}" if profile.description else "")
    ]
    parts.append(_lines("Values", profile.values))
    parts.append(_lines("Mandates", profile.mandates))
    return "\n".join(p for p in parts if p)


def clock_text(turn: TurnState) -> str:
    """Today's date and time: its own fragment, the one part of identity that changes every turn."""
    return f"Today is {turn.context.started_at:%A %d %B %Y, %H:%M} UTC."


def governance_text(profile: AgentProfile) -> str:
    """Safety, access-control and escalation rules, one line each."""
    g = profile.governance
    parts = (
        _lines("Safety", g.safety_policies),
        _lines("Access control", g.access_control),
        _lines("Escalation", g.escalation),
    )
    return "\n".join(p for p in parts if p)


def mode_text(profile: AgentProfile, requested: str | None) -> str:
    """The current mode (the request's override when it names a known one) and its limits."""
    mode = profile.mode(requested) or profile.mode()
    if mode is None:
        return ""
    parts = [f"Mode: {mode.name}" + (f" ({mode.description})" if mode.description else "")]
    parts.append(_lines("Constraints", mode.constraints))
    parts.append(_lines("Allowed", mode.capabilities))
    return "\n".join(p for p in parts if p)


def capabilities_text(profile: AgentProfile) -> str:
    """Available capabilities with their versions and constraints."""
    entries = tuple(
        f"{c.name} v{c.version}" + (f" ({'; '.join(c.constraints)})" if c.constraints else "")
        for c in profile.capabilities
    )
    return _lines("Capabilities", entries)


def profile_texts(profile: AgentProfile, requested: str | None) -> tuple[str, str, str, str]:
    """Identity, rules, mode and capabilities texts, worked out once per profile and mode asked."""
    return _TEXTS(
        (profile,),
        requested,
        lambda: (
            identity_text(profile),
            governance_text(profile),
            mode_text(profile, requested),
            capabilities_text(profile),
        ),
    )


def read(turn: TurnState) -> Callable[[], Awaitable[object]]:
    """This phase's store read: the agent's profile (started ahead by phase 1 in graph mode)."""
    tenant = turn.tenant
    return lambda: call_store(turn, NAME, lambda: turn.stores.consciousness.get_profile(tenant))


async def run(turn: TurnState) -> PhaseOutcome:
    """Load the agent's profile and turn it into up to five pinned fragments (the clock last)."""
    found = await taken(turn.loading.get(NAME), read(turn))
    profile = one_of(found, AgentProfile, NAME)
    turn.profile = profile
    if profile is None:
        missing = f"no profile for agent {turn.tenant.agent_id!r}"
        return PhaseOutcome(degraded=True, warnings=(missing,))
    identity, rules, mode, capabilities = profile_texts(profile, turn.request.mode)
    texts = (identity, rules, clock_text(turn), mode, capabilities)
    fragments = [
        part_fragment(turn, profile, rank, text) for rank, text in enumerate(texts) if text
    ]
    turn.loads[Section.CONSCIOUSNESS] = fragments
    items, tokens = loaded(fragments)
    return PhaseOutcome(
        items_loaded=items, tokens_loaded=tokens, detail={"mode": profile.current_mode}
    )


def part_fragment(turn: TurnState, profile: AgentProfile, rank: int, text: str) -> Fragment:
    """The fragment of the profile's part at ``rank`` (of :data:`PARTS`), made once per text."""
    part = PARTS[rank]
    return made_once(
        turn,
        profile,
        (NAME, rank, text),
        lambda: fragment(
            turn,
            Section.CONSCIOUSNESS,
            text,
            store="consciousness",
            item_ids=(f"{profile.agent_id}#{part}",),
            phase=NAME,
            rank=rank,
            position=len(PARTS) if part == CLOCK else rank,
            updated_at=profile.updated_at,
            version=str(profile.version),
            volatile=part == CLOCK,
        ),
    )


SPEC = PhaseSpec(
    name=NAME,
    run=run,
    budget_ms=100,
    needs=("turn_context",),
    reads=frozenset({"loading"}),
    writes=frozenset({"loads", "profile"}),
)
