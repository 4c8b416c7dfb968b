"""The ``store`` fixture of the ported LangGraph store tests that use the sync methods."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from prefrontal.stores import Stores, sqlite


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[object]:
    """A PrefrontalStore over in-memory stores, or over a SQLite file (sync and async use)."""
    integration = pytest.importorskip("prefrontal.integrations.langgraph")
    if request.param == "memory":
        stores = Stores.in_memory()
    else:
        stores = sqlite.open_stores(tmp_path / "langgraph.db")
    with integration.PrefrontalStore(stores, agent_id="agent", user_id="user") as opened:
        yield opened
        opened.run(stores.aclose)
