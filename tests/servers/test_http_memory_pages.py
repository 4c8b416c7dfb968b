"""``GET /v1/memories`` and ``GET /v1/memories/{id}/history`` on a real server over SQLite."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from prefrontal.demo import DEMO_USER
from tests.servers.conftest import seeded
from tests.servers.harness import (
    AGENT_KEY,
    CURATOR_KEY,
    MAYA_ONLY_KEY,
    OTHER_AGENT_KEY,
    READ_ONLY_KEY,
    http_server,
)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """A client of one HTTP server on a seeded SQLite file, for the whole module."""
    db = tmp_path_factory.mktemp("memory-pages") / "server.db"
    anyio.run(seeded, db)
    with http_server(db) as (base, _), httpx.Client(base_url=base, timeout=30) as client:
        yield client


def remember(client: httpx.Client, key: str, user: str, content: str, **extra: Any) -> str:
    body = {"user_id": user, "content": content, **extra}
    response = client.post("/v1/memories", json=body, headers=bearer(key))
    assert response.status_code == 201, response.text
    item_id: str = response.json()["item_id"]
    return item_id


def every_page(client: httpx.Client, key: str, **params: Any) -> tuple[list[str], int]:
    """The ids of every page in order, and how many pages it took."""
    ids: list[str] = []
    cursor, pages = None, 0
    while True:
        asked = params | ({"cursor": cursor} if cursor else {})
        response = client.get("/v1/memories", params=asked, headers=bearer(key))
        assert response.status_code == 200, response.text
        body = response.json()
        ids += [m["item_id"] for m in body["memories"]]
        pages += 1
        cursor = body["next_cursor"]
        if cursor is None:
            return ids, pages


def test_pages_list_each_memory_once_and_never_another_users_private(
    client: httpx.Client,
) -> None:
    """Sam's private memories never show in Maya's pages; her own and shared ones each once."""
    mine = [remember(client, AGENT_KEY, DEMO_USER, f"maya paged note {n}") for n in range(7)]
    secret = remember(client, AGENT_KEY, "sam", "sam's private page note")
    shared = remember(client, CURATOR_KEY, "sam", "shared page note", scope="shared")
    ids, pages = every_page(client, AGENT_KEY, user_id=DEMO_USER, limit=3)
    assert len(ids) == len(set(ids)) and pages >= 3
    assert set(mine) | {shared} <= set(ids)
    assert secret not in ids
    sams, _ = every_page(client, AGENT_KEY, user_id="sam", limit=50)
    assert secret in sams


def test_filters_narrow_the_list(client: httpx.Client) -> None:
    """A store and a scope filter keep only what they name."""
    event = remember(client, AGENT_KEY, DEMO_USER, "an episodic page event", store="episodic")
    episodic, _ = every_page(client, AGENT_KEY, user_id=DEMO_USER, store="episodic")
    assert event in episodic
    response = client.get(
        "/v1/memories",
        params={"user_id": DEMO_USER, "store": "episodic", "limit": 1000},
        headers=bearer(AGENT_KEY),
    )
    assert {m["store"] for m in response.json()["memories"]} == {"episodic"}
    shared, _ = every_page(client, AGENT_KEY, user_id=DEMO_USER, scope="shared")
    listed = client.get(
        "/v1/memories",
        params={"user_id": DEMO_USER, "scope": "shared", "limit": 1000},
        headers=bearer(AGENT_KEY),
    ).json()["memories"]
    assert shared and {m["scope"] for m in listed} == {"shared"}


def test_history_names_who_changed_what(client: httpx.Client) -> None:
    """After a change by another key, the history has both versions with their authors."""
    item = remember(client, AGENT_KEY, DEMO_USER, "Maya's desk is on floor two")
    patched = client.patch(
        f"/v1/memories/{item}",
        json={"user_id": DEMO_USER, "content": "Maya's desk is on floor three"},
        headers=bearer(MAYA_ONLY_KEY),
    )
    assert patched.status_code == 200, patched.text
    response = client.get(
        f"/v1/memories/{item}/history", params={"user_id": DEMO_USER}, headers=bearer(AGENT_KEY)
    )
    assert response.status_code == 200, response.text
    versions = response.json()["versions"]
    assert [v["content"] for v in versions] == [
        "Maya's desk is on floor two",
        "Maya's desk is on floor three",
    ]
    assert [v["author"] for v in versions] == ["atlas", "maya"]
    assert versions[1]["changed"] == ["content", "author"] and versions[1]["current"]


def test_another_users_private_history_and_bad_cursor_are_refused(client: httpx.Client) -> None:
    """Sam's private memory has no history for Maya (404); a cursor not of a page's form is 422."""
    secret = remember(client, AGENT_KEY, "sam", "sam's private history note")
    response = client.get(
        f"/v1/memories/{secret}/history", params={"user_id": DEMO_USER}, headers=bearer(AGENT_KEY)
    )
    assert response.status_code == 404
    bad = client.get(
        "/v1/memories",
        params={"user_id": DEMO_USER, "cursor": "%%%"},
        headers=bearer(AGENT_KEY),
    )
    assert bad.status_code == 422


def test_keys_read_only_their_users_and_their_agent(client: httpx.Client) -> None:
    """A key for Maya alone may not list Sam's memories; another agent's key sees none of
    this agent's; a read-only key may list."""
    assert (
        client.get(
            "/v1/memories", params={"user_id": "sam"}, headers=bearer(MAYA_ONLY_KEY)
        ).status_code
        == 403
    )
    others = client.get(
        "/v1/memories", params={"user_id": DEMO_USER}, headers=bearer(OTHER_AGENT_KEY)
    )
    assert others.status_code == 200 and others.json()["memories"] == []
    reader = client.get(
        "/v1/memories", params={"user_id": DEMO_USER}, headers=bearer(READ_ONLY_KEY)
    )
    assert reader.status_code == 200 and reader.json()["memories"]
    assert client.get("/v1/memories", params={"user_id": DEMO_USER}).status_code == 401
