"""The agent file: a declarative TOML description of an agent, applied idempotently.

::

    [agent]
    id = "atlas"
    name = "Atlas"
    description = "A launch-planning assistant."
    values = ["Say what you do not know."]
    mandates = ["Keep the launch plan current."]
    current_mode = "plan"

    [rules]                      # governance: kept whatever the request says
    safety_policies = ["Never share credentials."]
    escalation = ["Legal questions go to a human."]

    [[modes]]
    name = "plan"
    constraints = ["No purchases."]

    [[capabilities]]
    name = "calendar"

    [[goals]]                    # also [[actions]] and [[questions]]
    id = "launch"
    title = "Ship the December launch"
    priority = 0.8

An item without ``user`` is shared by every user of the agent (owned by
:data:`FILE_USER`); with ``user`` it is that user's own. Applying a file
twice changes nothing the second time: the profile is saved only when a
field differs, an item is created when missing and its declared fields
(title, detail, priority, tags...) are brought in line when they differ,
while what the work changed since (status, progress) stays.

An invalid file raises :class:`~prefrontal.errors.AgentFileError`, one line
naming the file, the line, the field and what is wrong.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, ValidationError

from prefrontal.agents.api import PROFILE_FIELDS, AgentStateAPI
from prefrontal.errors import AgentFileError
from prefrontal.stores.authors import OWNER
from prefrontal.stores.consciousness import AgentProfile, Capability, Governance, Mode
from prefrontal.stores.frontal_cortex import FrontalKind, Owner
from prefrontal.stores.records import (
    MAX_LABELS,
    Label,
    Labels,
    Lines,
    NonEmptyId,
    Record,
    Timestamp,
)
from prefrontal.stores.tenancy import Scope, Tenant

FILE_USER = "agent-file"
"""The user that owns the items a file declares without ``user`` (shared with every user)."""

_MAX_ITEMS = 1_000


class AgentSection(Record):
    """The ``[agent]`` table: who the agent is."""

    id: NonEmptyId
    name: NonEmptyId
    description: Annotated[str, Field(max_length=20_000)] = ""
    values: Lines = ()
    mandates: Lines = ()
    current_mode: Label | None = None


class FileItem(Record):
    """A ``[[goals]]``, ``[[actions]]`` or ``[[questions]]`` entry."""

    id: NonEmptyId
    title: str = Field(min_length=1, max_length=2_000)
    detail: str = Field(default="", max_length=20_000)
    priority: float = Field(default=0.5, ge=0.0, le=1.0)
    owner: Owner = Owner.AGENT
    blocking: bool = False
    due_at: Timestamp | None = None
    tags: Labels = ()
    user: NonEmptyId | None = None


class AgentFile(Record):
    """A whole agent file."""

    agent: AgentSection
    rules: Governance = Field(default_factory=Governance)
    modes: Annotated[tuple[Mode, ...], Field(max_length=MAX_LABELS)] = ()
    capabilities: Annotated[tuple[Capability, ...], Field(max_length=MAX_LABELS)] = ()
    goals: Annotated[tuple[FileItem, ...], Field(max_length=_MAX_ITEMS)] = ()
    actions: Annotated[tuple[FileItem, ...], Field(max_length=_MAX_ITEMS)] = ()
    questions: Annotated[tuple[FileItem, ...], Field(max_length=_MAX_ITEMS)] = ()

    def profile_fields(self) -> dict[str, Any]:
        """The profile this file declares, as :meth:`AgentStateAPI.set_profile` fields."""
        a = self.agent
        return {
            "name": a.name,
            "description": a.description,
            "values": a.values,
            "mandates": a.mandates,
            "governance": self.rules,
            "modes": self.modes,
            "current_mode": a.current_mode,
            "capabilities": self.capabilities,
        }

    def items(self) -> list[tuple[FrontalKind, FileItem]]:
        """Every declared item with its kind."""
        return [
            *((FrontalKind.GOAL, i) for i in self.goals),
            *((FrontalKind.ACTION, i) for i in self.actions),
            *((FrontalKind.QUESTION, i) for i in self.questions),
        ]


@dataclass
class ApplyReport:
    """What applying a file did: ``created``, ``updated`` and ``unchanged`` record names."""

    agent_id: str
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line for people."""
        return (
            f"agent {self.agent_id}: {len(self.created)} created, {len(self.updated)} updated, "
            f"{len(self.unchanged)} unchanged"
        )


