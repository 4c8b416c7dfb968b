"""Invalid requests over HTTP: each is a 4xx problem naming the field, never a 500.

One server (a subprocess on 127.0.0.1 over a seeded SQLite file) answers
every request of the module, over one keep-alive connection; the last test
checks that the connection served them all.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest

from prefrontal.demo import DEMO_USER
from tests.servers.conftest import seeded
from tests.servers.harness import AGENT_KEY, http_server

AUTH = {"Authorization": f"Bearer {AGENT_KEY}"}
TURN = {"user_id": DEMO_USER, "session_id": "bad-1", "user_input": "How is the launch going?"}
MEMORY = {"user_id": DEMO_USER, "content": "Maya prefers morning meetings"}
SEARCH = {"user_id": DEMO_USER, "query": "meetings"}
END = {"user_id": DEMO_USER, "reply": "Fine."}
SEEN_CONNECTIONS: set[int] = set()


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """A keep-alive client (one connection at most) of one server, for the whole module."""
    db = tmp_path_factory.mktemp("invalid") / "server.db"
    anyio.run(seeded, db)
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    with (
        http_server(db) as (base, _),
        httpx.Client(base_url=base, headers=AUTH, timeout=30, limits=limits) as c,
    ):
        yield c


def _sent(client: httpx.Client, method: str, path: str, body: Any = None) -> httpx.Response:
    response = client.request(method, path, json=body)
    stream = response.extensions.get("network_stream")
    if stream is not None:
        SEEN_CONNECTIONS.add(id(stream))
    return response


def _refused(response: httpx.Response, status: int, field: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    locations = [e["location"] for e in response.json().get("errors", [])]
    assert any(location.endswith(field) for location in locations), locations


CASES = [
    ("PATCH", "/v1/memories/x", {"user_id": DEMO_USER}, "body"),
    ("POST", "/v1/turns", TURN | {"user_input": " \t\n "}, "user_input"),
    ("POST", "/v1/turns", TURN | {"user_id": "   "}, "user_id"),
    ("POST", "/v1/turns", TURN | {"session_id": ""}, "session_id"),
    ("POST", "/v1/turns", TURN | {"session_id": "s\x00-1"}, "session_id"),
    ("POST", "/v1/turns", TURN | {"user_id": "ma\nya"}, "user_id"),
    ("POST", "/v1/turns", TURN | {"parent_turn_id": ""}, "parent_turn_id"),
    ("POST", "/v1/turns", TURN | {"mode": "m" * 300}, "mode"),
    ("POST", "/v1/turns", TURN | {"focus": ["t" * 300]}, "focus.0"),
    ("POST", "/v1/turns", TURN | {"user_id": "u" * 257}, "user_id"),
    ("POST", "/v1/turns", TURN | {"token_budget": "2000"}, "token_budget"),
    ("POST", "/v1/turns", TURN | {"token_budget": True}, "token_budget"),
    ("POST", "/v1/turns", TURN | {"surprise": 1}, "surprise"),
    ("POST", "/v1/turns/t-1/end", END | {"reply": "  "}, "reply"),
    ("POST", "/v1/memories", MEMORY | {"content": "\u3000 "}, "content"),
    ("POST", "/v1/memories", MEMORY | {"user_id": " "}, "user_id"),
    ("POST", "/v1/memories", MEMORY | {"tags": ["t" * 300]}, "tags.0"),
    ("POST", "/v1/memories", MEMORY | {"importance": False}, "importance"),
    ("POST", "/v1/memories", MEMORY | {"importance": "0.5"}, "importance"),
    ("POST", "/v1/memories/search", SEARCH | {"query": "\n"}, "query"),
    ("POST", "/v1/memories/search", SEARCH | {"top_k": "5"}, "top_k"),
    ("DELETE", "/v1/users/a%00b", None, "user_id"),
    ("DELETE", "/v1/users/" + "u" * 257, None, "user_id"),
    ("DELETE", "/v1/memories/%20", None, "item_id"),
    ("GET", "/v1/turns/t%07/trace?user_id=maya", None, "turn_id"),
    ("GET", "/v1/turns/t-1/trace?user_id=%20", None, "user_id"),
]


@pytest.mark.parametrize(("method", "path", "body", "field"), CASES)
def test_an_invalid_request_is_422_naming_the_field(
    client: httpx.Client, method: str, path: str, body: Any, field: str
) -> None:
    _refused(_sent(client, method, path, body), 422, field)


def test_a_blank_user_is_refused_before_anything_is_remembered(client: httpx.Client) -> None:
    """A blank user id never reaches the stores, so no later turn can meet it."""
    _refused(_sent(client, "POST", "/v1/memories", MEMORY | {"user_id": " "}), 422, "user_id")
    turn = _sent(client, "POST", "/v1/turns", TURN)
    assert turn.status_code == 200, turn.text


def test_a_number_where_json_has_one_is_accepted(client: httpx.Client) -> None:
    """``2000.0`` is the integer 2000 in JSON; an integer importance is a number."""
    turn = _sent(client, "POST", "/v1/turns", TURN | {"token_budget": 2000.0})
    memory = _sent(client, "POST", "/v1/memories", MEMORY | {"importance": 1})
    assert turn.status_code == 200 and turn.json()["budget"] == 2000
    assert memory.status_code == 201 and memory.json()["importance"] == 1.0


def test_every_method_of_a_path_is_allowed_and_health_answers_head(client: httpx.Client) -> None:
    """A 405 names every method of the path; ``HEAD /healthz`` is 200 without a body."""
    refused = _sent(client, "PUT", "/v1/memories/x", {})
    head = client.head("/healthz")
    assert refused.status_code == 405
    assert refused.headers["allow"] == "DELETE, PATCH"
    assert head.status_code == 200 and head.content == b""


def test_the_keep_alive_connection_served_every_request(client: httpx.Client) -> None:
    """Refusals never close the connection: the module's requests all went over one."""
    assert _sent(client, "GET", "/healthz").status_code == 200
    assert len(SEEN_CONNECTIONS) == 1


def test_a_body_without_a_json_content_type_is_named(client: httpx.Client) -> None:
    """A JSON body sent as text/plain is refused with a word about the Content-Type header."""
    body = '{"user_id": "maya", "session_id": "s", "user_input": "Hello"}'
    response = client.post("/v1/turns", content=body, headers={"Content-Type": "text/plain"})
    assert response.status_code == 400, response.text
    detail = response.json()["detail"]
    assert "Content-Type: application/json" in detail
    assert "text/plain" in detail
