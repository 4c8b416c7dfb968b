"""The agent commands do what they say: real subprocesses of ``prefrontal`` on SQLite files.

Reproductions of failures seen on an earlier version: ``turn`` wrote the demo
agent into a database holding another agent and made directories for a
mistyped path, ``serve mcp --agent-file`` served the demo agent instead of
the file's, ``serve mcp --help`` named 6 of 13 tools, a re-applied file left
a removed question active with no dry run, diff or export, and ``bench``
failed against the admission limit.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from prefrontal import Orchestrator, Stores
from prefrontal.agents.api import AGENT_HOLDER
from prefrontal.serving.mcp_tools import build_mcp
from prefrontal.serving.service import Service
from prefrontal.stores import sqlite
from prefrontal.stores.frontal_cortex import FrontalQuery
from prefrontal.stores.tenancy import Tenant
from tests.conftest import fixed_clock
from tests.servers.harness import DEADLINE, keys_document, server_env

pytestmark = pytest.mark.anyio

SAGE = """\
[agent]
id = "sage"
name = "Sage"
description = "A reading companion."
current_mode = "read"

[rules]
safety_policies = ["Never spoil an ending."]

[[modes]]
name = "read"

[[goals]]
id = "dune"
title = "Find a replacement copy of Dune for Lena"
priority = 0.9

[[questions]]
id = "format"
title = "Paperback or hardcover?"
"""


def prefrontal(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m prefrontal ARGS``: its exit status and output."""
    return subprocess.run(
        [sys.executable, "-m", "prefrontal", *args],
        capture_output=True,
        text=True,
        env=server_env(test_clock=False, COLUMNS="200"),
        timeout=120,
        check=False,
        cwd=cwd,
    )


def sage_file(tmp_path: Path, text: str = SAGE) -> Path:
    """The sage agent file, written under ``tmp_path``."""
    path = tmp_path / "sage.toml"
    path.write_text(text, encoding="utf-8")
    return path


async def profiles(db: Path, *agents: str) -> dict[str, bool]:
    """Whether each agent has a profile in the SQLite file ``db``."""
    stores = sqlite.open_stores(db)
    try:
        found = {}
        for agent in agents:
            tenant = Tenant(agent_id=agent, user_id="someone")
            found[agent] = await stores.consciousness.get_profile(tenant) is not None
        return found
    finally:
        await stores.aclose()


async def test_turn_never_seeds_the_demo_into_a_database_with_another_agent(
    tmp_path: Path,
) -> None:
    """``turn`` on a database holding sage, without --agent: no demo agent appears in it."""
    db = tmp_path / "mine.db"
    assert prefrontal("agent", "apply", str(sage_file(tmp_path)), "--db", str(db)).returncode == 0
    ran = prefrontal("turn", "hello", "--db", str(db))
    assert ran.returncode == 0, ran.stderr
    assert "seeded the demo" not in ran.stderr
    assert "new database" in ran.stderr
    assert await profiles(db, "sage", "atlas") == {"sage": True, "atlas": False}
    fresh = prefrontal("turn", "hello", "--db", str(tmp_path / "new.db"))
    assert fresh.returncode == 0, fresh.stderr
    assert await profiles(tmp_path / "new.db", "atlas") == {"atlas": True}


def test_turn_never_creates_a_directory(tmp_path: Path) -> None:
    """``turn --db typo/x.db``: exit status 2 naming the directory, and no directory made."""
    ran = prefrontal("turn", "hello", "--db", str(tmp_path / "typo" / "x.db"))
    assert ran.returncode == 2
    assert "typo" in ran.stderr
    assert not (tmp_path / "typo").exists()


async def test_serve_mcp_help_lists_every_tool() -> None:
    """``serve mcp --help`` names each of the 13 tools the server lists."""
    service = Service(Orchestrator(Stores.in_memory(), clock=fixed_clock), clock=fixed_clock)
    async with Client(build_mcp(service, Tenant(agent_id="a", user_id="u"))) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    helped = prefrontal("serve", "mcp", "--help")
    assert len(names) == 13
    missing = [name for name in names if name not in helped.stdout]
    assert not missing, helped.stdout


