"""docs/serving.md as a newcomer runs it: the curl script, both MCP configurations, the client.

Each snippet is read from the page and run against a real server on
127.0.0.1 (a subprocess over a seeded SQLite file), with only the
placeholders of the page (a key, a port, a database path) filled in.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.servers.conftest import seeded
from tests.servers.harness import AGENT_KEY, http_server, mcp_http_server, server_env

PAGE = Path(__file__).parents[2] / "docs" / "serving.md"
pytestmark = pytest.mark.anyio


def _block(language: str, containing: str) -> str:
    """The first ```language block of the page that contains ``containing``."""
    pattern = re.compile(rf"^```{language}\n(.*?)^```", re.MULTILINE | re.DOTALL)
    found = [b for b in pattern.findall(PAGE.read_text(encoding="utf-8")) if containing in b]
    assert found, f"no {language} block with {containing!r} in {PAGE.name}"
    return str(found[0])


def _server_config(containing: str) -> dict[str, Any]:
    config: dict[str, Any] = json.loads(_block("json", containing))["mcpServers"]["prefrontal"]
    return config


async def test_the_curl_script_runs_as_printed(demo_db: Path) -> None:
    script = _block("bash", "KEY=${KEY:?")
    with http_server(demo_db) as (base, _):
        with anyio.fail_after(120):
            done = await anyio.run_process(
                ["bash", "-e", "-c", script], env=server_env(KEY=AGENT_KEY, API=base), check=False
            )
    assert done.returncode == 0, done.stderr.decode()
    assert b'"written":true' in done.stdout and b'"removed"' in done.stdout


async def test_the_stdio_configuration_starts_a_server_that_answers(tmp_path: Path) -> None:
    config = _server_config('"command"')
    db = await seeded(tmp_path / "desktop.db")
    args = [str(db) if arg.endswith(".db") else arg for arg in config["args"]]
    command = str(Path(sys.executable).parent / config["command"])
    parameters = StdioServerParameters(command=command, args=args, env=server_env())
    async with Client(parameters, read_timeout_seconds=60) as client:
        turn = await client.call_tool("start_turn", {"message": "Where are we on the launch?"})
    assert not turn.is_error
    assert turn.structured_content is not None and turn.structured_content["context"]


async def test_the_http_configuration_reaches_the_server(demo_db: Path) -> None:
    config = _server_config('"url"')
    headers = {
        name: value.replace("pf_Jx0...", AGENT_KEY) for name, value in config["headers"].items()
    }
    with mcp_http_server(demo_db) as url:
        printed = re.sub(r":\d+/", f":{url.rsplit(':', 1)[1].split('/')[0]}/", config["url"])
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(printed, http_client=http)) as client,
        ):
            turn = await client.call_tool("start_turn", {"message": "Where are we?"})
    assert config["type"] == "http"
    assert not turn.is_error


async def test_the_python_client_runs_as_printed(demo_db: Path) -> None:
    script = _block("py", "PREFRONTAL_MCP_URL")
    with mcp_http_server(demo_db) as url:
        with anyio.fail_after(120):
            done = await anyio.run_process(
                [sys.executable, "-c", script],
                env=server_env(PREFRONTAL_MCP_URL=url, PREFRONTAL_KEY=AGENT_KEY),
                check=False,
            )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.strip()
