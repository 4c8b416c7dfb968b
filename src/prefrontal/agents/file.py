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

An item without ``user`` is the agent's own, shown to every user: the
agent's tools (and keys with ``write_shared``) advance, block and complete
it; with ``user`` it is that user's own. Applying a file twice changes
nothing the second time: the profile is saved only when a field differs, an
item is created when missing and its declared fields (title, detail,
priority, tags...) are brought in line when they differ, while what the work
changed since (status, progress) stays: ``status`` and ``progress`` in the
file set where a new item starts.

:func:`plan` says what applying would change, field by field, without
changing anything (``agent apply --dry-run``); ``apply(..., prune=True)``
also retires (cancels) the agent's open items the file no longer lists;
:func:`export` writes the agent's current profile and its own items as a
file that :func:`apply` reproduces exactly.

An invalid file raises :class:`~prefrontal.errors.AgentFileError`, one line
naming the file, the line, the field and what is wrong.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import tomlkit
from pydantic import Field, ValidationError

from prefrontal.agents.api import AGENT_HOLDER, PROFILE_FIELDS, AgentStateAPI, agent_tenant
from prefrontal.errors import AgentFileError
from prefrontal.stores.authors import OWNER
from prefrontal.stores.consciousness import AgentProfile, Capability, Governance, Mode
from prefrontal.stores.frontal_cortex import FrontalItem, FrontalKind, FrontalStatus, Owner
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
    status: FrontalStatus | None = None
    """Where a new item starts (``active`` when left out); an existing item keeps its own."""
    progress: float | None = Field(default=None, ge=0.0, le=1.0)
    """How far a new item starts (0 when left out); an existing item keeps its own."""


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
    """What applying a file did (or, planned, would do), by record name (``goal:launch``).

    ``diff`` holds one line per field that changes: ``~ goal:launch.title:
    'old' -> 'new'``, ``+ goal:launch`` for a new record, ``- goal:old`` for
    one retired.
    """

    agent_id: str
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    diff: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line for people."""
        retired = f", {len(self.retired)} retired" if self.retired else ""
        return (
            f"agent {self.agent_id}: {len(self.created)} created, {len(self.updated)} updated, "
            f"{len(self.unchanged)} unchanged{retired}"
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


async def apply(
    api: AgentStateAPI, agent_file: AgentFile, *, prune: bool = False, dry_run: bool = False
) -> ApplyReport:
    """Bring the stores in line with ``agent_file``; a second apply changes nothing.

    ``prune`` also retires (marks cancelled) the agent's open items the
    file does not list; ``dry_run`` changes nothing and reports what
    would change (see :func:`plan`).
    """
    agent_id = agent_file.agent.id
    report = ApplyReport(agent_id=agent_id)
    tenant = agent_tenant(agent_id)
    wanted = agent_file.profile_fields()
    current = await api.get_profile(tenant)
    declared = _profile_view(wanted)
    if current is None:
        report.created.append("profile")
        report.diff.append("+ profile")
        if not dry_run:
            await api.set_profile(tenant, expected_version=None, **wanted)
    else:
        stored = current.model_dump(include=set(PROFILE_FIELDS))
        if stored != declared:
            report.updated.append("profile")
            report.diff.extend(_field_diff("profile", stored, declared))
            if not dry_run:
                await api.set_profile(tenant, expected_version=current.version, **wanted)
        else:
            report.unchanged.append("profile")
    for kind, item in agent_file.items():
        await _apply_item(api, agent_id, kind, item, report, dry_run=dry_run)
    if prune:
        await _prune(api, agent_file, report, dry_run=dry_run)
    return report


async def plan(api: AgentStateAPI, agent_file: AgentFile, *, prune: bool = False) -> ApplyReport:
    """What :func:`apply` would change, field by field, changing nothing."""
    return await apply(api, agent_file, prune=prune, dry_run=True)


def _field_diff(name: str, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """``~ name.field: old -> new`` for every field whose value differs."""
    return [
        f"~ {name}.{key}: {_shown(old.get(key))} -> {_shown(new.get(key))}"
        for key in new
        if old.get(key) != new[key]
    ]


def _shown(value: Any) -> str:
    if isinstance(value, tuple | list):
        return repr([_plain(v) for v in value])
    return repr(_plain(value))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value.value if isinstance(value, FrontalStatus | Owner) else value


def _profile_view(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` as a stored profile dumps them (models as dictionaries)."""
    return AgentProfile.model_validate({"agent_id": "x", **fields}).model_dump(
        include=set(PROFILE_FIELDS)
    )


_DECLARED = ("title", "detail", "priority", "owner", "blocking", "due_at", "tags")
_STARTS = ("status", "progress")


