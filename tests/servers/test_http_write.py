"""The write side over HTTP: ending turns, and remembering, changing, finding, forgetting, erasing."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import httpx
import pytest

from prefrontal.demo import DEMO_USER, SAMPLE_INPUT
from prefrontal.orchestrator.retries import reply_hash
from tests.servers.conftest import seeded
from tests.servers.harness import AGENT_KEY, http_server

AUTH = {"Authorization": f"Bearer {AGENT_KEY}"}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """A client of one HTTP server on a seeded SQLite file, for the whole module."""
    db = tmp_path_factory.mktemp("write") / "server.db"
    anyio.run(seeded, db)
    with http_server(db) as (base, _), httpx.Client(base_url=base, headers=AUTH, timeout=30) as c:
        yield c


def test_ending_a_turn_twice_writes_once(client: httpx.Client) -> None:
    """The first end writes the exchange; a retry answers written=false; an unknown turn is 404."""
    turn = client.post(
        "/v1/turns", json={"user_id": DEMO_USER, "session_id": "w-1", "user_input": SAMPLE_INPUT}
    ).json()
    body = {
        "user_id": DEMO_USER,
        "reply": "Yes, if payments land by Friday.",
        "tool_calls": [{"name": "calendar", "arguments": {"week": 48}, "result": "3 meetings"}],
    }
    first = client.post(f"/v1/turns/{turn['turn_id']}/end", json=body)
    again = client.post(f"/v1/turns/{turn['turn_id']}/end", json=body)
    unknown = client.post("/v1/turns/no-such-turn/end", json=body)
    assert first.status_code == 200 and first.json()["written"] is True
    assert first.json()["message_ids"]
    assert again.status_code == 200 and again.json()["written"] is False
    assert unknown.status_code == 404
    assert unknown.headers["content-type"] == "application/problem+json"
    trace = client.get(f"/v1/turns/{turn['turn_id']}/trace", params={"user_id": DEMO_USER})
    assert trace.json()["ended"] is True and trace.json()["end_steps"]
    other = client.post(f"/v1/turns/{turn['turn_id']}/end", json={**body, "reply": "No."})
    assert other.status_code == 409
    assert other.headers["content-type"] == "application/problem+json"
    detail = other.json()["detail"]
    assert reply_hash("Yes, if payments land by Friday.") in detail
    assert reply_hash("No.") in detail


def test_a_memory_is_remembered_changed_found_and_forgotten(client: httpx.Client) -> None:
    """POST, PATCH, search and DELETE act on one memory; a second DELETE is 404."""
    created = client.post(
        "/v1/memories",
        json={"user_id": DEMO_USER, "content": "Maya prefers morning meetings", "tags": ["cal"]},
    )
    assert created.status_code == 201
    item_id = created.json()["item_id"]
    changed = client.patch(
        f"/v1/memories/{item_id}",
        json={"user_id": DEMO_USER, "content": "Maya prefers meetings before ten"},
    )
    assert changed.status_code == 200
    assert changed.json()["content"] == "Maya prefers meetings before ten"
    found = client.post(
        "/v1/memories/search", json={"user_id": DEMO_USER, "query": "meetings before ten"}
    ).json()
    assert found["mode"] == "search" and found["reason"] == "no_session"
    assert item_id in [m["item_id"] for m in found["memories"]]
    gone = client.delete(f"/v1/memories/{item_id}", params={"user_id": DEMO_USER})
    assert gone.status_code == 200 and gone.json() == {"item_id": item_id, "forgotten": True}
    assert (
        client.delete(f"/v1/memories/{item_id}", params={"user_id": DEMO_USER}).status_code == 404
    )
    missing = client.patch(f"/v1/memories/{item_id}", json={"user_id": DEMO_USER, "importance": 1})
    assert missing.status_code == 404


def test_a_turns_messages_are_forgotten_by_their_ids(client: httpx.Client) -> None:
    """DELETE of each message id an ended turn returned: the next turn shows neither message."""
    said = "My spare key is under the blue pot Z-KEY-5120."
    turn = client.post(
        "/v1/turns", json={"user_id": DEMO_USER, "session_id": "w-forget", "user_input": said}
    ).json()
    ended = client.post(
        f"/v1/turns/{turn['turn_id']}/end",
        json={"user_id": DEMO_USER, "reply": "Noted, Z-KEY-5120 under the blue pot."},
    ).json()
    for message_id in ended["message_ids"]:
        gone = client.delete(f"/v1/memories/{message_id}", params={"user_id": DEMO_USER})
        assert gone.status_code == 200 and gone.json()["forgotten"] is True
        again = client.delete(f"/v1/memories/{message_id}", params={"user_id": DEMO_USER})
        assert again.status_code == 404
    later = client.post(
        "/v1/turns",
        json={"user_id": DEMO_USER, "session_id": "w-forget", "user_input": "Where is my key?"},
    ).json()
    assert "Z-KEY-5120" not in later["text"]


def test_another_users_memory_cannot_be_changed_or_forgotten(client: httpx.Client) -> None:
    """A memory of maya's is not found when sam's requests name it."""
    item_id = client.post(
        "/v1/memories", json={"user_id": DEMO_USER, "content": "Maya's private note"}
    ).json()["item_id"]
    patched = client.patch(f"/v1/memories/{item_id}", json={"user_id": "sam", "importance": 0.9})
    deleted = client.delete(f"/v1/memories/{item_id}", params={"user_id": "sam"})
    assert (patched.status_code, deleted.status_code) == (404, 404)
    assert "private note" not in patched.text + deleted.text
    kept = client.post(
        "/v1/memories/search", json={"user_id": DEMO_USER, "query": "private note"}
    ).json()
    assert item_id in [m["item_id"] for m in kept["memories"]]


def test_erasing_a_user_removes_theirs_only(client: httpx.Client) -> None:
    """DELETE /v1/users/sam removes sam's memories, with counts per store; maya's stay."""
    client.post("/v1/memories", json={"user_id": "sam", "content": "Sam plays the cello"})
    maya = client.post(
        "/v1/memories", json={"user_id": DEMO_USER, "content": "Maya plays the violin"}
    ).json()
    erased = client.delete("/v1/users/sam")
    assert erased.status_code == 200
    assert erased.json()["user_id"] == "sam" and sum(erased.json()["removed"].values()) >= 1
    cello = client.post("/v1/memories/search", json={"user_id": "sam", "query": "cello"}).json()
    assert cello["memories"] == []
    violin = client.post(
        "/v1/memories/search", json={"user_id": DEMO_USER, "query": "violin"}
    ).json()
    assert maya["item_id"] in [m["item_id"] for m in violin["memories"]]


def test_a_write_for_an_erased_user_is_gone(client: httpx.Client) -> None:
    """After DELETE /v1/users/sam, remembering for sam is refused with 410 and writes nothing."""
    erased = client.delete("/v1/users/sam")
    assert erased.status_code == 200, erased.text
    again = client.post("/v1/memories", json={"user_id": "sam", "content": "Sam keeps goats"})
    assert again.status_code == 410
    assert again.headers["content-type"] == "application/problem+json"
    assert "erased" in again.json()["detail"]
    goats = client.post("/v1/memories/search", json={"user_id": "sam", "query": "goats"}).json()
    assert goats["memories"] == []
