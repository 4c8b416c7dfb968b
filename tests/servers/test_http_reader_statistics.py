"""Over HTTP, a key bound to one user cannot learn from its scores what another user wrote.

The first reproduction of the report: maya searched her own note and its
score fell as sam, with a key of his own, stored private notes naming the
same words (0.875, then 0.105, 0.099, 0.096): the ranking counted every
user's items. Now a search counts only what its user may read.

A search's score also weighs recency and how often a memory was recalled,
and the test clock moves at every call, so the check runs two servers in
step: on one, sam stores his notes in maya's agent; on the other, a user
of another agent stores the same notes (another agent's items never move a
search). Maya's hits must be the same on both, to the bit.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from prefrontal.demo import DEMO_USER
from tests.servers.harness import MAYA_ONLY_KEY, OTHER_AGENT_KEY, SAM_ONLY_KEY, http_server

QUERY = "zorblax quintar"


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="module")
def clients(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, ...]]:
    """Clients of two HTTP servers, each on a new SQLite file, for the whole module."""
    root = tmp_path_factory.mktemp("reader-statistics")
    with (
        http_server(root / "beside.db") as (beside, _),
        http_server(root / "apart.db") as (apart, _),
        httpx.Client(base_url=beside, timeout=30) as first,
        httpx.Client(base_url=apart, timeout=30) as second,
    ):
        yield first, second


def remember(client: httpx.Client, key: str, user: str, content: str) -> None:
    body = {"user_id": user, "content": content, "scope": "private"}
    response = client.post("/v1/memories", json=body, headers=bearer(key))
    assert response.status_code == 201, response.text


def maya_hits(client: httpx.Client) -> list[tuple[str, float]]:
    """Maya's hits for the query with her own key: content and score, best first."""
    body = {"user_id": DEMO_USER, "query": QUERY, "top_k": 10}
    response = client.post("/v1/memories/search", json=body, headers=bearer(MAYA_ONLY_KEY))
    assert response.status_code == 200, response.text
    return [(m["content"], m["score"]) for m in response.json()["memories"]]


def test_another_users_private_notes_never_move_a_users_scores(
    clients: tuple[httpx.Client, httpx.Client],
) -> None:
    """Maya's hits are the same to the bit whether sam, in her agent, or a user of another
    agent stores 1, 10 and 100 notes naming the query's words."""
    beside, apart = clients
    for client in clients:
        remember(client, MAYA_ONLY_KEY, DEMO_USER, "meeting about zorblax")
        remember(client, MAYA_ONLY_KEY, DEMO_USER, "the quintar invoice for the office printer")
        remember(client, MAYA_ONLY_KEY, DEMO_USER, "zorblax and quintar: the launch checklist")
        for n in range(5):
            remember(client, MAYA_ONLY_KEY, DEMO_USER, f"walked the dog in the park, day {n}")
    first = maya_hits(beside)
    assert len(first) == 3
    assert maya_hits(apart) == first
    stored = 0
    for total in (1, 10, 100):
        for n in range(stored, total):
            remember(beside, SAM_ONLY_KEY, "sam", f"zorblax quintar note {n}")
            remember(apart, OTHER_AGENT_KEY, "sam", f"zorblax quintar note {n}")
        stored = total
        assert maya_hits(beside) == maya_hits(apart), f"moved after {total} of sam's notes"