async def _apply_item(
    api: AgentStateAPI,
    agent_id: str,
    kind: FrontalKind,
    item: FileItem,
    report: ApplyReport,
    *,
    dry_run: bool,
) -> None:
    tenant = Tenant(agent_id=agent_id, user_id=item.user) if item.user else agent_tenant(agent_id)
    name = f"{kind.value}:{item.id}" + (f"@{item.user}" if item.user else "")
    declared: dict[str, Any] = {key: getattr(item, key) for key in _DECLARED}
    found = await api.own_item(tenant, item.id)
    if found is None:
        report.created.append(name)
        report.diff.append(f"+ {name}")
        if dry_run:
            return
        starts = {key: getattr(item, key) for key in _STARTS if getattr(item, key) is not None}
        await api.add_item(
            tenant,
            kind,
            item_id=item.id,
            scope=Scope.PRIVATE,
            for_agent=item.user is None,
            author=OWNER,
            **declared,
            **starts,
        )
        return
    if found.kind is not kind:
        raise AgentFileError(f"{name}: the id is already a {found.kind.value}")
    changes = {key: value for key, value in declared.items() if getattr(found, key) != value}
    if not changes:
        report.unchanged.append(name)
        return
    report.updated.append(name)
    report.diff.extend(_field_diff(name, found.model_dump(include=set(changes)), changes))
    if not dry_run:
        await api.update_item(
            tenant, found.item_id, expected_version=found.version, author=OWNER, **changes
        )


async def _prune(
    api: AgentStateAPI, agent_file: AgentFile, report: ApplyReport, *, dry_run: bool
) -> None:
    """Retire the agent's own open items that ``agent_file`` does not list."""
    listed = {(kind, item.id) for kind, item in agent_file.items() if item.user is None}
    for found in await agent_items(api, agent_file.agent.id):
        if found.status in (FrontalStatus.DONE, FrontalStatus.CANCELLED):
            continue
        if (found.kind, found.item_id) in listed:
            continue
        name = f"{found.kind.value}:{found.item_id}"
        report.retired.append(name)
        report.diff.append(f"- {name}")
        if not dry_run:
            await api.abandon(agent_tenant(found.agent_id), found.item_id, author=OWNER)


async def agent_items(api: AgentStateAPI, agent_id: str) -> list[FrontalItem]:
    """The agent's own goals, actions and questions (not its users'), oldest first."""
    visible = await api.list_items(agent_tenant(agent_id), limit=1_000)
    own = [i for i in visible if i.user_id == AGENT_HOLDER]
    return sorted(own, key=lambda i: (i.created_at, i.item_id))


async def export(api: AgentStateAPI, agent_id: str) -> str:
    """The agent's profile and its own items as agent-file TOML that :func:`apply` reproduces.

    Users' own items are not part of it (they are the users' data).
    ``NotFoundError`` when the agent has no profile.
    """
    from prefrontal.errors import NotFoundError

    profile = await api.get_profile(agent_tenant(agent_id))
    if profile is None:
        raise NotFoundError(f"agent {agent_id!r} has no profile to export")
    data = profile.model_dump(mode="json", include=set(PROFILE_FIELDS))
    document = tomlkit.document()
    document.add(
        tomlkit.comment(f"Agent {agent_id}, exported at profile version {profile.version}.")
    )
    agent = {"id": agent_id, "name": data["name"], "description": data["description"]}
    agent |= {"values": data["values"], "mandates": data["mandates"]}
    if data["current_mode"] is not None:
        agent["current_mode"] = data["current_mode"]
    document["agent"] = agent
    document["rules"] = data["governance"]
    _array_of_tables(document, "modes", data["modes"])
    _array_of_tables(document, "capabilities", data["capabilities"])
    tables: dict[FrontalKind, list[dict[str, Any]]] = {k: [] for k in _KIND_TABLES}
    for item in await agent_items(api, agent_id):
        if item.kind in tables:
            tables[item.kind].append(_item_table(item))
    for kind, key in _KIND_TABLES.items():
        _array_of_tables(document, key, tables[kind])
    return tomlkit.dumps(document)


_KIND_TABLES = {
    FrontalKind.GOAL: "goals",
    FrontalKind.ACTION: "actions",
    FrontalKind.QUESTION: "questions",
}


def _item_table(item: FrontalItem) -> dict[str, Any]:
    dumped = item.model_dump(mode="json")
    table: dict[str, Any] = {"id": item.item_id}
    defaults = FileItem.model_fields
    for key in (*_DECLARED, *_STARTS):
        value = dumped[key]
        default = defaults[key].default
        if value is None or value == (default.value if hasattr(default, "value") else default):
            continue
        if key == "tags" and not value:
            continue
        if key == "status" and value == FrontalStatus.ACTIVE.value:
            continue
        if key == "progress" and value == 0.0:
            continue
        table[key] = value
    return table


def _array_of_tables(document: Any, key: str, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    array = tomlkit.aot()
    for row in rows:
        array.append(tomlkit.item({k: v for k, v in row.items() if v not in (None, [], "")}))
    document[key] = array
