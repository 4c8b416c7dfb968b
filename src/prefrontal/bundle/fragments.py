"""Section, Provenance and Fragment: the pieces a context is made of.

Every fragment carries its provenance (which store, which items, which phase,
what score, how many tokens, when), so that what an agent saw can always be
traced back to where it came from. A fragment cannot be built without one.
"""

from __future__ import annotations

from datetime import datetime
from typing import assert_never

from pydantic import ConfigDict, Field

from prefrontal.enums import FastStrEnum
from prefrontal.model_reads import FastReads

__all__ = ["SECTION_ORDER", "Fragment", "Frozen", "Provenance", "Section"]


class Section(FastStrEnum):
    """The sections of a context, in the order they are rendered."""

    CONSCIOUSNESS = "consciousness"
    FRONTAL_CORTEX = "frontal_cortex"
    CONVERSATION = "conversation"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    SCRATCH_PAGE = "scratch_page"
    WORKING_MEMORY = "working_memory"

    @property
    def heading(self) -> str:
        """The heading the section is rendered under (a new section without one is a type error)."""
        match self:
            case Section.CONSCIOUSNESS:
                return "Identity and rules"
            case Section.FRONTAL_CORTEX:
                return "Goals and pending work"
            case Section.CONVERSATION:
                return "Recent conversation"
            case Section.EPISODIC:
                return "Relevant memories"
            case Section.SEMANTIC:
                return "Relevant knowledge"
            case Section.SCRATCH_PAGE:
                return "Scratch page"
            case Section.WORKING_MEMORY:
                return "Working notes"
            case _:  # pragma: no cover - unreachable while every section has a case
                assert_never(self)


SECTION_ORDER: tuple[Section, ...] = tuple(Section)


class Frozen(FastReads):
    """Frozen, strict base."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Provenance(Frozen):
    """Where a fragment came from."""

    store: str = Field(min_length=1)
    item_ids: tuple[str, ...] = Field(min_length=1)
    phase: str = Field(min_length=1)
    score: float | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    version: str | None = None


class Fragment(Frozen):
    """One renderable piece of context.

    ``rank`` orders fragments for selection within their section (lower is
    more important); ``position`` orders the selected ones for rendering
    (chronological for conversation and memories). ``heading`` is a group
    header (such as a session date) rendered once before the first fragment
    of its group. ``role`` marks conversation turns for ``to_messages``.
    """

    section: Section
    text: str = Field(min_length=1)
    tokens: int = Field(ge=0)
    provenance: Provenance
    rank: int = 0
    position: float = 0.0
    heading: str | None = None
    role: str | None = None
    volatile: bool = False
    """Changes every turn whatever the stores hold (the clock): ``to_messages`` puts it
    at the end of the system message, so that the stable part before it can be cached."""
