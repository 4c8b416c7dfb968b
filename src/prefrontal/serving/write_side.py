"""``Orchestrator.end_turn`` as the servers call it.

Typed by a Protocol of the shared signature, and looked up on the
orchestrator when called, so that the servers build and serve everything
else on a prefrontal that does not have it yet; there ending a turn raises
:class:`UnavailableError` (HTTP 501, an MCP tool error).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any, Protocol, cast

from prefrontal.errors import PrefrontalError
from prefrontal.orchestrator import Orchestrator
from prefrontal.stores.tenancy import Tenant


class UnavailableError(PrefrontalError):
    """This build of prefrontal does not have the operation asked for."""


class Ended(Protocol):
    """What ``end_turn`` returns, as far as the servers read it."""

    turn_id: str
    written: bool
    message_ids: tuple[str, ...]
    memory_ids: tuple[str, ...]
    trace: Any


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
