"""The viewer's routes: an ``APIRouter`` to include in an application (``/ui``).

Pages are not part of the API's OpenAPI document (``include_in_schema=False``).
Every answer carries a strict Content-Security-Policy: nothing but this
server's own stylesheet loads, no script runs, no form posts elsewhere, and
no other site may frame a page.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from importlib.resources import files
from typing import Any
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Request
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.responses import HTMLResponse, RedirectResponse, Response

from prefrontal.serving.keys import KeyRing
from prefrontal.serving.ui import difference, views
from prefrontal.serving.ui.access import COOKIE, Access, Refused, Viewer
from prefrontal.serving.ui.agent_pages import AgentSource, add_agent_pages
from prefrontal.serving.ui.chart import latency_chart
from prefrontal.stores.traces import TraceQuery, TraceStore
from prefrontal.traces.models import TurnStatus, TurnTrace

PAGE = 50
"""Turns per page of the list."""

HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
STATIC = {"ui.css": "text/css; charset=utf-8"}
MAX_FORM_BYTES = 4_096

_templates = Environment(
    loader=PackageLoader("prefrontal.serving.ui", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_templates.globals.update(symbol=views.symbol, shown=views.shown)


def _page(template: str, status: int = 200, **values: Any) -> HTMLResponse:
    body = _templates.get_template(template).render(**values)
    return HTMLResponse(body, status_code=status, headers=HEADERS)


def _when(value: str | None) -> datetime | None:
    """An ISO date-time from a filter (UTC unless it has an offset); ``ValueError`` if not one."""
    if not value:
        return None
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _cursor(value: str | None) -> tuple[datetime, str] | None:
    """The keyset position ``started_at~turn_id`` a page continues after."""
    if not value:
        return None
    at, _, turn_id = value.rpartition("~")
    started = _when(at)
    if started is None or not turn_id:
        raise ValueError("not a page position")
    return started, turn_id


def ui_router(  # noqa: C901
    traces: Callable[[], TraceStore], keys: KeyRing | None, *, agents: AgentSource | None = None
) -> APIRouter:
    """The viewer over the trace store ``traces()`` returns.

    With ``agents``, also the agent pages (:mod:`prefrontal.serving.ui.agent_pages`).

    With ``keys``, a viewer is a key with the administer right and sees its
    own agent's turns only (a turn of another agent is "not found", 404);
    a key without the right is refused (403); without a key, a page asks to
    sign in. With ``keys=None`` (``prefrontal ui`` on loopback) everyone
    sees every agent's turns.
    """
    access = Access(keys)
    router = APIRouter(prefix="/ui", include_in_schema=False)

    def who(request: Request) -> Viewer | Response:
        try:
            viewer = access.viewer(request)
        except Refused:
            return _page("refused.html", 403, viewer=None, open=access.open)
        if viewer is None:
            return RedirectResponse("/ui/signin", status_code=303, headers=HEADERS)
        return viewer

    if agents is not None:
        add_agent_pages(
            router, agents, who=who, render=_page, headers=HEADERS, open_viewer=access.open
        )

    async def find(viewer: Viewer, turn_id: str) -> TurnTrace | None:
        query = TraceQuery(
            turn_id=turn_id, agent_id=viewer.agent_id, user_ids=viewer.users, limit=1
        )
        found = await traces().list(query)
        return found[0] if found else None

    def missing(viewer: Viewer, turn_id: str) -> Response:
        return _page("missing.html", 404, viewer=viewer, open=access.open, turn_id=turn_id)

    @router.get("/static/{name}")
    async def static(name: str) -> Response:
        if name not in STATIC:
            return Response("not found", status_code=404, headers=HEADERS)
        body = (files("prefrontal.serving.ui") / "static" / name).read_bytes()
        cached = {**HEADERS, "Cache-Control": "max-age=3600"}
        return Response(body, media_type=STATIC[name], headers=cached)

    @router.get("/signin")
    async def sign_in_form(request: Request) -> Response:
        if access.open:
            return RedirectResponse("/ui", status_code=303, headers=HEADERS)
        return _page("signin.html", viewer=None, open=False, error=None)

    @router.post("/signin")
    async def sign_in(request: Request) -> Response:
        body = await request.body()
        if access.open:
            return RedirectResponse("/ui", status_code=303, headers=HEADERS)
        form = parse_qs(body[:MAX_FORM_BYTES].decode("utf-8", "replace"))
        key = (form.get("key") or [""])[0].strip()
        try:
            signed = access.sign_in(key) if key else None
        except Refused:
            return _page("refused.html", 403, viewer=None, open=False)
        if signed is None:
            error = "That key is not valid."
            return _page("signin.html", 401, viewer=None, open=False, error=error)
        answer = RedirectResponse("/ui", status_code=303, headers=HEADERS)
        answer.set_cookie(
            COOKIE,
            signed[1],
            httponly=True,
            samesite="strict",
            path="/ui",
            secure=request.url.scheme == "https",
        )
        return answer

    @router.post("/signout")
    async def sign_out() -> Response:
        answer = RedirectResponse("/ui/signin", status_code=303, headers=HEADERS)
        answer.delete_cookie(COOKIE, path="/ui", httponly=True, samesite="strict")
        return answer

    @router.get("")
    async def turns(request: Request) -> Response:
        viewer = who(request)
        if not isinstance(viewer, Viewer):
            return viewer
        asked = {k: v.strip() for k, v in request.query_params.items() if v.strip()}
        fields = ("q", "agent", "user", "session", "status", "since", "until")
        filters = {k: asked.get(k, "") for k in fields}
        try:
            status = TurnStatus(filters["status"]) if filters["status"] else None
            query = TraceQuery(
                agent_id=viewer.agent_id or filters["agent"] or None,
                user_id=filters["user"] or None,
                user_ids=viewer.users,
                text=filters["q"] or None,
                session_id=filters["session"] or None,
                status=status,
                since=_when(filters["since"]),
                until=_when(filters["until"]),
                older_than=_cursor(asked.get("before")),
                limit=PAGE + 1,
            )
        except ValueError as error:
            return _page(
                "turns.html",
                400,
                viewer=viewer,
                open=access.open,
                filters=filters,
                rows=[],
                chart=None,
                more=None,
                error=str(error),
                paged=False,
            )
        found = await traces().list(query)
        rows, more = found[:PAGE], None
        if len(found) > PAGE:
            last = rows[-1]
            kept = {k: v for k, v in filters.items() if v}
            more = urlencode({**kept, "before": f"{last.started_at.isoformat()}~{last.turn_id}"})
        return _page(
            "turns.html",
            viewer=viewer,
            open=access.open,
            filters=filters,
            rows=rows,
            chart=latency_chart(rows),
            more=more,
            error=None,
            paged="before" in asked,
        )

    @router.get("/turns/{turn_id}")
    async def turn(request: Request, turn_id: str) -> Response:
        viewer = who(request)
        if not isinstance(viewer, Viewer):
            return viewer
        trace = await find(viewer, turn_id)
        if trace is None:
            return missing(viewer, turn_id)
        previous, following = await _neighbours(traces(), trace)
        return _page(
            "turn.html",
            viewer=viewer,
            open=access.open,
            trace=trace,
            waterfall=views.waterfall(trace.phases, trace.deadline_ms),
            steps=views.waterfall(trace.ending.steps, 0.0) if trace.ending else None,
            sections=views.sections(trace),
            fragments=views.fragments(trace),
            sent=views.sent(trace) if viewer.sees_context else None,
            overrun=views.overrun(trace),
            buffer=views.buffer(trace),
            previous=previous,
            following=following,
        )

    @router.get("/compare")
    async def compare(request: Request, a: str = "", b: str = "") -> Response:
        viewer = who(request)
        if not isinstance(viewer, Viewer):
            return viewer
        first = await find(viewer, a.strip())
        if first is None:
            return missing(viewer, a)
        second = await find(viewer, b.strip())
        if second is None:
            return missing(viewer, b)
        return _page(
            "compare.html",
            viewer=viewer,
            open=access.open,
            a=first,
            b=second,
            phases=views.phase_diffs(first, second),
            sections=views.section_diffs(first, second),
            said=difference.said(first, second),
            sent=difference.sent(first, second) if viewer.sees_context else None,
            fragments=difference.fragment_rows(first, second),
        )

    return router


async def _neighbours(store: TraceStore, trace: TurnTrace) -> tuple[str | None, str | None]:
    """The session's turn before ``trace`` and the one after it (ids), if any."""
    agent, session = trace.agent_id, trace.session_id
    position = (trace.started_at, trace.turn_id)
    before = await store.list(
        TraceQuery(agent_id=agent, session_id=session, older_than=position, limit=1)
    )
    after = await store.list(
        TraceQuery(
            agent_id=agent, session_id=session, newer_than=position, oldest_first=True, limit=1
        )
    )
    return (before[0].turn_id if before else None, after[0].turn_id if after else None)
