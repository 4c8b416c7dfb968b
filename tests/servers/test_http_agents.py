"""The agent's state over HTTP, on a real server on 127.0.0.1 (a subprocess) and a SQLite file.

The profile needs a key with the administer right; goals and scratch entries
a key that may act for the user. A change over a stale version is a 409
problem; a bad body a 422 naming the field; the next turn shows each change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from prefrontal.serving.keys import KeyGrant, Right, hash_key
from tests.servers.harness import DEADLINE, http_server

pytestmark = pytest.mark.anyio

ADMIN_KEY = "pf_test_admin"
AGENT_KEY = "pf_test_runtime"
PROFILE = "/v1/agents/atlas/profile"


def keys_file(tmp_path: Path) -> Path:
    grants = [
        KeyGrant(
            name="ops",
            sha256=hash_key(ADMIN_KEY),
            agent_id="atlas",
            users=("*",),
            rights=(Right.READ, Right.WRITE, Right.ADMINISTER),
        ),
        KeyGrant(name="runtime", sha256=hash_key(AGENT_KEY), agent_id="atlas", users=("maya",)),
    ]
    path = tmp_path / "keys.json"
    body = ", ".join(g.model_dump_json() for g in grants)
    path.write_text('{"keys": [' + body + "]}", encoding="utf-8")
    return path


def client(base: str, key: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30)


async def test_profile_goals_and_scratch_over_http(tmp_path: Path) -> None:
    options = (*DEADLINE, "--keys-file", str(keys_file(tmp_path)))
    with http_server(tmp_path / "agents.db", *options) as (base, _):
        async with client(base, ADMIN_KEY) as admin, client(base, AGENT_KEY) as runtime:
            # The profile: administer only, versioned.
            refused = await runtime.put(PROFILE, json={"name": "Atlas"})
            assert refused.status_code == 403
            assert (await admin.get(PROFILE)).status_code == 404
            created = await admin.put(PROFILE, json={"name": "Atlas", "values": ["Be brief."]})
            assert created.status_code == 200, created.text
            assert created.json()["version"] == 1
            moved = await admin.put(
                PROFILE, json={"name": "Atlas", "description": "Plans", "expected_version": 1}
            )
            assert moved.json()["version"] == 2
            stale = await admin.put(PROFILE, json={"name": "Old", "expected_version": 1})
            assert stale.status_code == 409
            assert stale.headers["content-type"].startswith("application/problem+json")
            assert "version 2, not 1" in stale.json()["detail"]

            # Goals: added by the runtime key for its user, checked like any body.
            bad = await runtime.post(
                "/v1/goals", json={"user_id": "maya", "title": "x", "priority": 3}
            )
            assert bad.status_code == 422
            assert "priority" in bad.text
            other = await runtime.post("/v1/goals", json={"user_id": "sam", "title": "Not mine"})
            assert other.status_code == 403
            goal = await runtime.post(
                "/v1/goals", json={"user_id": "maya", "title": "Ship the launch", "priority": 0.9}
            )
            assert goal.status_code == 201, goal.text
            goal_id = goal.json()["item_id"]
            outcomes = await _concurrently(
                runtime,
                f"/v1/goals/{goal_id}",
                [{"user_id": "maya", "progress": p, "expected_version": 1} for p in (0.3, 0.6)],
            )
            assert sorted(outcomes) == [200, 409]
            listed = (await runtime.get("/v1/goals", params={"user_id": "maya"})).json()
            assert [(g["item_id"], g["version"]) for g in listed] == [(goal_id, 2)]
            missing = await runtime.post("/v1/goals/nope/complete", json={"user_id": "maya"})
            assert missing.status_code == 404

            # The scratch page.
            risk = await runtime.post(
                "/v1/scratch",
                json={"user_id": "maya", "content": "The venue may cancel.", "kind": "risk_alert"},
            )
            assert risk.status_code == 201, risk.text
            ask = await runtime.post(
                "/v1/scratch",
                json={"user_id": "maya", "content": "Book it?", "kind": "pending_confirmation"},
            )
            active = (await runtime.get("/v1/scratch", params={"user_id": "maya"})).json()
            assert {e["content"] for e in active} == {"The venue may cancel.", "Book it?"}
            done = await runtime.post(
                f"/v1/scratch/{ask.json()['item_id']}/resolve",
                json={"user_id": "maya", "outcome": "confirmed", "expected_version": 1},
            )
            assert (done.json()["resolved"], done.json()["outcome"]) == (True, "confirmed")

            # The next turn shows it all.
            turn = await runtime.post(
                "/v1/turns", json={"user_id": "maya", "session_id": "s", "user_input": "Status?"}
            )
            text = turn.json()["text"]
            assert turn.json()["ready_for_router"] is True
            assert "Atlas" in text
            assert "Ship the launch" in text
            assert "The venue may cancel." in text
            assert "Book it?" not in text

            schema = (await admin.get("/openapi.json")).json()
            assert {"/v1/goals", "/v1/scratch", PROFILE.replace("atlas", "{agent_id}")} <= set(
                schema["paths"]
            )
            assert "409" in schema["paths"]["/v1/goals/{item_id}"]["patch"]["responses"]


async def _concurrently(
    http: httpx.AsyncClient, path: str, bodies: list[dict[str, Any]]
) -> list[int]:
    statuses: list[int] = []

    async def patch(body: dict[str, Any]) -> None:
        statuses.append((await http.patch(path, json=body)).status_code)

    async with anyio.create_task_group() as group:
        for body in bodies:
            group.start_soon(patch, body)
    return statuses
