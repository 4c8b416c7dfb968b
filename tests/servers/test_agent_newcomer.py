"""A newcomer's path: a fresh database, ``prefrontal agent apply``, ``prefrontal serve http``.

Both the command and the server are real subprocesses; the server listens on
127.0.0.1 and is driven over HTTP. The first turn shows the agent's identity
and is ready for the router.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from prefrontal.demo import DEMO_USER
from tests.servers.harness import AGENT_KEY, DEADLINE, http_server, server_env

pytestmark = pytest.mark.anyio

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent.toml"
AUTH = {"Authorization": f"Bearer {AGENT_KEY}"}


def prefrontal(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m prefrontal ARGS`` with no keys in its environment."""
    return subprocess.run(
        [sys.executable, "-m", "prefrontal", *args],
        capture_output=True,
        text=True,
        env=server_env(test_clock=False, COLUMNS="200"),
        timeout=60,
        check=False,
    )


async def _first_turn(base: str) -> dict[str, object]:
    async with httpx.AsyncClient(base_url=base, headers=AUTH, timeout=30) as client:
        body = {"user_id": DEMO_USER, "session_id": "s-new", "user_input": "Where is the launch?"}
        answer = await client.post("/v1/turns", json=body)
        assert answer.status_code == 200, answer.text
        turn: dict[str, object] = answer.json()
        return turn


async def test_apply_then_serve_first_turn_shows_identity(tmp_path: Path) -> None:
    """Fresh db, ``agent apply examples/agent.toml``, ``serve http``: identity in, ready."""
    db = tmp_path / "fresh.db"
    applied = prefrontal("agent", "apply", str(EXAMPLE), "--db", str(db))
    assert applied.returncode == 0, applied.stderr
    assert "3 created" in applied.stdout
    again = prefrontal("agent", "apply", str(EXAMPLE), "--db", str(db))
    assert "0 created, 0 updated, 3 unchanged" in again.stdout
    with http_server(db) as (base, _):
        turn = await _first_turn(base)
    assert turn["ready_for_router"] is True
    text = str(turn["text"])
    assert "Atlas" in text
    assert "Never share credentials" in text
    assert "Ship the December 3 launch" in text


async def test_serve_applies_an_agent_file_at_start(tmp_path: Path) -> None:
    """``serve http --agent-file`` over a fresh db: the first turn already has the identity."""
    db = tmp_path / "fresh.db"
    with http_server(db, *DEADLINE, "--agent-file", str(EXAMPLE)) as (base, _):
        turn = await _first_turn(base)
    assert turn["ready_for_router"] is True
    assert "Atlas" in str(turn["text"])


async def test_without_an_agent_the_turn_says_why_it_is_not_ready(tmp_path: Path) -> None:
    """A fresh db and no agent file: not ready, and the warnings say there is no identity."""
    with http_server(tmp_path / "empty.db") as (base, _):
        turn = await _first_turn(base)
    assert turn["ready_for_router"] is False
    assert any("not ready for the router" in str(w) for w in turn["warnings"])  # type: ignore[attr-defined]
    assert "not ready" not in str(turn["text"])


def test_an_invalid_agent_file_is_one_line_naming_line_and_field(tmp_path: Path) -> None:
    """A bad priority: exit 1, one line with the file, the line and the field."""
    bad = tmp_path / "agent.toml"
    bad.write_text(
        '[agent]\nid = "atlas"\nname = "Atlas"\n\n[[goals]]\nid = "g"\ntitle = "t"\npriority = 7\n',
        encoding="utf-8",
    )
    done = prefrontal("agent", "apply", str(bad), "--db", str(tmp_path / "x.db"))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"{bad}:8: goals.0.priority" in lines[0]
