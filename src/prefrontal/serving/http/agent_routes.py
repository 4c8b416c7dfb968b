"""The agent's own state over HTTP: its profile, goals (actions, questions) and scratch page.

::

    GET    /v1/agents/{agent_id}/profile       the profile                   (administer)
    PUT    /v1/agents/{agent_id}/profile       replace it whole, versioned   (administer)
    PATCH  /v1/agents/{agent_id}/profile       change the fields given       (administer)
    GET    /v1/goals?user_id=                  the goals, actions and questions a user sees
    POST   /v1/goals                           add one (the user's, or the agent's own)
    PATCH  /v1/goals/{item_id}                 progress, status, priority, wording...
    POST   /v1/goals/{item_id}/complete        done (again: no change)
    POST   /v1/goals/{item_id}/abandon         cancelled
    GET    /v1/scratch?user_id=                the active scratch page
    POST   /v1/scratch                         note an observation, a risk, a confirmation
    POST   /v1/scratch/{item_id}/resolve       confirmed, declined or resolved

``{item_id}`` is an item's id or the handle the context shows (``#482913``,
URL-encoded as ``%23482913``, or just ``482913``). Reads need the ``read``
right; changing a user's private item ``write``; adding or changing a
shared one (the agent's own included) ``write_shared``, looked up on the
item before the change; adding the agent's own item and the profile
``administer``: the one table of rights,
:data:`prefrontal.serving.rights.RULES`. Every item written records the
caller's key as its author. A change over a version the caller
did not read is refused with 409 (problem+json), never applied silently.
Included in the application by :func:`agent_router`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Protocol, TypeVar

from fastapi import APIRouter, Body, Depends, HTTPException, Path, Query, Request
from pydantic import ValidationError

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
from prefrontal.serving.http.responses import (
    CALLER,
    CONFLICT,
    INVALID_PARAMS,
    WITH_BODY,
    answers,
    not_found,
)
from prefrontal.serving.keys import KeyGrant, KeyRing
from prefrontal.serving.rights import Operation, needed
from prefrontal.serving.service import Service
from prefrontal.stores.frontal_cortex import FrontalItem, FrontalKind
from prefrontal.stores.scratch_page import Observation
from prefrontal.stores.tenancy import Tenant

T = TypeVar("T")


class _Close(Protocol):
    """``complete`` or ``abandon`` of :class:`~prefrontal.agents.AgentStateAPI`."""

    def __call__(
        self,
        tenant: Tenant,
        item_id: str | FrontalItem,
        *,
        expected_version: int | None = None,
        author: str | None = None,
    ) -> Awaitable[FrontalItem]: ...


UserQuery = Annotated[Id, Query(description="The user acted for.")]
AgentPath = Annotated[
    Id, Path(description="The agent whose profile this is: the one the API key acts for.")
]
GoalPath = Annotated[
    Id,
    Path(
        description="The goal's (action's, question's) `item_id`, or the handle the context "
        "shows: `%23482913` (`#482913` URL-encoded) or `482913`."
    ),
]
EntryPath = Annotated[
    Id,
    Path(
        description="The scratch entry's `item_id`, or the handle the context shows: "
        "`%23482913` (`#482913` URL-encoded) or `482913`."
    ),
]
NO_PROFILE = not_found("The agent has no profile yet (`PUT` one first)")
NO_GOAL = not_found("No goal, action or question by that id or handle visible to this user")
NO_ENTRY = not_found("No scratch entry by that id or handle visible to this user")
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
    """``call()``, a version conflict as 409, a refused value as 422."""
    try:
        return await call()
    except ConflictError as error:
        raise HTTPException(409, str(error)) from None
    except ValidationError as error:
        raise HTTPException(422, _first_error(error)) from None
    except ValueError as error:
        raise HTTPException(422, str(error)) from None


def _first_error(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def require_to_change(
    grant: KeyGrant, item: FrontalItem | Observation, operation: Operation
) -> None:
    """403 unless ``grant`` may do ``operation`` on ``item``: ``write_shared`` if it is shared,
    else ``write`` (:func:`~prefrontal.serving.rights.needed`)."""
    require(grant, needed(operation, item.scope))


PROFILE_PATCH = Body(
    media_type="application/merge-patch+json",
    description="A JSON merge patch (RFC 7396) of the profile's fields, and optionally "
    "`expected_version`: the fields named change, the rest stay; `null` resets a field.",
    openapi_examples={"switch mode": {"value": {"current_mode": "act", "expected_version": 3}}},
)


# Every route is declared here, one nested function each, like app.py.
def agent_router(service: Service) -> APIRouter:  # noqa: C901
    """The routes of the agent's state over ``service``."""
    router = APIRouter(prefix="/v1")
    agents = service.orchestrator.agents

    async def goal_to_change(
        grant: KeyGrant, user_id: str, item_id: str
    ) -> tuple[Tenant, FrontalItem]:
        """The goal ``item_id`` (id or handle) the user sees, once the key may change it.

        403 without ``change_goal``'s right (``write_shared`` for a shared
        goal, looked up on the item); 404 when the user sees no such item.
        """
        require(grant, needed(Operation.CHANGE_GOAL))
        tenant = tenant_for(grant, user_id)
        found = await agents.get_item(tenant, item_id)
        require_to_change(grant, found, Operation.CHANGE_GOAL)
        return tenant, found

    async def entry_to_change(
        grant: KeyGrant, user_id: str, item_id: str
    ) -> tuple[Tenant, Observation]:
        """The scratch entry ``item_id`` the user sees, once the key may resolve it."""
        require(grant, needed(Operation.RESOLVE))
        tenant = tenant_for(grant, user_id)
        found = await agents.get_entry(tenant, item_id)
        require_to_change(grant, found, Operation.RESOLVE)
        return tenant, found

    async def close_goal(
        item_id: str, body: VersionBody, grant: KeyGrant, close: _Close
    ) -> GoalOut:
        """``close`` (complete or abandon) the goal, versioned and authored by the key."""
        tenant, found = await goal_to_change(grant, body.user_id, item_id)
        item = await _versioned(
            lambda: close(tenant, found, expected_version=body.expected_version, author=grant.name)
        )
        return GoalOut.of(item)

    @router.get(
        "/agents/{agent_id}/profile",
        tags=["agents"],
        responses=answers(200, "The profile", INVALID_PARAMS, CALLER, NO_PROFILE),
    )
    async def get_profile(agent_id: AgentPath, grant: Caller) -> ProfileOut:
        """The agent's profile: identity, values, rules, modes and capabilities."""
        profile = await agents.get_profile(_agent_tenant(grant, agent_id, Operation.READ_PROFILE))
        if profile is None:
            raise NotFoundError(f"agent {agent_id!r} has no profile")
        return ProfileOut.of(profile)

    @router.put(
        "/agents/{agent_id}/profile",
        tags=["agents"],
        responses=answers(
            200, "The profile as stored, with its new version", WITH_BODY, CALLER, CONFLICT
        ),
    )
    async def put_profile(agent_id: AgentPath, body: ProfileBody, grant: Caller) -> ProfileOut:
        """Replace the agent's whole profile: a field left out is reset to its default.

        To change some fields and keep the others (a mode switch, one more
        rule), use ``PATCH``. The next turn of every user shows the profile.
        """
        tenant = _agent_tenant(grant, agent_id, Operation.SET_PROFILE)
        fields: dict[str, Any] = body.model_dump(exclude={"expected_version"})
        profile = await _versioned(
            lambda: agents.set_profile(tenant, expected_version=body.expected_version, **fields)
        )
        return ProfileOut.of(profile)

    @router.patch(
        "/agents/{agent_id}/profile",
        tags=["agents"],
        responses=answers(
            200,
            "The profile as changed, with its new version",
            WITH_BODY,
            CALLER,
            NO_PROFILE,
            CONFLICT,
        ),
    )
    async def patch_profile(
        agent_id: AgentPath,
        grant: Caller,
        patch: Annotated[dict[str, Any], PROFILE_PATCH],
    ) -> ProfileOut:
        """Change the profile fields the patch names, keep the rest (JSON merge patch).

        ``{"current_mode": "act"}`` switches the mode in one call; a mode
        that does not exist is refused with 422 naming the modes that do.
        """
        tenant = _agent_tenant(grant, agent_id, Operation.SET_PROFILE)
        changes = dict(patch)
        expected = changes.pop("expected_version", None)
        if expected is not None and (type(expected) is not int or expected < 1):
            raise HTTPException(422, "expected_version: must be an integer from 1")
        profile = await _versioned(
            lambda: agents.patch_profile(tenant, changes, expected_version=expected)
        )
        return ProfileOut.of(profile)

    @router.get(
        "/goals",
        tags=["goals"],
        responses=answers(
            200, "The goals, actions and questions, newest change first", INVALID_PARAMS, CALLER
        ),
    )
    async def list_goals(user_id: UserQuery, grant: Caller) -> list[GoalOut]:
        """The user's goals, pending actions and open questions, newest change first."""
        require(grant, needed(Operation.READ_GOALS))
        tenant = tenant_for(grant, user_id)
        return [GoalOut.of(i) for i in await agents.list_items(tenant, limit=LIST_LIMIT)]

    @router.post(
        "/goals",
        status_code=201,
        tags=["goals"],
        responses=answers(
            201, "The item as stored, with its id and handle", WITH_BODY, CALLER, CONFLICT
        ),
    )
    async def add_goal(body: GoalBody, grant: Caller) -> GoalOut:
        """Add a goal, a pending action or an open question (the user's, or the agent's own)."""
        for_agent = body.belongs_to == "agent"
        if for_agent:
            require(grant, needed(Operation.ADD_AGENT_GOAL))
        require(grant, needed(Operation.ADD_GOAL, body.scope))
        tenant = tenant_for(grant, body.user_id)
        exclude = {"user_id", "kind", "title", "item_id", "scope", "belongs_to"}
        fields = body.model_dump(exclude=exclude)
        item = await _versioned(
            lambda: agents.add_item(
                tenant,
                FrontalKind(body.kind),
                body.title,
                item_id=body.item_id,
                scope=body.scope,
                for_agent=for_agent,
                author=grant.name,
                **fields,
            )
        )
        return GoalOut.of(item)

    @router.patch(
        "/goals/{item_id}",
        tags=["goals"],
        responses=answers(200, "The item as changed", WITH_BODY, CALLER, NO_GOAL, CONFLICT),
    )
    async def update_goal(item_id: GoalPath, body: GoalUpdateBody, grant: Caller) -> GoalOut:
        """Change a goal's progress, status, priority, wording, blocking, due date or tags."""
        tenant, found = await goal_to_change(grant, body.user_id, item_id)
        changes = body.changes()
        if not changes:
            raise HTTPException(422, "Nothing to change: give progress, status, priority or text.")
        item = await _versioned(
            lambda: agents.update_item(
                tenant,
                found,
                expected_version=body.expected_version,
                author=grant.name,
                **changes,
            )
        )
        return GoalOut.of(item)

    @router.post(
        "/goals/{item_id}/complete",
        tags=["goals"],
        responses=answers(200, "The item, done", WITH_BODY, CALLER, NO_GOAL, CONFLICT),
    )
    async def complete_goal(item_id: GoalPath, body: VersionBody, grant: Caller) -> GoalOut:
        """Mark a goal (action, question) done; one already done is returned unchanged."""
        return await close_goal(item_id, body, grant, agents.complete)

    @router.post(
        "/goals/{item_id}/abandon",
        tags=["goals"],
        responses=answers(200, "The item, cancelled", WITH_BODY, CALLER, NO_GOAL, CONFLICT),
    )
    async def abandon_goal(item_id: GoalPath, body: VersionBody, grant: Caller) -> GoalOut:
        """Mark a goal (action, question) cancelled; one already cancelled is returned unchanged."""
        return await close_goal(item_id, body, grant, agents.abandon)

    @router.get(
        "/scratch",
        tags=["scratch"],
        responses=answers(200, "The active entries, most important first", INVALID_PARAMS, CALLER),
    )
    async def list_scratch(user_id: UserQuery, grant: Caller) -> list[ScratchOut]:
        """The user's active scratch page, most important first."""
        require(grant, needed(Operation.READ_SCRATCH))
        tenant = tenant_for(grant, user_id)
        entries = await agents.active_entries(tenant, limit=LIST_LIMIT)
        return [ScratchOut.of(e) for e in entries]

    @router.post(
        "/scratch",
        status_code=201,
        tags=["scratch"],
        responses=answers(
            201, "The entry as stored, with its id and handle", WITH_BODY, CALLER, CONFLICT
        ),
    )
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

    @router.post(
        "/scratch/{item_id}/resolve",
        tags=["scratch"],
        responses=answers(200, "The entry, resolved", WITH_BODY, CALLER, NO_ENTRY, CONFLICT),
    )
    async def resolve_scratch(item_id: EntryPath, body: ResolveBody, grant: Caller) -> ScratchOut:
        """Resolve an entry: ``confirmed``, ``declined`` or ``resolved``."""
        tenant, found = await entry_to_change(grant, body.user_id, item_id)
        entry = await _versioned(
            lambda: agents.resolve(
                tenant,
                found,
                outcome=body.outcome,
                expected_version=body.expected_version,
                author=grant.name,
            )
        )
        return ScratchOut.of(entry)

    return router