async def test_serve_mcp_with_an_agent_file_serves_that_agent(tmp_path: Path) -> None:
    """``serve mcp --agent-file sage.toml``: start_turn shows Sage; a conflicting --agent is refused."""
    path, db = sage_file(tmp_path), tmp_path / "served.db"
    conflicting = prefrontal(
        "serve", "mcp", "--agent-file", str(path), "--agent", "atlas", "--db", str(db)
    )
    assert conflicting.returncode == 2
    assert "'sage'" in conflicting.stderr
    parameters = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "prefrontal",
            "serve",
            "mcp",
            "--agent-file",
            str(path),
            "--user",
            "lena",
            "--db",
            str(db),
            *DEADLINE,
        ],
        env=server_env(),
    )
    async with Client(parameters, read_timeout_seconds=60) as client:
        started = await client.call_tool("start_turn", {"message": "Any news on Dune?"})
    assert not started.is_error and started.structured_content is not None
    context = started.structured_content["context"]
    assert "You are Sage" in context
    assert "Find a replacement copy of Dune for Lena" in context


async def test_apply_dry_run_prune_and_export_round_trip(tmp_path: Path) -> None:
    """Dry run shows the diff and changes nothing; prune retires; export re-applies exactly."""
    db = tmp_path / "agent.db"
    path = sage_file(tmp_path)
    assert prefrontal("agent", "apply", str(path), "--db", str(db)).returncode == 0
    edited = SAGE.replace("priority = 0.9", "priority = 0.7").split("[[questions]]")[0]
    sage_file(tmp_path, edited)
    dry = prefrontal("agent", "apply", str(path), "--db", str(db), "--dry-run", "--prune")
    assert dry.returncode == 0, dry.stderr
    assert "~ goal:dune.priority: 0.9 -> 0.7" in dry.stdout
    assert "- question:format" in dry.stdout
    assert await open_items(db) == {"dune": "active", "format": "active"}
    kept = prefrontal("agent", "apply", str(path), "--db", str(db))
    assert await open_items(db) == {"dune": "active", "format": "active"}
    assert "retired" not in kept.stdout
    pruned = prefrontal("agent", "apply", str(path), "--db", str(db), "--prune")
    assert "retired question:format" in pruned.stdout
    assert await open_items(db) == {"dune": "active", "format": "cancelled"}
    exported = prefrontal("agent", "export", "--agent", "sage", "--db", str(db))
    assert exported.returncode == 0, exported.stderr
    assert AGENT_HOLDER not in exported.stdout
    copy = tmp_path / "exported.toml"
    copy.write_text(exported.stdout, encoding="utf-8")
    same = prefrontal("agent", "apply", str(copy), "--db", str(db))
    assert "0 created, 0 updated" in same.stdout, same.stdout
    other = tmp_path / "other.db"
    assert prefrontal("agent", "apply", str(copy), "--db", str(other)).returncode == 0
    again = prefrontal("agent", "export", "--agent", "sage", "--db", str(other))
    assert again.stdout == exported.stdout
    assert await open_items(other) == {"dune": "active", "format": "cancelled"}


async def open_items(db: Path) -> dict[str, str]:
    """The status of each of sage's own goals and questions in ``db``."""
    stores = sqlite.open_stores(db)
    try:
        tenant = Tenant(agent_id="sage", user_id=AGENT_HOLDER)
        items = await stores.frontal_cortex.query(tenant, FrontalQuery(limit=100))
        return {item.item_id: item.status.value for item in items}
    finally:
        await stores.aclose()


def test_bench_works_within_the_admission_limit() -> None:
    """``bench`` with more turns at once than the limit admits: it ends and reports the refusals."""
    ran = prefrontal("bench", "--turns", "3", "--rounds", "1", "--concurrent", "100", "--json")
    assert ran.returncode == 0, ran.stderr
    assert '"refused"' in ran.stdout


def test_serve_http_refuses_an_agent_file_no_key_acts_for(tmp_path: Path) -> None:
    """``serve http --agent-file sage.toml`` with keys only for other agents: exit 2, named."""
    keys = tmp_path / "keys.json"
    keys.write_text(keys_document(), encoding="utf-8")
    ran = prefrontal(
        "serve", "http", "--agent-file", str(sage_file(tmp_path)), "--keys-file", str(keys),
        "--db", str(tmp_path / "http.db"), "--port", "0",
    )  # fmt: skip
    assert ran.returncode == 2
    assert "'sage'" in ran.stderr and "no API key acts for it" in ran.stderr
