"""The bodies of the agent-state endpoints and tools: profile, goals, scratch entries.

One set of models for the HTTP API (``/v1/agents/{agent_id}/profile``,
``/v1/goals``, ``/v1/scratch``) and the MCP tools the agent calls itself, so
that both check their arguments the same way. ``expected_version`` is the
version the caller read: a save over a newer one is refused (HTTP 409, a
tool error), never applied silently.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field, StrictBool

from prefrontal.agents.api import belongs_to
from prefrontal.handles import handle_of
from prefrontal.ids import NUMBER_ONLY, non_blank
from prefrontal.serving.models import Body, Id, Out
from prefrontal.stores.consciousness import AgentProfile, Capability, Governance, Mode
from prefrontal.stores.frontal_cortex import FrontalItem, FrontalKind, FrontalStatus, Owner
from prefrontal.stores.records import Label
from prefrontal.stores.scratch_page import Observation, ScratchKind
from prefrontal.stores.tenancy import Scope


def _text_only(value: Any) -> Any:
    if not isinstance(value, str | datetime):
        raise ValueError("must be a date and time in ISO 8601, not a number")
    return value


Share = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False), NUMBER_ONLY]
"""0 to 1: a number, never a string or a boolean."""
Instant = Annotated[datetime, BeforeValidator(_text_only)]
"""A date and time in ISO 8601 (a number is refused, as the schema says)."""

VersionNumber = Annotated[int, Field(ge=1), NUMBER_ONLY]
"""A record's version: an integer from 1 (never a string or a boolean)."""
Version = Field(
    default=None,
    description="The version you read; the change is refused (409) if the record has moved on. "
    "Omit it to change whatever version is stored now.",
)
Line = str
MAX_TITLE = 2_000
MAX_DETAIL = 20_000
Title = Annotated[str, non_blank(MAX_TITLE)]
"""A title: 1 to 2,000 characters, not only whitespace."""
Content = Annotated[str, non_blank(MAX_DETAIL)]
"""A scratch entry's text: not only whitespace."""
BelongsTo = Literal["user", "agent"]


class ProfileBody(Body):
    """The agent's whole profile: who it is, its values, rules, modes and capabilities.

    ``PUT`` replaces the profile with this body: a field left out is reset
    to its default. To change some fields and keep the rest, ``PATCH`` them.
    """

    name: str = Field(min_length=1, max_length=256, description="The agent's name.")
    description: str = Field(default="", max_length=20_000, description="Who the agent is.")
    values: tuple[Line, ...] = Field(default=(), max_length=100)
    mandates: tuple[Line, ...] = Field(default=(), max_length=100)
    governance: Governance = Field(
        default_factory=Governance, description="Rules kept whatever the request says."
    )
    modes: tuple[Mode, ...] = Field(default=(), max_length=64)
    current_mode: Label | None = None
    capabilities: tuple[Capability, ...] = Field(default=(), max_length=64)
    expected_version: VersionNumber | None = Version


class ProfileOut(Out):
    """The stored profile and its version."""

    agent_id: str
    name: str
    description: str
    values: tuple[str, ...]
    mandates: tuple[str, ...]
    governance: Governance
    modes: tuple[Mode, ...]
    current_mode: str | None
    capabilities: tuple[Capability, ...]
    version: int
    updated_at: datetime

    @classmethod
    def of(cls, profile: AgentProfile) -> ProfileOut:
        """The view of ``profile``."""
        return cls.model_validate(profile.model_dump())


class GoalBody(Body):
    """Add a goal, a pending action or an open question."""

    user_id: Id = Field(min_length=1, max_length=256, description="The user acted for.")
    title: Title = Field(description="What, in a line.")
    kind: Literal["goal", "action", "question"] = "goal"
    detail: str = Field(default="", max_length=MAX_DETAIL)
    priority: Share = Field(default=0.5, description="0 (low) to 1 (urgent).")
    owner: Owner = Field(default=Owner.AGENT, description="Who acts on it: `agent` or `user`.")
    blocking: StrictBool = Field(default=False, description="Whether other work waits on it.")
    belongs_to: BelongsTo = Field(
        default="user",
        description="`user`: the user's own. `agent`: the agent's own, shown to every user "
        "(needs `administer`).",
    )
    due_at: Instant | None = None
    tags: tuple[str, ...] = Field(default=(), max_length=50)
    scope: Scope = Field(default=Scope.PRIVATE, description="`private`, or `shared` with all.")
    item_id: Id | None = Field(default=None, min_length=1, max_length=256)


