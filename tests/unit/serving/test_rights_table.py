"""The one table of rights covers every route and tool, and docs/security.md renders it."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest
from fastapi.routing import APIRoute

from prefrontal.agents import AgentStateAPI
from prefrontal.errors import ConfigurationError
from prefrontal.memory.api import MemoryAPI
from prefrontal.serving.http.app import create_app
from prefrontal.serving.keys import KeyGrant, KeyRing, Right, hash_key, key_entry
from prefrontal.serving.mcp_tools import build_mcp
from prefrontal.serving.rights import RULES, Operation, may_choose_mode, needed, rights_markdown
from prefrontal.serving.service import Service
from prefrontal.serving.ui import ui_router
from prefrontal.serving.ui.agent_pages import AgentSource
from prefrontal.stores.authors import is_reserved
from prefrontal.stores.set import Stores
from prefrontal.stores.tenancy import Scope, Tenant
from tests.conftest import fixed_clock, orchestrator

ROOT = Path(__file__).resolve().parents[3]
OPEN = {"/healthz", "/readyz", "/metrics", "/openapi.json", "/docs", "/redoc"}
"""Routes that need no key at all (or only serve the viewer's static files and sign-out)."""
UI_FREE = {"GET /ui/static/{name}", "GET /ui/signin", "POST /ui/signout"}


def service() -> Service:
    """A service over empty in-memory stores."""
    return Service(orchestrator(Stores.in_memory()), clock=fixed_clock)


def agent_source() -> AgentSource:
    """The agent pages' source over empty in-memory stores."""
    stores = Stores.in_memory()
    return AgentSource(
        lambda: MemoryAPI(stores, clock=fixed_clock),
        lambda: AgentStateAPI(stores, clock=fixed_clock),
    )


def hook() -> ModuleType:
    """docs/hooks/reference.py, the MkDocs hook, loaded as a module."""
    spec = importlib.util.spec_from_file_location(
        "reference_hook", ROOT / "docs/hooks/reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_http_route_that_takes_a_key_is_in_the_table() -> None:
    """Each keyed route of the API (from its OpenAPI document) and of the trace viewer is named
    by the table, and every route the table names exists."""
    paths = create_app(service(), KeyRing(())).openapi()["paths"]
    api = {
        f"{method.upper()} {path}"
        for path, operations in paths.items()
        if path not in OPEN
        for method in operations
        if method != "head"
    }
    viewer = {
        f"{method} {route.path}"
        for route in ui_router(
            lambda: Stores.in_memory().traces, KeyRing(()), agents=agent_source()
        ).routes
        if isinstance(route, APIRoute)
        for method in (route.methods or set()) - {"HEAD"}
    }
    named = [route for rule in RULES for route in rule.http]
    assert api | (viewer - UI_FREE) == set(named)
    turns = [rule.operation for rule in RULES if "POST /v1/turns" in rule.http]
    assert turns == [Operation.START_TURN, Operation.CHOOSE_MODE]
    twice = {route for route, count in Counter(named).items() if count > 1}
    assert twice == {"POST /v1/turns", "POST /v1/goals", "GET /ui/turns/{turn_id}"}


@pytest.mark.anyio
async def test_every_mcp_tool_is_in_the_table() -> None:
    """The tools the MCP server lists are exactly those the table names."""
    server = build_mcp(service(), Tenant(agent_id="atlas", user_id="maya"))
    listed = {tool.name for tool in await server.list_tools()}
    named = [tool for rule in RULES for tool in rule.mcp]
    assert listed == set(named) and len(named) == len(set(named))


def test_changing_a_shared_item_needs_write_shared_and_a_private_one_write() -> None:
    """Every write on a shared item (add, change, resolve, forget) needs ``write_shared``."""
    for operation in (
        Operation.REMEMBER,
        Operation.CHANGE_MEMORY,
        Operation.ADD_GOAL,
        Operation.CHANGE_GOAL,
        Operation.NOTE,
        Operation.RESOLVE,
    ):
        assert needed(operation, Scope.SHARED) is Right.WRITE_SHARED, operation
        assert needed(operation, Scope.PRIVATE) is Right.WRITE, operation
    assert needed(Operation.SET_PROFILE) is Right.ADMINISTER
    assert needed(Operation.CHOOSE_MODE) is Right.ADMINISTER


def test_docs_security_renders_the_table_the_code_enforces() -> None:
    """The page holds the hook's marker, the hook expands it to the table from RULES, and the
    page no longer says goals and the scratch page need ``administer``."""
    page = (ROOT / "docs/security.md").read_text(encoding="utf-8")
    assert "<!-- prefrontal:rights -->" in page
    rendered = hook().on_page_markdown(page)
    assert rights_markdown() in rendered
    assert "<!-- prefrontal:rights -->" not in rendered
    assert "the agent's own state (profile, goals, scratch page)" not in page
    row = "| change, complete or abandon a goal, action or question | `write` | `write_shared` |"
    assert row in rendered


def grant(**fields: object) -> KeyGrant:
    base: dict[str, object] = {
        "name": "maya-web",
        "sha256": hash_key("k"),
        "agent_id": "atlas",
        "users": ("maya",),
    }
    return KeyGrant.model_validate(base | fields)


def test_another_mode_needs_administer_or_a_grant_naming_it() -> None:
    """No mode and the current one are open to every key; another needs either."""
    reader = grant(rights=("read",))
    assert may_choose_mode(reader, None, "support")
    assert may_choose_mode(reader, "support", "support")
    assert not may_choose_mode(reader, "admin", "support")
    assert may_choose_mode(grant(rights=("read",), modes=("admin",)), "admin", "support")
    assert not may_choose_mode(grant(rights=("read",), modes=("admin",)), "root", "support")
    assert may_choose_mode(grant(rights=("read", "administer")), "admin", "support")


@pytest.mark.parametrize(
    "name", ["agent", "Owner", "pre frontal", "SYSTEM", "end_turn", "Ｏｗｎｅｒ"]
)
def test_a_key_may_not_take_a_reserved_authors_name(name: str) -> None:
    """A key named like the owner, the agent or prefrontal is refused, in any case or width."""
    assert is_reserved(name)
    with pytest.raises(ValueError, match="reserved"):
        grant(name=name)


def test_ordinary_names_are_not_reserved() -> None:
    """Key names and sources a deployment uses stay allowed."""
    for name in ("maya-web", "curator", "calendar", "bank-kyc-service", "agentic-ops"):
        assert not is_reserved(name)
        grant(name=name)


def test_a_keys_file_entry_names_the_modes_a_key_may_pick() -> None:
    """``modes`` round-trips through a keys-file entry; a reserved key name is a config error."""
    entry = key_entry("k", name="trainer", agent_id="atlas", users=["maya"], modes=["training"])
    ring = KeyRing.parse('{"keys": [' + entry + "]}", origin="test")
    found = ring.authenticate("k")
    assert found is not None and found.modes == ("training",)
    assert may_choose_mode(found, "training", "support")
    reserved = entry.replace('"trainer"', '"Agent"')
    with pytest.raises(ConfigurationError, match="reserved"):
        KeyRing.parse('{"keys": [' + reserved + "]}", origin="test")