def load(path: Path) -> AgentFile:
    """Read and check the agent file at ``path``; :class:`AgentFileError` if it is invalid."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise AgentFileError(f"{path}: cannot read: {error}") from None
    return parse(text, source=str(path))


def parse(text: str, *, source: str = "<agent file>") -> AgentFile:
    """Check the agent file ``text``; :class:`AgentFileError` naming line and field if invalid."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise AgentFileError(f"{source}: not TOML: {error}") from None
    try:
        parsed = AgentFile.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        raise _invalid(text, source, tuple(first["loc"]), first["msg"]) from None
    modes = [mode.name for mode in parsed.modes]
    current = parsed.agent.current_mode
    if current is not None and current not in modes:
        raise _invalid(
            text, source, ("agent", "current_mode"), f"{current!r} is not a mode {modes}"
        )
    return parsed


def _invalid(text: str, source: str, loc: tuple[int | str, ...], message: str) -> AgentFileError:
    where = ".".join(str(part) for part in loc) or "(top level)"
    line = locate(text, loc)
    at = f"{source}:{line}" if line is not None else source
    return AgentFileError(f"{at}: {where}: {message}")


_HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s*=")


def locate(text: str, loc: tuple[int | str, ...]) -> int | None:
    """The 1-based line of the field at pydantic location ``loc`` in TOML ``text``.

    The line of the key when it is there, else of its table's header (a
    missing field), else ``None``. Tables and arrays of tables are followed
    by their headers (``[agent]``, ``[[goals]]``); inline tables are not.
    """
    counts: dict[str, int] = {}
    table: tuple[int | str, ...] = ()
    header_line: dict[tuple[int | str, ...], int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            name = header.group(2).replace('"', "").replace("'", "").replace(" ", "")
            path: tuple[int | str, ...] = tuple(name.split("."))
            if header.group(1) == "[[":
                index = counts.get(name, 0)
                counts[name] = index + 1
                path = (*path, index)
            table = path
            header_line[table] = number
            continue
        key = _KEY.match(line)
        if key and (*table, key.group(1)) == loc[: len(table) + 1]:
            return number
    for cut in range(len(loc), 0, -1):
        if loc[:cut] in header_line:
            return header_line[loc[:cut]]
    return None


async def apply(api: AgentStateAPI, agent_file: AgentFile) -> ApplyReport:
    """Bring the stores in line with ``agent_file``; a second apply changes nothing."""
    agent_id = agent_file.agent.id
    report = ApplyReport(agent_id=agent_id)
    tenant = Tenant(agent_id=agent_id, user_id=FILE_USER)
    wanted = agent_file.profile_fields()
    current = await api.get_profile(tenant)
    declared = _profile_view(wanted)
    if current is None:
        await api.set_profile(tenant, expected_version=None, **wanted)
        report.created.append("profile")
    elif current.model_dump(include=set(PROFILE_FIELDS)) != declared:
        await api.set_profile(tenant, expected_version=current.version, **wanted)
        report.updated.append("profile")
    else:
        report.unchanged.append("profile")
    for kind, item in agent_file.items():
        await _apply_item(api, agent_id, kind, item, report)
    return report


def _profile_view(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` as a stored profile dumps them (models as dictionaries)."""
    return AgentProfile.model_validate({"agent_id": "x", **fields}).model_dump(
        include=set(PROFILE_FIELDS)
    )


_DECLARED = ("title", "detail", "priority", "owner", "blocking", "due_at", "tags")


async def _apply_item(
    api: AgentStateAPI, agent_id: str, kind: FrontalKind, item: FileItem, report: ApplyReport
) -> None:
    tenant = Tenant(agent_id=agent_id, user_id=item.user or FILE_USER)
    name = f"{kind.value}:{item.id}"
    declared: dict[str, Any] = {key: getattr(item, key) for key in _DECLARED}
    found = await api.find_item(tenant, item.id)
    if found is None:
        scope = Scope.PRIVATE if item.user else Scope.SHARED
        await api.add_item(tenant, kind, item_id=item.id, scope=scope, author=OWNER, **declared)
        report.created.append(name)
        return
    changes = {key: value for key, value in declared.items() if getattr(found, key) != value}
    if found.kind is not kind:
        raise AgentFileError(f"{name}: the id is already a {found.kind.value}")
    if not changes:
        report.unchanged.append(name)
        return
    await api.update_item(tenant, item.id, expected_version=found.version, author=OWNER, **changes)
    report.updated.append(name)
