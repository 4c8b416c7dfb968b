"""The HTTP API: an ASGI application (FastAPI) over a :class:`~prefrontal.serving.service.Service`.

Resources (all under ``/v1/``, each needing an API key; see :mod:`.auth`)::

    POST   /v1/turns                      start a turn: the assembled context
    POST   /v1/turns/{turn_id}/end        end it with the assistant's reply
    GET    /v1/turns/{turn_id}/trace      its phases, statuses and timings
    POST   /v1/memories                   remember
    POST   /v1/memories/search            recall (gated by a session's working memory)
    PATCH  /v1/memories/{item_id}         change content or importance
    DELETE /v1/memories/{item_id}         forget
    DELETE /v1/users/{user_id}            erase everything of one user

the trace viewer's pages under ``/ui`` (:mod:`prefrontal.serving.ui`; a key
with the administer right), and, without a key, ``/healthz`` (the process
answers), ``/readyz`` (the stores answer; 503 while they do not),
``/metrics`` (Prometheus text, when the ``prometheus`` extra is installed)
and ``/openapi.json``. Errors are
``application/problem+json`` (:mod:`.problems`); bodies over the size limit
are refused before they are read (:mod:`.limits`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

import structlog
from fastapi import Depends, FastAPI, Path, Query, Request
from pydantic import BaseModel
from starlette.responses import JSONResponse, Response

from prefrontal.errors import NotFoundError
from prefrontal.serving.echo import MAX_ID_CHARS, quoted
from prefrontal.serving.http.auth import grant_of, require, tenant_for
from prefrontal.serving.http.limits import DEFAULT_MAX_BODY_BYTES, BodyLimit
from prefrontal.serving.http.metrics import Metrics
from prefrontal.serving.http.problems import PROBLEM_JSON, install, problem
from prefrontal.serving.http.rights import may_change, right_to_write
from prefrontal.serving.keys import KeyGrant, KeyRing, Right
from prefrontal.serving.models import (
    EndTurnBody,
    EndTurnOut,
    ErasureOut,
    ForgetOut,
    MemoryOut,
    RecallOut,
    RememberBody,
    SearchBody,
    StartTurnBody,
    TraceOut,
    TurnOut,
    UpdateBody,
)
from prefrontal.serving.service import Service
from prefrontal.serving.ui import ui_router
from prefrontal.serving.version import package_version
from prefrontal.turn import TurnRequest

_log = structlog.get_logger("prefrontal.serving")

ERRORS = {
    status: {"description": description, "content": {PROBLEM_JSON: {}}}
    for status, description in (
        (400, "Malformed JSON"),
        (401, "No API key, or an unknown one"),
        (403, "The key may not act for this agent or user"),
        (413, "Body over the size limit"),
        (422, "Invalid fields"),
    )
}
NOT_FOUND = {404: {"description": "Nothing of this user by that id", "content": {PROBLEM_JSON: {}}}}

UserQuery = Annotated[
    str, Query(min_length=1, max_length=MAX_ID_CHARS, description="The user acted for.")
]
AgentQuery = Annotated[
    str | None, Query(max_length=MAX_ID_CHARS, description="Optional: the API key's agent.")
]
PathId = Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS)]
"""A turn, memory or user id in a path: bounded before any work."""


def caller(request: Request) -> KeyGrant:
    """The grant of the request's API key (401 without a valid one)."""
    keys: KeyRing = request.app.state.keys
    return grant_of(request, keys)


Caller = Annotated[KeyGrant, Depends(caller)]


class Health(BaseModel):
    """The process or its stores answer."""

    status: str


