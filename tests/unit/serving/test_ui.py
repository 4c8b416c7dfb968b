"""The trace viewer's pages in process: access, escaping, headers, filters and keyset paging."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from prefrontal.cli.app import app as cli
from prefrontal.serving.keys import KeyGrant, KeyRing, Right, hash_key
from prefrontal.serving.ui import ui_router, views
from prefrontal.serving.ui.access import COOKIE
from prefrontal.serving.ui.local import local_app
from prefrontal.stores import sqlite
from prefrontal.stores.memory.traces import InMemoryTraceStore
from prefrontal.stores.set import Stores
from prefrontal.testing.conformance.base import ALICE, BOB, STRANGER, at
from prefrontal.testing.conformance.sessions import trace
from prefrontal.traces.models import ErrorRecord, PhaseRecord, PhaseStatus, TurnStatus

ADMIN = "pf_unit_admin"
PLAIN = "pf_unit_plain"
ALIEN = "pf_unit_alien_admin"


def ring() -> KeyRing:
    every = tuple(Right)
    return KeyRing(
        [
            KeyGrant(
                name="admin",
                sha256=hash_key(ADMIN),
                agent_id=ALICE.agent_id,
                users=("*",),
                rights=every,
            ),
            KeyGrant(name="plain", sha256=hash_key(PLAIN), agent_id=ALICE.agent_id, users=("*",)),
            KeyGrant(
                name="alien",
                sha256=hash_key(ALIEN),
                agent_id=STRANGER.agent_id,
                users=("*",),
                rights=every,
            ),
        ]
    )


def cut_phase() -> PhaseRecord:
    return PhaseRecord(
        name="episodic",
        index=5,
        status=PhaseStatus.TIMEOUT,
        started_ms=10.0,
        duration_ms=390.0,
        budget_ms=150.0,
        attempts=2,
        errors=(ErrorRecord(type="DeadlineExceeded", message="cut at the 400 ms deadline"),),
        warnings=("cut at the 400 ms deadline",),
    )


def filled() -> InMemoryTraceStore:
    """120 of Alice's turns a minute apart over two sessions, one of Bob's, one of a stranger's."""
    store = InMemoryTraceStore(keep=None)

    async def put() -> None:
        for i in range(120):
            await store.put(trace(f"t{i:03d}", started_at=at(i), session_id=f"s{i % 2}"))
        bobs = trace(
            "bobs",
            BOB,
            started_at=at(200),
            status=TurnStatus.DEGRADED,
            user_input="<script>alert(1)</script>",
        )
        await store.put(bobs.model_copy(update={"phases": (cut_phase(),), "deadline_ms": 400.0}))
        await store.put(trace("theirs", STRANGER, started_at=at(201), user_input="their plans"))

    anyio.run(put)
    return store


@pytest.fixture
def store() -> InMemoryTraceStore:
    return filled()


def client_of(store: InMemoryTraceStore, keys: KeyRing | None = None) -> TestClient:
    app = FastAPI()
    app.include_router(ui_router(lambda: store, keys))
    return TestClient(app, follow_redirects=False)


@pytest.fixture
def client(store: InMemoryTraceStore) -> Iterator[TestClient]:
    with client_of(store, ring()) as c:
        yield c


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def turn_ids(html: str) -> list[str]:
    return re.findall(r'href="/ui/turns/([^"]+)" class="mono"', html)


def test_without_a_key_every_page_asks_to_sign_in(client: TestClient) -> None:
    for path in ("/ui", "/ui/turns/t001", "/ui/compare?a=t001&b=t002"):
        answer = client.get(path)
        assert answer.status_code == 303
        assert answer.headers["location"] == "/ui/signin"
    form = client.get("/ui/signin")
    assert form.status_code == 200 and 'name="key"' in form.text


def test_signing_in_sets_a_strict_httponly_cookie_that_never_holds_the_key(
    client: TestClient,
) -> None:
    answer = client.post("/ui/signin", data={"key": ADMIN})
    assert answer.status_code == 303 and answer.headers["location"] == "/ui"
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/ui" in cookie
    assert ADMIN not in cookie and hash_key(ADMIN) in cookie
    assert client.get("/ui").status_code == 200
    assert client.post("/ui/signout").status_code == 303
    client.cookies.clear()
    assert client.get("/ui").status_code == 303


