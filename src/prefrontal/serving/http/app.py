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
from fastapi import Depends, FastAPI, Path, Query, Request, Security
from fastapi.security import APIKeyHeader, HTTPBearer
from pydantic import BaseModel, Field
from starlette.responses import JSONResponse, Response

from prefrontal.errors import NotFoundError
from prefrontal.ids import Id
from prefrontal.serving.echo import quoted
from prefrontal.serving.http.agent_routes import agent_router
from prefrontal.serving.http.auth import grant_of, require, tenant_for
from prefrontal.serving.http.limits import DEFAULT_MAX_BODY_BYTES, BodyLimit
from prefrontal.serving.http.memory_pages import add_memory_pages
from prefrontal.serving.http.metrics import Metrics
from prefrontal.serving.http.openapi import truthful_openapi
from prefrontal.serving.http.problems import install, problem
from prefrontal.serving.http.responses import (
    AT_LIMIT,
    CALLER,
    INVALID_PARAMS,
    NOT_READY,
    WITH_BODY,
    answers,
    not_found,
    problem_answer,
)
from prefrontal.serving.http.rights import check_mode, may_change
from prefrontal.serving.http.unexpected import CatchUnexpected
from prefrontal.serving.keys import KeyGrant, KeyRing
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
from prefrontal.serving.readiness import agents_not_ready
from prefrontal.serving.rights import Operation, needed
from prefrontal.serving.service import Service
from prefrontal.serving.ui import ui_router
from prefrontal.serving.ui.agent_pages import AgentSource
from prefrontal.serving.version import package_version
from prefrontal.stores.vector_search import vector_search
from prefrontal.turn import TurnRequest

_log = structlog.get_logger("prefrontal.serving")

UserQuery = Annotated[Id, Query(description="The user acted for.")]
AgentQuery = Annotated[Id | None, Query(description="Optional: the API key's agent.")]
TurnPath = Annotated[Id, Path(description="The id `POST /v1/turns` returned.")]
ItemPath = Annotated[Id, Path(description="The memory's `item_id`.")]
UserPath = Annotated[Id, Path(description="The user whose memory is erased.")]

BEARER = HTTPBearer(auto_error=False, description="An API key: `Authorization: Bearer <key>`.")
API_KEY = APIKeyHeader(name="X-API-Key", auto_error=False, description="An API key.")


def caller(
    request: Request,
    _bearer: Annotated[object, Security(BEARER)] = None,
    _api_key: Annotated[object, Security(API_KEY)] = None,
) -> KeyGrant:
    """The grant of the request's API key (401 without a valid one).

    The two security parameters put the schemes in the OpenAPI document; the
    key itself is read by :func:`~prefrontal.serving.http.auth.grant_of`.
    """
    keys: KeyRing = request.app.state.keys
    return grant_of(request, keys)


Caller = Annotated[KeyGrant, Depends(caller)]


class Health(BaseModel):
    """The process answers."""

    status: str = Field(description="`ok`.")


class Readiness(BaseModel):
    """The stores answer; the agents whose turns cannot be ready for the router, and why."""

    status: str = Field(description="`ready`.")
    agents_not_ready: dict[str, str] = Field(
        description="Each agent a key acts for whose turns cannot be ready (no profile), "
        "with the reason; empty when every one can be."
    )


