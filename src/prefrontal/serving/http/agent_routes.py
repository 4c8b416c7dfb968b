"""The agent's own state over HTTP: its profile, goals (actions, questions) and scratch page.

::

    GET    /v1/agents/{agent_id}/profile       the profile          (administer)
    PUT    /v1/agents/{agent_id}/profile       set it, versioned    (administer)
    GET    /v1/goals?user_id=                  a user's goals, actions and questions
    POST   /v1/goals                           add one
    PATCH  /v1/goals/{item_id}                 progress, status, priority, wording
    POST   /v1/goals/{item_id}/complete        done
    POST   /v1/goals/{item_id}/abandon         cancelled
    GET    /v1/scratch?user_id=                the active scratch page
    POST   /v1/scratch                         note an observation, a risk, a confirmation
    POST   /v1/scratch/{item_id}/resolve       confirmed, declined or resolved

Each route asks the one table of rights
(:data:`prefrontal.serving.rights.RULES`): reads need ``read``; adding,
changing, completing, abandoning or resolving needs ``write`` for a private
item and ``write_shared`` for a shared one (the item's own scope, looked up
before the change); the profile needs ``administer``. Every item written
records the caller's key as its author. A change over a version the caller
did not read is refused with 409 (problem+json), never applied silently.
Included in the application by :func:`agent_router`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request

from prefrontal.errors import ConflictError, NotFoundError
from prefrontal.ids import Id
from prefrontal.serving.agent_models import (
    GoalBody,
    GoalOut,
    GoalUpdateBody,
    ProfileBody,
    ProfileOut,
    ResolveBody,
    ScratchBody,
    ScratchOut,
    VersionBody,
)
from prefrontal.serving.http.auth import grant_of, require, tenant_for
from prefrontal.serving.http.problems import PROBLEM_JSON
from prefrontal.serving.http.responses import NOT_FOUND, WITH_BODY
from prefrontal.serving.keys import KeyGrant, KeyRing
from prefrontal.serving.rights import Operation, needed
from prefrontal.serving.service import Service
from prefrontal.stores.frontal_cortex import FrontalKind
from prefrontal.stores.tenancy import Tenant

T = TypeVar("T")

CONFLICT = (
    WITH_BODY
    | NOT_FOUND
    | {409: {"description": "Changed since the version read", "content": {PROBLEM_JSON: {}}}}
)
UserQuery = Annotated[Id, Query(description="The user acted for.")]
PathId = Annotated[Id, Path(description="An agent or item id.")]
LIST_LIMIT = 200


def _caller(request: Request) -> KeyGrant:
    keys: KeyRing = request.app.state.keys
    return grant_of(request, keys)


Caller = Annotated[KeyGrant, Depends(_caller)]


def _agent_tenant(grant: KeyGrant, agent_id: str, operation: Operation) -> Tenant:
    """The profile's tenant: the key's own agent, with the right ``operation`` needs."""
    if agent_id != grant.agent_id:
        raise HTTPException(403, f"This API key may not act for agent {agent_id!r}.")
    require(grant, needed(operation))
    return Tenant(agent_id=agent_id, user_id=grant.name)


async def _versioned(call: Callable[[], Awaitable[T]]) -> T:
    """``call()``, a version conflict as 409."""
    try:
        return await call()
    except ConflictError as error:
        raise HTTPException(409, str(error)) from None


# Every route is declared here, one nested function each, like app.py.
def agent_router(service: Service) -> APIRouter:  # noqa: C901
    """The routes of the agent's state over ``service``."""
    router = APIRouter(prefix="/v1", responses=CONFLICT)
    agents = service.orchestrator.agents

    @router.get("/agents/{agent_id}/profile", tags=["agents"])
    async def get_profile(agent_id: PathId, grant: Caller) -> ProfileOut:
        """The agent's profile: identity, values, rules, modes and capabilities."""
        profile = await agents.get_profile(_agent_tenant(grant, agent_id, Operation.READ_PROFILE))
        if profile is None:
            raise NotFoundError(f"agent {agent_id!r} has no profile")
        return ProfileOut.of(profile)

    @router.put("/agents/{agent_id}/profile", tags=["agents"])
    async def put_profile(agent_id: PathId, body: ProfileBody, grant: Caller) -> ProfileOut:
        """Set the agent's profile; the next turn of every user shows it."""
        tenant = _agent_tenant(grant, agent_id, Operation.SET_PROFILE)
        fields: dict[str, Any] = body.model_dump(exclude={"expected_version"})
        profile = await _versioned(
            lambda: agents.set_profile(tenant, expected_version=body.expected_version, **fields)
        )
        return ProfileOut.of(profile)

    @router.get("/goals", tags=["goals"])
    async def list_goals(user_id: UserQuery, grant: Caller) -> list[GoalOut]:
        """The user's goals, pending actions and open questions, newest change first."""
        require(grant, needed(Operation.READ_GOALS))
        tenant = tenant_for(grant, user_id)
        return [GoalOut.of(i) for i in await agents.list_items(tenant, limit=LIST_LIMIT)]

    @router.post("/goals", status_code=201, tags=["goals"])
    async def add_goal(body: GoalBody, grant: Caller) -> GoalOut:
        """Add a goal, a pending action or an open question."""
        require(grant, needed(Operation.ADD_GOAL, body.scope))
        tenant = tenant_for(grant, body.user_id)
        fields = body.model_dump(exclude={"user_id", "kind", "title", "item_id", "scope"})
        item = await _versioned(
            lambda: agents.add_item(
                tenant,
                FrontalKind(body.kind),
                body.title,
                item_id=body.item_id,
                scope=body.scope,
                author=grant.name,
                **fields,
            )
        )
        return GoalOut.of(item)

    @router.patch("/goals/{item_id}", tags=["goals"])
    async def update_goal(item_id: PathId, body: GoalUpdateBody, grant: Caller) -> GoalOut:
        """Change a goal's progress, status, priority or wording (a shared one needs
        ``write_shared``)."""
        tenant = await _goal_writer(grant, body.user_id, item_id)
        changes = body.changes()
        if not changes:
            raise HTTPException(422, "Nothing to change: give progress, status, priority or text.")
        item = await _versioned(
            lambda: agents.update_item(
                tenant,
                item_id,
                expected_version=body.expected_version,
                author=grant.name,
                **changes,
            )
        )
        return GoalOut.of(item)

    @router.post("/goals/{item_id}/complete", tags=["goals"])
    async def complete_goal(item_id: PathId, body: VersionBody, grant: Caller) -> GoalOut:
        """Mark a goal (action, question) done (a shared one needs ``write_shared``)."""
        tenant = await _goal_writer(grant, body.user_id, item_id)
        item = await _versioned(
            lambda: agents.complete(
                tenant, item_id, expected_version=body.expected_version, author=grant.name
            )
        )
        return GoalOut.of(item)

    @router.post("/goals/{item_id}/abandon", tags=["goals"])
    async def abandon_goal(item_id: PathId, body: VersionBody, grant: Caller) -> GoalOut:
        """Mark a goal (action, question) cancelled (a shared one needs ``write_shared``)."""
        tenant = await _goal_writer(grant, body.user_id, item_id)
        item = await _versioned(
            lambda: agents.abandon(
                tenant, item_id, expected_version=body.expected_version, author=grant.name
            )
        )
        return GoalOut.of(item)

    @router.get("/scratch", tags=["scratch"])
    async def list_scratch(user_id: UserQuery, grant: Caller) -> list[ScratchOut]:
        """The user's active scratch page, most important first."""
        require(grant, needed(Operation.READ_SCRATCH))
        tenant = tenant_for(grant, user_id)
        entries = await agents.active_entries(tenant, limit=LIST_LIMIT)
        return [ScratchOut.of(e) for e in entries]

    @router.post("/scratch", status_code=201, tags=["scratch"])
    async def add_scratch(body: ScratchBody, grant: Caller) -> ScratchOut:
        """Note an observation, a risk alert or a pending confirmation."""
        require(grant, needed(Operation.NOTE))
        tenant = tenant_for(grant, body.user_id)
        fields = body.model_dump(exclude={"user_id", "content", "kind", "item_id"})
        entry = await _versioned(
            lambda: agents.note(
                tenant,
                body.content,
                kind=body.kind,
                item_id=body.item_id,
                author=grant.name,
                **fields,
            )
        )
        return ScratchOut.of(entry)

    @router.post("/scratch/{item_id}/resolve", tags=["scratch"])
    async def resolve_scratch(item_id: PathId, body: ResolveBody, grant: Caller) -> ScratchOut:
        """Resolve an entry: ``confirmed``, ``declined`` or ``resolved`` (a shared one needs
        ``write_shared``)."""
        require(grant, needed(Operation.RESOLVE))
        tenant = tenant_for(grant, body.user_id)
        entry = await agents.get_entry(tenant, item_id)
        require(grant, needed(Operation.RESOLVE, entry.scope))
        resolved = await _versioned(
            lambda: agents.resolve(
                tenant,
                item_id,
                outcome=body.outcome,
                expected_version=body.expected_version,
                author=grant.name,
            )
        )
        return ScratchOut.of(resolved)

    async def _goal_writer(grant: KeyGrant, user_id: str, item_id: str) -> Tenant:
        """The tenant whose goal ``item_id`` ``grant`` may change: 403 without the right its
        scope needs, 404 when the tenant has no such item."""
        require(grant, needed(Operation.CHANGE_GOAL))
        tenant = tenant_for(grant, user_id)
        item = await agents.get_item(tenant, item_id)
        require(grant, needed(Operation.CHANGE_GOAL, item.scope))
        return tenant

    return router