def test_a_forged_or_unknown_sign_in_is_refused(client: TestClient) -> None:
    client.cookies.set(COOKIE, f"{hash_key(ADMIN)}.{'0' * 64}", path="/ui")
    assert client.get("/ui").status_code == 303
    client.cookies.clear()
    wrong = client.post("/ui/signin", data={"key": "pf_not_a_key"})
    assert wrong.status_code == 401 and "not valid" in wrong.text
    assert "pf_not_a_key" not in wrong.text and "set-cookie" not in wrong.headers


def test_a_key_without_the_administer_right_is_refused(client: TestClient) -> None:
    assert client.get("/ui", headers=bearer(PLAIN)).status_code == 403
    answer = client.post("/ui/signin", data={"key": PLAIN})
    assert answer.status_code == 403 and "set-cookie" not in answer.headers


def test_a_key_sees_only_its_agents_turns(client: TestClient) -> None:
    mine = client.get("/ui", headers=bearer(ADMIN))
    assert "theirs" not in turn_ids(mine.text) and "bobs" in turn_ids(mine.text)
    assert 'name="agent"' not in mine.text
    forced = client.get("/ui?agent=agent-2", headers=bearer(ADMIN))
    assert "theirs" not in turn_ids(forced.text)
    refused = client.get("/ui/turns/theirs", headers=bearer(ADMIN))
    assert refused.status_code == 404 and "their plans" not in refused.text
    compared = client.get("/ui/compare?a=t001&b=theirs", headers=bearer(ADMIN))
    assert compared.status_code == 404
    theirs = client.get("/ui/turns/theirs", headers=bearer(ALIEN))
    assert theirs.status_code == 200 and "their plans" in theirs.text
    assert client.get("/ui/turns/t001", headers=bearer(ALIEN)).status_code == 404


def test_pages_escape_trace_text_and_send_a_strict_policy(client: TestClient) -> None:
    page = client.get("/ui/turns/bobs", headers=bearer(ADMIN))
    assert "<script>" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy
    assert "frame-ancestors 'none'" in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    assert "<script" not in client.get("/ui", headers=bearer(ADMIN)).text


def test_a_cut_phase_says_so_and_why(client: TestClient) -> None:
    page = client.get("/ui/turns/bobs", headers=bearer(ADMIN)).text
    row = page.split('id="phase-episodic"', 1)[1].split("</tr>", 1)[0]
    assert "✂ timeout" in row
    assert "cut by the turn&#39;s 400 ms deadline at 400.0 ms, after running 390.0 ms" in row
    assert "nothing it was loading reached the context" in row
    assert "DeadlineExceeded" not in row
    assert "retried: 2 attempts" in row and "over its 150 ms budget by 240.0 ms" in row


def test_the_list_pages_by_keyset_through_every_turn(client: TestClient) -> None:
    seen: list[str] = []
    path: str | None = "/ui"
    while path is not None:
        page = client.get(path, headers=bearer(ADMIN)).text
        seen += turn_ids(page)
        older = re.search(r'href="(/ui\?[^"]+)" rel="next"', page)
        path = None if older is None else older.group(1).replace("&amp;", "&")
    expected = ["bobs"] + [f"t{i:03d}" for i in reversed(range(120))]
    assert seen == expected


