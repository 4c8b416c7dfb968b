"""The one table of rights: which :class:`~prefrontal.serving.keys.Right` each operation needs.

The HTTP routes and the MCP tools both ask :func:`needed` before they act,
and ``docs/security.md`` renders :data:`RULES` (:func:`rights_markdown`,
through the documentation's hook), so the code, the two servers and the
page cannot say different things. An operation on an existing item needs
the right of that item's scope: changing, completing or abandoning a
shared goal (action, question), resolving a shared scratch entry or
forgetting a shared memory needs ``write_shared``, exactly as writing one
does, because every user's turns show it.

Choosing a mode other than the profile's current one
(:data:`Operation.CHOOSE_MODE`) needs ``administer``, or a grant that names
the mode (``modes`` in the keys file, :func:`may_choose_mode`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from prefrontal.serving.keys import KeyGrant, Right
from prefrontal.stores.tenancy import Scope

__all__ = [
    "RULES",
    "Operation",
    "Rule",
    "may_choose_mode",
    "needed",
    "refusal",
    "rights_markdown",
]


class Operation(StrEnum):
    """Something a caller asks a server to do for a tenant."""

    START_TURN = "start a turn"
    CHOOSE_MODE = "start a turn in another mode than the agent's current one"
    END_TURN = "end a turn"
    READ_TRACE = "read a turn's trace"
    RECALL = "recall and search memories"
    LIST_MEMORIES = "list memories page by page and read a memory's history"
    REMEMBER = "remember a memory"
    CHANGE_MEMORY = "change or forget a memory"
    ERASE_USER = "erase everything of one user"
    READ_PROFILE = "read the agent's profile"
    SET_PROFILE = "set the agent's profile"
    READ_GOALS = "list goals, actions and questions"
    ADD_GOAL = "add a goal, action or question"
    ADD_AGENT_GOAL = "add a goal, action or question of the agent's own (`belongs_to: agent`)"
    CHANGE_GOAL = "change, complete or abandon a goal, action or question"
    READ_SCRATCH = "list the scratch page"
    NOTE = "note an observation, a risk or a confirmation"
    RESOLVE = "resolve a scratch entry"
    VIEW_TRACES = "see every turn of the agent in the trace viewer"
    VIEW_CONTEXT = "see the context as sent and the dropped items' text in the trace viewer"
    VIEW_AGENT = (
        "see the agent's page in the viewer: profile, mode, a user's goals, scratch page, "
        "memories and their history"
    )
    FORGET_IN_VIEWER = "forget a memory from its page in the viewer"


@dataclass(frozen=True)
class Rule:
    """The right ``operation`` needs on a private item and on a shared one, and where it is."""

    operation: Operation
    private: Right
    shared: Right
    http: tuple[str, ...]
    mcp: tuple[str, ...] = ()


def _same(
    operation: Operation, right: Right, http: tuple[str, ...], mcp: tuple[str, ...] = ()
) -> Rule:
    return Rule(operation, right, right, http, mcp)


def _scoped(operation: Operation, http: tuple[str, ...], mcp: tuple[str, ...] = ()) -> Rule:
    return Rule(operation, Right.WRITE, Right.WRITE_SHARED, http, mcp)


RULES: tuple[Rule, ...] = (
    _same(Operation.START_TURN, Right.READ, ("POST /v1/turns",), ("start_turn",)),
    _same(Operation.CHOOSE_MODE, Right.ADMINISTER, ("POST /v1/turns",)),
    _same(Operation.END_TURN, Right.WRITE, ("POST /v1/turns/{turn_id}/end",), ("end_turn",)),
    _same(Operation.READ_TRACE, Right.READ, ("GET /v1/turns/{turn_id}/trace",), ("trace",)),
    _same(Operation.RECALL, Right.READ, ("POST /v1/memories/search",), ("recall",)),
    _same(
        Operation.LIST_MEMORIES,
        Right.READ,
        ("GET /v1/memories", "GET /v1/memories/{item_id}/history"),
    ),
    _scoped(Operation.REMEMBER, ("POST /v1/memories",), ("remember",)),
    _scoped(
        Operation.CHANGE_MEMORY,
        ("PATCH /v1/memories/{item_id}", "DELETE /v1/memories/{item_id}"),
        ("forget",),
    ),
    _same(Operation.ERASE_USER, Right.ERASE, ("DELETE /v1/users/{user_id}",)),
    _same(Operation.READ_PROFILE, Right.ADMINISTER, ("GET /v1/agents/{agent_id}/profile",)),
    _same(
        Operation.SET_PROFILE,
        Right.ADMINISTER,
        ("PUT /v1/agents/{agent_id}/profile", "PATCH /v1/agents/{agent_id}/profile"),
    ),
    _same(Operation.READ_GOALS, Right.READ, ("GET /v1/goals",)),
    _scoped(Operation.ADD_GOAL, ("POST /v1/goals",), ("set_goal",)),
    _same(Operation.ADD_AGENT_GOAL, Right.ADMINISTER, ("POST /v1/goals",)),
    _scoped(
        Operation.CHANGE_GOAL,
        (
            "PATCH /v1/goals/{item_id}",
            "POST /v1/goals/{item_id}/complete",
            "POST /v1/goals/{item_id}/abandon",
        ),
        ("update_goal", "complete_goal"),
    ),
    _same(Operation.READ_SCRATCH, Right.READ, ("GET /v1/scratch",)),
    _scoped(
        Operation.NOTE, ("POST /v1/scratch",), ("note_observation", "note_risk", "ask_confirmation")
    ),
    _scoped(Operation.RESOLVE, ("POST /v1/scratch/{item_id}/resolve",), ("resolve_confirmation",)),
    _same(
        Operation.VIEW_TRACES,
        Right.ADMINISTER,
        ("GET /ui", "GET /ui/turns/{turn_id}", "GET /ui/compare", "POST /ui/signin"),
    ),
    _same(Operation.VIEW_CONTEXT, Right.ADMINISTER, ("GET /ui/turns/{turn_id}",)),
    _same(
        Operation.VIEW_AGENT,
        Right.ADMINISTER,
        (
            "GET /ui/agents/{agent_id}",
            "GET /ui/agents/{agent_id}/memories/{item_id}",
            "GET /ui/agents/{agent_id}/memories/{item_id}/forget",
        ),
    ),
    _same(
        Operation.FORGET_IN_VIEWER,
        Right.ADMINISTER,
        ("POST /ui/agents/{agent_id}/memories/{item_id}/forget",),
    ),
)
"""Every operation of the HTTP API and the MCP tools, once."""

_BY_OPERATION = {rule.operation: rule for rule in RULES}


def needed(operation: Operation, scope: Scope = Scope.PRIVATE) -> Right:
    """The right ``operation`` needs on an item of ``scope`` (a new one, or the one it changes)."""
    rule = _BY_OPERATION[operation]
    return rule.shared if scope is Scope.SHARED else rule.private


def refusal(grant: KeyGrant | None, right: Right) -> str | None:
    """Why a call with ``grant`` may not do what ``right`` allows, or ``None`` when it may.

    No grant (a server without keys, an application in process) may do
    everything. The sentence is what the MCP tools and the frameworks'
    memory tools tell the model.
    """
    if grant is None or grant.allows(right):
        return None
    return f"This API key lacks the {right.value!r} right this tool needs."


def may_choose_mode(grant: KeyGrant, requested: str | None, current: str | None) -> bool:
    """Whether ``grant`` may start a turn in mode ``requested`` while the agent is in ``current``.

    Asking for no mode, or the current one, is reading; any other mode needs
    the ``administer`` right or a grant whose ``modes`` name it.
    """
    if requested is None or requested == current:
        return True
    return grant.allows(needed(Operation.CHOOSE_MODE)) or requested in grant.modes


def rights_markdown() -> str:
    """The table of :data:`RULES` as Markdown: operation, rights, HTTP routes, MCP tools."""
    lines = [
        "| operation | private item | shared item | HTTP | MCP tool |",
        "|---|---|---|---|---|",
    ]
    for rule in RULES:
        http = "<br>".join(f"`{route}`" for route in rule.http)
        mcp = ", ".join(f"`{tool}`" for tool in rule.mcp) or "—"
        lines.append(
            f"| {rule.operation.value} | `{rule.private.value}` | `{rule.shared.value}` "
            f"| {http} | {mcp} |"
        )
    return "\n".join(lines) + "\n"
