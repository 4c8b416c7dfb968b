"""The viewer's agent page, a user's memories with their history, and forgetting one.

- ``GET /ui/agents/{agent_id}``: the profile and current mode; with
  ``?user=``, that user's goals, actions and questions, scratch page (each
  with its handle and author) and memories, newest first, a keyset page at
  a time (:meth:`~prefrontal.memory.api.MemoryAPI.list`), filtered by kind,
  store and scope;
- ``GET /ui/agents/{agent_id}/memories/{item_id}?user=``: one memory and
  its history of versions (:meth:`~prefrontal.memory.api.MemoryAPI.history`);
- ``GET .../forget``: the confirmation step, a form with a token
  (:mod:`prefrontal.serving.ui.forms`); ``POST .../forget``: forgets the
  memory when the token is the session's, else refuses it (403).

Who may see them is the viewer's rule (:mod:`prefrontal.serving.ui.access`):
a key with ``administer``, for its own agent only (another agent's page is
"not found"); a key without it sees none of it. Every user's memories are
read under that user's tenancy: its own and the agent's shared ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from prefrontal.agents import AgentStateAPI
from prefrontal.errors import NotFoundError
from prefrontal.handles import handle_of
from prefrontal.ids import is_blank
from prefrontal.memory.api import MemoryAPI
from prefrontal.memory.recall import STORE_NAMES, MemoryStoreName
from prefrontal.serving.ui.access import Viewer
from prefrontal.serving.ui.forms import FORM_COOKIE, FormTokens, new_session
from prefrontal.stores.long_term import MemoryKind
from prefrontal.stores.tenancy import Scope, Tenant

MEMORY_PAGE = 50
"""Memories per page of the agent page."""
MAX_FORM_BYTES = 4_096
PROFILE_USER = "viewer"
"""The user id the profile is read as (the profile is the agent's, whoever reads it)."""


@dataclass(frozen=True)
class AgentSource:
    """Where the agent pages read from: the memory API and the agent-state API."""

    memory: Callable[[], MemoryAPI]
    agents: Callable[[], AgentStateAPI]


Render = Callable[..., HTMLResponse]


def add_agent_pages(  # noqa: C901 (one nested function per route, as in the router)
    router: APIRouter,
    source: AgentSource,
    *,
    who: Callable[[Request], Viewer | Response],
    render: Render,
    headers: Mapping[str, str],
    open_viewer: bool,
) -> None:
    """Add the agent page, the memory page and the forget form to the viewer's ``router``.

    ``who`` names the viewer (or answers for it: a sign-in redirect, a
    refusal); ``render`` renders a template with the viewer's headers.
    """
    tokens = FormTokens()

    def page(template: str, viewer: Viewer, status: int = 200, **values: Any) -> HTMLResponse:
        return render(template, status, viewer=viewer, open=open_viewer, **values)

    def missing(viewer: Viewer, what: str) -> Response:
        return page("agent_missing.html", viewer, 404, what=what)

    def allowed(viewer: Viewer, agent_id: str) -> bool:
        return viewer.agent_id is None or viewer.agent_id == agent_id

    @router.get("/agents/{agent_id}")
    async def agent(request: Request, agent_id: str) -> Response:
        viewer = who(request)
        if not isinstance(viewer, Viewer):
            return viewer
        if not allowed(viewer, agent_id):
            return missing(viewer, f"agent {agent_id}")
        asked = {k: v.strip() for k, v in request.query_params.items() if v.strip()}
        profile = await source.agents().get_profile(Tenant(agent_id=agent_id, user_id=PROFILE_USER))
        user = asked.get("user", "")
        values: dict[str, Any] = {
            "agent_id": agent_id,
            "profile": profile,
            "user": user,
            "filters": {k: asked.get(k, "") for k in ("kind", "store", "scope")},
            "kinds": [k.value for k in MemoryKind],
            "stores": STORE_NAMES,
            "forgot": asked.get("forgot", ""),
            "goals": [],
            "entries": [],
            "memories": [],
            "more": None,
            "paged": "cursor" in asked,
            "error": None,
            "handle": handle_of,
        }
        if not user:
            return page("agent.html", viewer, **values)
        try:
            tenant = Tenant(agent_id=agent_id, user_id=user)
            filters = _filters(values["filters"])
            listed = await source.memory().list(
                tenant, limit=MEMORY_PAGE, after=asked.get("cursor"), **filters
            )
        except ValueError as error:
            return page("agent.html", viewer, 400, **(values | {"error": str(error)}))
        values["goals"] = await source.agents().list_items(tenant)
        values["entries"] = await source.agents().active_entries(tenant)
        values["memories"] = listed.memories
        if listed.next_cursor is not None:
            kept = {k: v for k, v in values["filters"].items() if v}
            values["more"] = urlencode({"user": user, **kept, "cursor": listed.next_cursor})
        return page("agent.html", viewer, **values)

    async def found(viewer: Viewer, agent_id: str, item_id: str, user: str) -> Any:
        """The memory ``user`` sees by ``item_id`` and its history, or a "not found" page."""
        if not allowed(viewer, agent_id) or is_blank(user):
            return missing(viewer, f"memory {item_id}")
        tenant = Tenant(agent_id=agent_id, user_id=user)
        try:
            item = await source.memory().get(tenant, item_id)
            history = await source.memory().history(tenant, item_id)
        except (NotFoundError, ValueError):
            return missing(viewer, f"memory {item_id}")
        if item is None:
            return missing(viewer, f"memory {item_id}")
        return tenant, item, history

    @router.get("/agents/{agent_id}/memories/{item_id}")
    async def memory(request: Request, agent_id: str, item_id: str, user: str = "") -> Response:
        viewer = who(request)
        if not isinstance(viewer, Viewer):
            return viewer
        shown = await found(viewer, agent_id, item_id, user.strip())
        if isinstance(shown, Response):
            return shown
        _, item, history = shown
        return page(
            "memory.html",
            viewer,
            agent_id=agent_id,
            user=user.strip(),
            item=item,
            store=history[-1].store,
            history=list(reversed(history)),
        )

    @router.get("/agents/{agent_id}/memories/{item_id}/forget")
    async def confirm(request: Request, agent_id: str, item_id: str, user: str = "") -> Response:
        viewer = who(request)
        if not isinstance(viewer, Viewer):
            return viewer
        shown = await found(viewer, agent_id, item_id, user.strip())
        if isinstance(shown, Response):
            return shown
        _, item, _ = shown
        session = tokens.session(request)
        fresh = None
        if session is None:
            fresh = new_session()
            session = f"{FORM_COOKIE}={fresh}"
        token = tokens.token(session, _action(agent_id, item_id, user.strip()))
        answer = page(
            "forget.html", viewer, agent_id=agent_id, user=user.strip(), item=item, token=token
        )
        if fresh is not None:
            answer.set_cookie(
                FORM_COOKIE,
                fresh,
                httponly=True,
                samesite="strict",
                path="/ui",
                secure=request.url.scheme == "https",
            )
        return answer

    @router.post("/agents/{agent_id}/memories/{item_id}/forget")
    async def forget(request: Request, agent_id: str, item_id: str) -> Response:
        body = await request.body()
        viewer = who(request)
        if not isinstance(viewer, Viewer):
            return render("refused.html", 403, viewer=None, open=open_viewer)
        form = parse_qs(body[:MAX_FORM_BYTES].decode("utf-8", "replace"))
        user = (form.get("user") or [""])[0].strip()
        presented = (form.get("token") or [""])[0]
        if not tokens.valid(request, _action(agent_id, item_id, user), presented):
            return page("forged.html", viewer, 403, agent_id=agent_id)
        shown = await found(viewer, agent_id, item_id, user)
        if isinstance(shown, Response):
            return shown
        _, item, _ = shown
        owner = Tenant(agent_id=agent_id, user_id=item.user_id)
        await source.memory().forget(owner, item_id)
        where = f"/ui/agents/{agent_id}?" + urlencode({"user": user, "forgot": item_id})
        return RedirectResponse(where, status_code=303, headers=dict(headers))


def _action(agent_id: str, item_id: str, user: str) -> str:
    """What a forget form does, to what: the token is bound to it."""
    return f"forget\x1f{agent_id}\x1f{user}\x1f{item_id}"


def _filters(asked: Mapping[str, str]) -> dict[str, Any]:
    """The list's filters from the page's query (``ValueError`` for one that names nothing)."""
    store: MemoryStoreName | None = None
    if asked["store"]:
        if asked["store"] not in STORE_NAMES:
            raise ValueError(f"store must be one of {', '.join(STORE_NAMES)}")
        store = "semantic" if asked["store"] == "semantic" else "episodic"
    return {
        "kinds": [MemoryKind(asked["kind"])] if asked["kind"] else None,
        "store": store,
        "scope": Scope(asked["scope"]) if asked["scope"] else None,
    }
