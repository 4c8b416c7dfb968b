"""Steering an agent over HTTP, on a real server on 127.0.0.1 (a subprocess) and a SQLite file.

Reproductions of failures seen on an earlier version: the agent file's goals
answered 404 to every key, ``PUT`` of a name alone wiped the rules and a
mode switch needed a whole profile, goal responses left out ``blocking``,
``due_at`` and ``tags``, a blank title was stored, completing twice moved
the version twice, and ``/readyz`` said ready while no turn could be.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from prefrontal.serving.keys import KeyGrant, Right, hash_key
from tests.servers.harness import DEADLINE, http_server

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent.toml"
ADMIN_KEY = "pf_test_steer_admin"
SHARED_KEY = "pf_test_steer_shared"
USER_KEY = "pf_test_steer_user"
PROFILE = "/v1/agents/atlas/profile"


def keys_file(tmp_path: Path) -> Path:
    """An administer key, a key that writes shared items, and a plain key of maya's."""
    grants = [
        KeyGrant(
            name="ops",
            sha256=hash_key(ADMIN_KEY),
            agent_id="atlas",
            users=("*",),
            rights=(Right.READ, Right.WRITE, Right.ADMINISTER),
        ),
        KeyGrant(
            name="planner",
            sha256=hash_key(SHARED_KEY),
            agent_id="atlas",
            users=("*",),
            rights=(Right.READ, Right.WRITE, Right.WRITE_SHARED),
        ),
        KeyGrant(name="maya", sha256=hash_key(USER_KEY), agent_id="atlas", users=("maya",)),
    ]
    path = tmp_path / "keys.json"
    path.write_text('{"keys": [' + ", ".join(g.model_dump_json() for g in grants) + "]}")
    return path


def client(base: str, key: str) -> httpx.AsyncClient:
    """An HTTP client sending ``key``."""
    return httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30)


async def turn_text(http: httpx.AsyncClient, message: str) -> str:
    """The context of a turn of maya's."""
    body = {"user_id": "maya", "session_id": "s", "user_input": message}
    answer = await http.post("/v1/turns", json=body)
    assert answer.status_code == 200, answer.text
    text: str = answer.json()["text"]
    return text


async def test_the_file_goals_are_changed_by_keys_with_write_shared(tmp_path: Path) -> None:
    """The file's goal: a plain user key gets 403, a write_shared key advances it by id or handle."""
    options = (*DEADLINE, "--keys-file", str(keys_file(tmp_path)), "--agent-file", str(EXAMPLE))
    with http_server(tmp_path / "steer.db", *options) as (base, _):
        async with client(base, USER_KEY) as user, client(base, SHARED_KEY) as agent:
            listed = await user.get("/v1/goals", params={"user_id": "maya"})
            goals = {g["item_id"]: g for g in listed.json()}
            plain = await user.patch("/v1/goals/launch", json={"user_id": "maya", "progress": 0.5})
            by_id = await agent.patch("/v1/goals/launch", json={"user_id": "maya", "progress": 0.5})
            handle = goals["launch"]["handle"]
            by_handle = await agent.post(
                f"/v1/goals/{handle.replace('#', '%23')}/complete", json={"user_id": "maya"}
            )
            again = await agent.post("/v1/goals/launch/complete", json={"user_id": "maya"})
            text = await turn_text(user, "Launch?")
    assert goals["launch"]["belongs_to"] == "agent"
    assert "agent-file" not in listed.text + by_id.text + by_handle.text + text
    assert plain.status_code == 403, plain.text
    assert by_id.status_code == 200, by_id.text
    assert by_id.json()["progress"] == 0.5
    assert by_handle.status_code == 200, by_handle.text
    assert (by_handle.json()["status"], by_handle.json()["version"]) == ("done", 3)
    assert again.json()["version"] == 3
    assert "Ship the December 3 launch" not in text
    assert "Draft the release notes" in text


async def test_patch_keeps_what_it_does_not_name_and_put_says_it_replaces(tmp_path: Path) -> None:
    """PATCH current_mode switches the mode in one call and keeps the rules; bad modes are named."""
    options = (*DEADLINE, "--keys-file", str(keys_file(tmp_path)), "--agent-file", str(EXAMPLE))
    with http_server(tmp_path / "profile.db", *options) as (base, _):
        async with client(base, ADMIN_KEY) as admin:
            switched = await admin.patch(
                PROFILE,
                json={"current_mode": "act", "expected_version": 1},
                headers={"Content-Type": "application/merge-patch+json"},
            )
            unknown = await admin.patch(PROFILE, json={"current_mode": "chaos"})
            stale = await admin.patch(PROFILE, json={"description": "x", "expected_version": 1})
            one_rule = await admin.patch(
                PROFILE, json={"governance": {"escalation": ["Ask a human."]}}
            )
            text = await turn_text(admin, "What mode?")
            openapi = (await admin.get("/openapi.json")).json()
    assert switched.status_code == 200, switched.text
    body: dict[str, Any] = switched.json()
    assert (body["current_mode"], body["version"], body["name"]) == ("act", 2, "Atlas")
    assert body["governance"]["safety_policies"] == [
        "Never share credentials or personal data of other users."
    ]
    assert unknown.status_code == 422
    assert "'act'" in unknown.text and "'plan'" in unknown.text
    assert stale.status_code == 409
    kept = one_rule.json()["governance"]
    assert kept["escalation"] == ["Ask a human."] and kept["access_control"]
    assert "Never share credentials" in text and "Ask a human." in text
    put = openapi["paths"]["/v1/agents/{agent_id}/profile"]["put"]
    assert "Replace" in put["summary"] + put["description"]
    assert "patch" in openapi["paths"]["/v1/agents/{agent_id}/profile"]


async def test_goal_fields_blank_titles_and_readiness(tmp_path: Path) -> None:
    """Responses carry blocking, due_at and tags; blank titles are 422; readyz names the agent."""
    options = (*DEADLINE, "--keys-file", str(keys_file(tmp_path)))
    with http_server(tmp_path / "fresh.db", *options) as (base, _):
        async with client(base, USER_KEY) as user, client(base, ADMIN_KEY) as admin:
            not_ready = await user.get("/readyz")
            made = await user.post(
                "/v1/goals",
                json={
                    "user_id": "maya",
                    "title": "Sign the venue contract",
                    "blocking": True,
                    "due_at": "2026-03-20T12:00:00Z",
                    "tags": ["venue"],
                },
            )
            listed = (await user.get("/v1/goals", params={"user_id": "maya"})).json()
            blank = await user.post("/v1/goals", json={"user_id": "maya", "title": "   "})
            renamed = await user.patch(
                f"/v1/goals/{made.json()['item_id']}", json={"user_id": "maya", "title": " "}
            )
            await admin.put(PROFILE, json={"name": "Atlas"})
            ready = await user.get("/readyz")
    assert not_ready.status_code == 503
    assert "atlas" in not_ready.json()["detail"] and "no profile" in not_ready.json()["detail"]
    assert made.status_code == 201, made.text
    for shown in (made.json(), listed[0]):
        assert shown["blocking"] is True
        assert shown["due_at"].startswith("2026-03-20T12:00:00")
        assert shown["tags"] == ["venue"]
    assert blank.status_code == 422 and "title" in blank.text
    assert renamed.status_code == 422
    assert ready.status_code == 200
    assert ready.json()["status"] == "ready"
    assert ready.json()["agents_not_ready"] == {}
