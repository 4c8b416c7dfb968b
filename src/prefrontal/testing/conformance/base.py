"""What every suite shares: the anyio backend, the tenants, a fixed clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from prefrontal.stores.tenancy import Tenant

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
"""A fixed instant the suites build their timelines from."""

ALICE = Tenant(agent_id="agent-1", user_id="alice")
BOB = Tenant(agent_id="agent-1", user_id="bob")
"""Another user of the same agent."""
STRANGER = Tenant(agent_id="agent-2", user_id="alice")
"""The same user name under another agent."""

FTS_SYNTAX = (
    "NEAR(coffee tea) \"unbalanced ( content: * OR AND NOT ^coffee col:tea {a b} -x + '",
    '"',
    "(",
    ")",
    "*",
    "coffee*",
    "content:coffee",
    "NEAR(",
    "AND",
    'coffee" OR "',
)
"""Text that is query syntax to FTS5: backends must read it as words."""


def at(minutes: float) -> datetime:
    """``T0`` plus ``minutes``."""
    return T0 + timedelta(minutes=minutes)


class StoreSuite:
    """Base of every suite: anyio on asyncio, and the fixture to override."""

    pytestmark = pytest.mark.anyio

    @pytest.fixture
    def anyio_backend(self) -> str:
        """The suites run on asyncio."""
        return "asyncio"

    @pytest.fixture
    def store(self) -> Any:
        """Override: return (or yield) a fresh, empty store of the kind under test."""
        raise NotImplementedError("override the `store` fixture with your backend")
