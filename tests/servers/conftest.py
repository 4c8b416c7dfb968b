"""Fixtures of the server tests: a SQLite file seeded with the demo agent."""

from __future__ import annotations

from pathlib import Path

import pytest

from prefrontal.demo import seed
from prefrontal.stores import sqlite


async def seeded(path: Path) -> Path:
    """``path`` as a SQLite database holding the demo agent."""
    stores = sqlite.open_stores(path)
    try:
        await seed(stores)
    finally:
        await stores.aclose()
    return path


@pytest.fixture
async def demo_db(tmp_path: Path) -> Path:
    """A fresh SQLite file with the demo agent, for one server."""
    return await seeded(tmp_path / "server.db")