def test_filters_apply_and_keep_through_pages(client: TestClient) -> None:
    def ids(query: str) -> list[str]:
        return turn_ids(client.get(f"/ui?{query}", headers=bearer(ADMIN)).text)

    assert ids("session=s0")[:2] == ["t118", "t116"]
    assert len(ids("session=s0")) == 50
    assert ids("user=bob") == ["bobs"]
    assert ids("status=degraded") == ["bobs"]
    since = (at(118)).strftime("%Y-%m-%dT%H:%M:%S")
    until = (at(119) + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S")
    assert ids(f"since={since}&until={until}") == ["t119", "t118"]
    page = client.get("/ui?session=s0", headers=bearer(ADMIN)).text
    older = re.search(r'href="(/ui\?[^"]+)" rel="next"', page)
    assert older is not None and "session=s0" in older.group(1)
    bad = client.get("/ui?since=yesterday", headers=bearer(ADMIN))
    assert bad.status_code == 400 and "Cannot filter" in bad.text
    assert client.get("/ui?before=nonsense", headers=bearer(ADMIN)).status_code == 400


def test_the_session_neighbours_and_a_comparison(client: TestClient) -> None:
    page = client.get("/ui/turns/t050", headers=bearer(ADMIN)).text
    assert 'href="/ui/turns/t048" rel="prev"' in page
    assert 'href="/ui/turns/t052" rel="next"' in page
    first = client.get("/ui/turns/t000", headers=bearer(ADMIN)).text
    assert "first turn of the session" in first
    compared = client.get("/ui/compare?a=t000&b=bobs", headers=bearer(ADMIN))
    assert compared.status_code == 200
    assert "Two turns compared" in compared.text and "did not run" in compared.text


def test_a_local_viewer_without_keys_shows_every_agent(store: InMemoryTraceStore) -> None:
    with client_of(store, None) as local:
        page = local.get("/ui")
        assert page.status_code == 200 and "theirs" in turn_ids(page.text)
        assert 'name="agent"' in page.text
        assert turn_ids(local.get("/ui?agent=agent-2").text) == ["theirs"]
        assert local.get("/ui/signin").status_code == 303
        assert "Sign out" not in page.text


def test_static_assets_and_the_schema(client: TestClient, store: InMemoryTraceStore) -> None:
    css = client.get("/ui/static/ui.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert client.get("/ui/static/../router.py").status_code == 404
    assert client.get("/ui/static/router.py").status_code == 404
    app = FastAPI()
    app.include_router(ui_router(lambda: store, None))
    assert not [p for p in app.openapi()["paths"] if p.startswith("/ui")]


def test_prefrontal_ui_serves_one_database(tmp_path: Path) -> None:
    path = tmp_path / "ui.db"

    async def write() -> None:
        stores = sqlite.open_stores(path)
        await stores.traces.put(trace("kept", started_at=at(0)))
        await stores.aclose()

    anyio.run(write)

    @asynccontextmanager
    async def opened() -> Any:
        stores: Stores = sqlite.open_stores(path)
        try:
            yield stores
        finally:
            await stores.aclose()

    with TestClient(local_app(opened), follow_redirects=False) as local:
        assert local.get("/").headers["location"] == "/ui"
        assert turn_ids(local.get("/ui").text) == ["kept"]
    missing = CliRunner().invoke(cli, ["ui", "--db", str(tmp_path / "none.db")])
    assert missing.exit_code == 2 and "no database" in missing.output


def test_a_bare_timeout_says_which_budget_cut_it_and_an_overrun_is_explained() -> None:
    """``TimeoutError: TimeoutError`` becomes the phase's own budget, when, and what was lost."""
    bare = cut_phase().model_copy(
        update={
            "name": "context_assembly",
            "started_ms": 2.0,
            "duration_ms": 60.0,
            "budget_ms": 50.0,
            "attempts": 1,
            "items_loaded": 0,
            "warnings": (),
            "errors": (ErrorRecord(type="TimeoutError", message="TimeoutError"),),
        }
    )
    marks = views.waterfall((bare,), 1_000.0).bars[0].marks
    assert marks[0] == (
        "cut by its own 50 ms time budget at 62.0 ms, after running 60.0 ms; "
        "nothing it was loading reached the context"
    )
    assert not any("TimeoutError" in m for m in marks)
    late = trace("late").model_copy(
        update={"duration_ms": 25.9, "deadline_ms": 15.0, "phases": (cut_phase(),)}
    )
    assert views.overrun(late) is not None and "10.9 ms past the deadline" in str(
        views.overrun(late)
    )
    assert views.overrun(trace("in-time")) is None