# Every route is declared here, one nested function each: long, but flat.
def create_app(  # noqa: C901
    service: Service,
    keys: KeyRing,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    metrics: Metrics | None = None,
) -> FastAPI:
    """The HTTP API over ``service``, authorising callers with ``keys``.

    The orchestrator is entered for the application's lifetime: leaving it,
    when the application shuts down (after uvicorn has let the requests in
    flight finish), closes the stores.
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with service.orchestrator:
            yield

    app = FastAPI(
        title="prefrontal",
        summary="An LLM agent's working memory, assembled at the start of every turn.",
        version=package_version(),
        lifespan=lifespan,
        responses=ERRORS,  # type: ignore[arg-type]
    )
    install(app)
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)

    app.state.keys = keys
    app.include_router(ui_router(lambda: service.stores.traces, keys))

    @app.post("/v1/turns", tags=["turns"])
    async def start_turn(body: StartTurnBody, grant: Caller) -> TurnOut:
        """Start a turn: assemble the working memory for the user's message within the budget."""
        tenant = tenant_for(grant, body.user_id, body.agent_id)
        require(grant, Right.READ)
        request = TurnRequest(
            agent_id=tenant.agent_id,
            **body.model_dump(exclude={"agent_id"}),
        )
        return await service.start_turn(request)

    @app.post("/v1/turns/{turn_id}/end", tags=["turns"], responses=NOT_FOUND)  # type: ignore[arg-type]
    async def end_turn(turn_id: PathId, body: EndTurnBody, grant: Caller) -> EndTurnOut:
        """End a turn: record the assistant's reply as the session's history (idempotent)."""
        tenant = tenant_for(grant, body.user_id, body.agent_id)
        require(grant, Right.WRITE)
        return await service.end_turn(
            tenant, turn_id, body.reply, tool_calls=body.tool_calls, outcome=body.outcome
        )

    @app.get("/v1/turns/{turn_id}/trace", tags=["turns"], responses=NOT_FOUND)  # type: ignore[arg-type]
    async def trace(
        turn_id: PathId, grant: Caller, user_id: UserQuery, agent_id: AgentQuery = None
    ) -> TraceOut:
        """A turn's trace: each phase's status, timing and what it loaded."""
        tenant = tenant_for(grant, user_id, agent_id)
        require(grant, Right.READ)
        return await service.trace(tenant, turn_id)

    @app.post("/v1/memories", status_code=201, tags=["memories"])
    async def remember(body: RememberBody, grant: Caller) -> MemoryOut:
        """Remember something: a fact or preference (semantic) or an event (episodic).

        A shared memory needs the key's ``write_shared`` right, a private one ``write``;
        the memory records the key's name as its author."""
        tenant = tenant_for(grant, body.user_id, body.agent_id)
        require(grant, right_to_write(body.scope))
        return await service.remember(tenant, body, author=grant.name)

    @app.post("/v1/memories/search", tags=["memories"])
    async def search(body: SearchBody, grant: Caller) -> RecallOut:
        """Recall memories; with a session, only when its working memory lacks the topic."""
        tenant = tenant_for(grant, body.user_id, body.agent_id)
        require(grant, Right.READ)
        return await service.recall(
            tenant, body.query, top_k=body.top_k, session_id=body.session_id
        )

    @app.patch("/v1/memories/{item_id}", tags=["memories"], responses=NOT_FOUND)  # type: ignore[arg-type]
    async def update(item_id: PathId, body: UpdateBody, grant: Caller) -> MemoryOut:
        """Change a memory's content or importance (a shared one, whoever wrote it, with the
        ``write_shared`` right)."""
        tenant = tenant_for(grant, body.user_id, body.agent_id)
        shared = await may_change(service, grant, tenant, item_id)
        return await service.update(
            tenant, item_id, content=body.content, importance=body.importance, shared=shared
        )

    @app.delete("/v1/memories/{item_id}", tags=["memories"], responses=NOT_FOUND)  # type: ignore[arg-type]
    async def forget(
        item_id: PathId, grant: Caller, user_id: UserQuery, agent_id: AgentQuery = None
    ) -> ForgetOut:
        """Forget a memory (a shared one, whoever wrote it, with the ``write_shared`` right)."""
        tenant = tenant_for(grant, user_id, agent_id)
        shared = await may_change(service, grant, tenant, item_id)
        forgotten = await service.forget(tenant, item_id, shared=shared)
        if not forgotten.forgotten:
            raise NotFoundError(f"no memory {quoted(item_id)} for this user")
        return forgotten

    @app.delete("/v1/users/{user_id}", tags=["users"])
    async def erase(user_id: PathId, grant: Caller, agent_id: AgentQuery = None) -> ErasureOut:
        """Erase everything the agent holds of one user, in every store."""
        tenant = tenant_for(grant, user_id, agent_id)
        require(grant, Right.ERASE)
        return await service.erase(tenant)

    @app.get("/healthz", tags=["health"])
    async def healthz() -> Health:
        """The process answers."""
        return Health(status="ok")

    @app.get("/readyz", tags=["health"], responses={503: {"description": "Stores unreachable"}})
    async def readyz() -> Response:
        """The stores answer (503 while they do not)."""
        try:
            await service.check_ready()
        except Exception as error:
            _log.warning("not_ready", error=repr(error))
            return problem(503, "The memory stores are not reachable.")
        return JSONResponse({"status": "ready"})

    if metrics is not None:
        exposition = metrics

        @app.get("/metrics", tags=["health"], include_in_schema=False)
        async def prometheus() -> Response:
            """Turn, phase and buffer metrics in Prometheus text format."""
            body, content_type = exposition.render()
            return Response(body, media_type=content_type)

    return app