NO_TURN = not_found("No turn by that id for this user")
ENDED_OTHERWISE = problem_answer(409, "The turn was already ended with another reply")
NO_MEMORY = not_found("No memory (or message of a turn) by that id for this user")


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
    )
    install(app)
    app.add_middleware(CatchUnexpected)
    app.add_middleware(BodyLimit, max_bytes=max_body_bytes)
    truthful_openapi(app)

    app.state.keys = keys
    app.include_router(agent_router(service))
    add_memory_pages(app, service)
    pages = AgentSource(lambda: service.orchestrator.memory, lambda: service.orchestrator.agents)
    app.include_router(ui_router(lambda: service.stores.traces, keys, agents=pages))

    @app.post(
        "/v1/turns",
        tags=["turns"],
        responses=answers(
            200,
            "The turn: its assembled context (`text`, `fragments`), whether it is "
            "`ready_for_router`, and what each phase did",
            WITH_BODY,
            CALLER,
            AT_LIMIT,
        ),
    )
    async def start_turn(body: StartTurnBody, grant: Caller) -> TurnOut:
        """Start a turn: assemble the working memory for the user's message within the budget."""
        tenant = tenant_for(grant, body.user_id, body.agent_id)
        require(grant, needed(Operation.START_TURN))
        await check_mode(service, grant, tenant, body.mode)
        request = TurnRequest(
            agent_id=tenant.agent_id,
            **body.model_dump(exclude={"agent_id"}),
        )
        return await service.start_turn(request)

    @app.post(
        "/v1/turns/{turn_id}/end",
        tags=["turns"],
        responses=answers(
            200,
            "The turn ended: the messages and memories it wrote (for a retry with the same "
            "reply, `written` is false)",
            WITH_BODY,
            CALLER,
            NO_TURN,
            ENDED_OTHERWISE,
        ),
    )
    async def end_turn(turn_id: TurnPath, body: EndTurnBody, grant: Caller) -> EndTurnOut:
        """End a turn: record the assistant's reply as the session's history (idempotent)."""
        tenant = tenant_for(grant, body.user_id, body.agent_id)
        require(grant, needed(Operation.END_TURN))
        return await service.end_turn(
            tenant, turn_id, body.reply, tool_calls=body.tool_calls, outcome=body.outcome
        )

    @app.get(
        "/v1/turns/{turn_id}/trace",
        tags=["turns"],
        responses=answers(200, "The turn's trace, phase by phase", INVALID_PARAMS, CALLER, NO_TURN),
    )
    async def trace(
        turn_id: TurnPath, grant: Caller, user_id: UserQuery, agent_id: AgentQuery = None
    ) -> TraceOut:
        """A turn's trace: each phase's status, timing and what it loaded."""
        tenant = tenant_for(grant, user_id, agent_id)
        require(grant, needed(Operation.READ_TRACE))
        return await service.trace(tenant, turn_id)

    @app.post(
        "/v1/memories",
        status_code=201,
        tags=["memories"],
        responses=answers(201, "The memory as stored, with its id", WITH_BODY, CALLER),
    )
    async def remember(body: RememberBody, grant: Caller) -> MemoryOut:
        """Remember something: a fact or preference (semantic) or an event (episodic).

        A shared memory needs the key's ``write_shared`` right, a private one ``write``;
        the memory records the key's name as its author."""
        tenant = tenant_for(grant, body.user_id, body.agent_id)
        require(grant, needed(Operation.REMEMBER, body.scope))
        return await service.remember(tenant, body, author=grant.name)

    @app.post(
        "/v1/memories/search",
        tags=["memories"],
        responses=answers(
            200, "The memories recalled, best first (none when not needed)", WITH_BODY, CALLER
        ),
    )
    async def search(body: SearchBody, grant: Caller) -> RecallOut:
        """Recall memories; with a session, only when its working memory lacks the topic."""
        tenant = tenant_for(grant, body.user_id, body.agent_id)
        require(grant, needed(Operation.RECALL))
        return await service.recall(
            tenant, body.query, top_k=body.top_k, session_id=body.session_id
        )

    @app.patch(
        "/v1/memories/{item_id}",
        tags=["memories"],
        responses=answers(200, "The memory as changed", WITH_BODY, CALLER, NO_MEMORY),
    )
    async def update(item_id: ItemPath, body: UpdateBody, grant: Caller) -> MemoryOut:
        """Change a memory's content or importance (a shared one, whoever wrote it, with the
        ``write_shared`` right)."""
        tenant = tenant_for(grant, body.user_id, body.agent_id)
        shared = await may_change(service, grant, tenant, item_id)
        return await service.update(
            tenant,
            item_id,
            content=body.content,
            importance=body.importance,
            shared=shared,
            author=grant.name,
        )

    @app.delete(
        "/v1/memories/{item_id}",
        tags=["memories"],
        responses=answers(200, "The memory forgotten", INVALID_PARAMS, CALLER, NO_MEMORY),
    )
    async def forget(
        item_id: ItemPath, grant: Caller, user_id: UserQuery, agent_id: AgentQuery = None
    ) -> ForgetOut:
        """Forget a memory (a shared one, whoever wrote it, with the ``write_shared`` right),
        or one message of a turn by the id ``end_turn`` returned (``<turn>:user``,
        ``<turn>:reply``): it leaves the conversation, its summary and working memory too."""
        tenant = tenant_for(grant, user_id, agent_id)
        shared = await may_change(service, grant, tenant, item_id)
        forgotten = await service.forget(tenant, item_id, shared=shared)
        if not forgotten.forgotten:
            raise NotFoundError(f"no memory {quoted(item_id)} for this user")
        return forgotten

    @app.delete(
        "/v1/users/{user_id}",
        tags=["users"],
        responses=answers(200, "What was erased, counted per store", INVALID_PARAMS, CALLER),
    )
    async def erase(user_id: UserPath, grant: Caller, agent_id: AgentQuery = None) -> ErasureOut:
        """Erase everything the agent holds of one user, in every store."""
        tenant = tenant_for(grant, user_id, agent_id)
        require(grant, needed(Operation.ERASE_USER))
        return await service.erase(tenant)

    @app.get("/healthz", tags=["health"], responses=answers(200, "The process answers"))
    async def healthz() -> Health:
        """The process answers."""
        return Health(status="ok")

    @app.head(
        "/healthz",
        tags=["health"],
        response_class=Response,
        responses={200: {"description": "The process answers"}},
    )
    async def healthz_head() -> Response:
        """The process answers (no body)."""
        return Response(status_code=200)

    @app.get(
        "/readyz",
        tags=["health"],
        response_model=Readiness,
        responses=answers(200, "The stores answer", NOT_READY),
    )
    async def readyz() -> Response:
        """The stores answer (503 while they do not), which agents cannot be ready, and why.

        ``agents_not_ready`` names each agent a key acts for whose turns
        cannot be ready for the router (no profile), with the reason; when
        no agent can be, the answer is 503. ``vector_search`` says where each
        store's vector search runs (pgvector, or the process cache).
        """
        try:
            await service.check_ready()
            agents = {grant.agent_id for grant in keys.grants}
            not_ready = await agents_not_ready(service.stores, agents)
        except Exception as error:
            _log.warning("not_ready", error=repr(error))
            return problem(503, "The memory stores are not reachable.")
        if agents and len(not_ready) == len(agents):
            listed = "; ".join(f"{agent}: {why}" for agent, why in not_ready.items())
            return problem(503, f"No agent can be ready: {listed}")
        body = {
            "status": "ready",
            "agents_not_ready": not_ready,
            "vector_search": vector_search(service.stores),
        }
        return JSONResponse(body)

    if metrics is not None:
        exposition = metrics

        @app.get("/metrics", tags=["health"], include_in_schema=False)
        async def prometheus() -> Response:
            """Turn, phase and buffer metrics in Prometheus text format."""
            body, content_type = exposition.render()
            return Response(body, media_type=content_type)

    return app
