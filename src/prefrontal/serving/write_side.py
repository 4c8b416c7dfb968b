"""The write side as the servers call it: ``Orchestrator.end_turn`` and ``Orchestrator.memory``.

Typed by Protocols of the shared signatures, and looked up on the
orchestrator when called, so that the servers build and serve turns and
traces on a prefrontal that does not have them yet; there each such call
raises :class:`UnavailableError` (HTTP 501, an MCP tool error).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any, Literal, Protocol, cast

from prefrontal.errors import PrefrontalError
from prefrontal.orchestrator import Orchestrator
from prefrontal.stores.long_term import MemoryItem, MemoryKind, ScoredMemory
from prefrontal.stores.tenancy import Scope, Tenant


class UnavailableError(PrefrontalError):
    """This build of prefrontal does not have the operation asked for."""


class Ended(Protocol):
    """What ``end_turn`` returns, as far as the servers read it."""

    turn_id: str
    written: bool
    message_ids: tuple[str, ...]
    memory_ids: tuple[str, ...]
    trace: Any


class Erased(Protocol):
    """What ``erase`` returns, as far as the servers read it."""

    removed: dict[str, int]


class MemoryApi(Protocol):
    """The memory API's calls the servers make."""

    async def remember(
        self,
        tenant: Tenant,
        content: str,
        *,
        importance: float = 0.5,
        source: str | None = None,
        kind: MemoryKind = MemoryKind.FACT,
        store: Literal["episodic", "semantic"] = "semantic",
        scope: Scope = Scope.PRIVATE,
        tags: Sequence[str] = (),
    ) -> MemoryItem: ...

    async def recall(
        self, tenant: Tenant, query: str, *, top_k: int = 10
    ) -> list[ScoredMemory]: ...

    async def update(
        self,
        tenant: Tenant,
        item_id: str,
        *,
        content: str | None = None,
        importance: float | None = None,
    ) -> MemoryItem: ...

    async def forget(self, tenant: Tenant, item_id: str) -> bool: ...

    async def erase(self, agent_id: str, user_id: str) -> Erased: ...


def memory_api(orchestrator: Orchestrator) -> MemoryApi:
    """The orchestrator's memory API."""
    memory = getattr(orchestrator, "memory", None)
    if memory is None:
        raise UnavailableError("this build of prefrontal has no memory API")
    return cast(MemoryApi, memory)


async def end_turn(
    orchestrator: Orchestrator,
    tenant: Tenant,
    turn_id: str,
    reply: str,
    *,
    tool_calls: Sequence[dict[str, Any]],
    outcome: str | None,
) -> Ended:
    """``orchestrator.end_turn`` for ``tenant``'s turn ``turn_id``."""
    method = getattr(orchestrator, "end_turn", None)
    if method is None:
        raise UnavailableError("this build of prefrontal cannot end turns")
    tool_call = importlib.import_module("prefrontal.exchange.models").ToolCall
    ended = await method(
        turn_id,
        reply,
        agent_id=tenant.agent_id,
        user_id=tenant.user_id,
        tool_calls=[tool_call(**call) for call in tool_calls],
        outcome=outcome,
    )
    return cast(Ended, ended)