def _one_change(schema: dict[str, Any]) -> None:
    types = {
        "title": "string",
        "detail": "string",
        "priority": "number",
        "progress": "number",
        "blocking": "boolean",
        "due_at": "string",
        "tags": "array",
    }
    schema["anyOf"] = [
        {"required": [name], "properties": {name: {"type": kind}}} for name, kind in types.items()
    ] + [{"required": ["status"], "properties": {"status": {"type": "string"}}}]


class GoalUpdateBody(Body):
    """Change a goal's progress, status, priority, wording, blocking, due date or tags."""

    model_config = ConfigDict(json_schema_extra=_one_change)

    user_id: Id = Field(min_length=1, max_length=256)
    title: Title | None = None
    detail: str | None = Field(default=None, max_length=MAX_DETAIL)
    priority: Share | None = None
    progress: Share | None = Field(default=None, description="0 to 1 (done).")
    status: FrontalStatus | None = Field(
        default=None, description="`active`, `blocked`, `done` or `cancelled`."
    )
    blocking: StrictBool | None = None
    due_at: Instant | None = None
    tags: tuple[str, ...] | None = Field(default=None, max_length=50)
    expected_version: VersionNumber | None = Version

    def changes(self) -> dict[str, object]:
        """The fields given, as :meth:`AgentStateAPI.update_item` changes."""
        fields = ("title", "detail", "priority", "progress", "status", "blocking", "due_at", "tags")
        return {f: getattr(self, f) for f in fields if getattr(self, f) is not None}


class VersionBody(Body):
    """Complete, abandon, confirm or resolve: the user and optionally the version read."""

    user_id: Id = Field(min_length=1, max_length=256)
    expected_version: VersionNumber | None = Version


class GoalOut(Out):
    """A goal, action or question as stored, with every field a client can set."""

    item_id: str
    handle: str = Field(description="How the context names it (`#482913`); calls take it too.")
    kind: FrontalKind
    title: str
    detail: str
    priority: float
    progress: float
    status: FrontalStatus
    owner: Owner
    blocking: bool
    due_at: datetime | None
    tags: tuple[str, ...]
    scope: Scope
    author: str | None = Field(
        description="Who wrote it last: the writing key's name, `owner` (the agent file), "
        "`agent` (the agent's own tool call) or none (the application in process)."
    )
    belongs_to: BelongsTo
    version: int
    updated_at: datetime

    @classmethod
    def of(cls, item: FrontalItem) -> GoalOut:
        """The view of ``item``."""
        fields = item.model_dump(include=set(cls.model_fields))
        return cls.model_validate(
            fields | {"handle": handle_of(item), "belongs_to": belongs_to(item)}
        )


class ScratchBody(Body):
    """Note an observation or a risk, or ask the user for a confirmation."""

    user_id: Id = Field(min_length=1, max_length=256)
    content: Content = Field(description="What, in a sentence.")
    kind: ScratchKind = Field(
        default=ScratchKind.OBSERVATION,
        description="`observation`, `risk_alert`, `pending_confirmation` or `insight`.",
    )
    priority: Share = 0.5
    tags: tuple[str, ...] = Field(default=(), max_length=50)
    expires_at: Instant | None = None
    item_id: Id | None = Field(default=None, min_length=1, max_length=256)


class ResolveBody(VersionBody):
    """Resolve a scratch entry: ``confirmed``, ``declined`` or plain ``resolved``."""

    outcome: Literal["confirmed", "declined", "resolved"] = "resolved"


class ScratchOut(Out):
    """A scratch-page entry as stored."""

    item_id: str
    handle: str = Field(description="How the context names it (`#482913`); calls take it too.")
    kind: ScratchKind
    content: str
    priority: float
    owner: Owner
    scope: Scope
    author: str | None = Field(
        description="Who wrote it last: the writing key's name, `owner`, `agent` or none."
    )
    tags: tuple[str, ...]
    expires_at: datetime | None
    resolved: bool
    outcome: str | None
    belongs_to: BelongsTo
    version: int
    created_at: datetime

    @classmethod
    def of(cls, entry: Observation) -> ScratchOut:
        """The view of ``entry``."""
        fields = entry.model_dump(include=set(cls.model_fields))
        return cls.model_validate(
            fields | {"handle": handle_of(entry), "belongs_to": belongs_to(entry)}
        )
