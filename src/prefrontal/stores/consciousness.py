"""The consciousness store: who the agent is, the rules it keeps, the mode it is in.

One profile per agent, shared by all its users. Phase 2 reads it.
"""

from __future__ import annotations

from typing import Annotated, Protocol, runtime_checkable

from pydantic import Field, model_validator

from prefrontal.stores.records import (
    MAX_LABELS,
    Label,
    Labels,
    Line,
    Lines,
    NonEmptyId,
    Record,
    Timestamp,
    utc_now,
)
from prefrontal.stores.tenancy import Tenant


class Governance(Record):
    """Rules the agent must keep whatever the request says."""

    safety_policies: Lines = ()
    access_control: Lines = ()
    escalation: Lines = ()


class Mode(Record):
    """An operating mode and what it allows."""

    name: NonEmptyId
    description: Line = ""
    constraints: Lines = ()
    capabilities: Labels = ()


class Capability(Record):
    """A tool or skill the agent can use."""

    name: NonEmptyId
    version: Label = "1"
    constraints: Lines = ()


class AgentProfile(Record):
    """The agent's identity, values, mandates, governance, modes and capabilities."""

    agent_id: NonEmptyId
    name: NonEmptyId
    description: Annotated[str, Field(max_length=20_000)] = ""
    values: Lines = ()
    mandates: Lines = ()
    governance: Governance = Field(default_factory=Governance)
    modes: Annotated[tuple[Mode, ...], Field(max_length=MAX_LABELS)] = ()
    current_mode: Label | None = None
    capabilities: Annotated[tuple[Capability, ...], Field(max_length=MAX_LABELS)] = ()
    version: int = Field(default=1, ge=1)
    updated_at: Timestamp = Field(default_factory=utc_now)

    @model_validator(mode="after")
    def _current_mode_is_known(self) -> AgentProfile:
        names = {mode.name for mode in self.modes}
        if self.current_mode is not None and self.current_mode not in names:
            raise ValueError(f"current_mode {self.current_mode!r} is not one of {sorted(names)}")
        return self

    def mode(self, name: str | None = None) -> Mode | None:
        """The named mode, or the current one, or ``None``."""
        wanted = name or self.current_mode
        return next((mode for mode in self.modes if mode.name == wanted), None)


@runtime_checkable
class ConsciousnessStore(Protocol):
    """Holds one :class:`AgentProfile` per agent.

    Contract: ``get_profile`` returns the last profile put for
    ``tenant.agent_id`` (every user of the agent sees the same profile) or
    ``None``; it never returns another agent's profile.
    """

    async def get_profile(self, tenant: Tenant) -> AgentProfile | None:
        """The agent's profile, or ``None`` if it has none."""
        ...

    async def put_profile(self, profile: AgentProfile) -> None:
        """Create or replace the profile of ``profile.agent_id``."""
        ...
