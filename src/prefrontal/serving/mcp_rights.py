"""The MCP server's tools follow the same grants as the HTTP API.

Over streamable HTTP with keys, :class:`~prefrontal.serving.mcp_run.KeyGate`
puts the caller's grant in the request's ASGI scope under :data:`GRANT`;
each tool calls :func:`require` with the right the one table of rights
(:data:`prefrontal.serving.rights.RULES`) names for it: ``start_turn``,
``recall`` and ``trace`` read; ``end_turn``, ``remember``, ``forget`` and the
goal and scratch tools write, and changing a shared memory, goal or scratch
entry needs ``write_shared``. What a tool writes records its author
(:func:`author_in`): the key's name. Over stdio, or over HTTP on loopback
without keys, there is no grant: the server acts for the one person who
started it, with every right, and what the tools write is the agent's own.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from prefrontal.serving.keys import KeyGrant, Right
from prefrontal.serving.rights import refusal
from prefrontal.stores.authors import AGENT

__all__ = ["GRANT", "author_in", "grant_in", "require"]

GRANT = "prefrontal.grant"
"""The ASGI scope key that holds the grant of the request's API key."""


def grant_in(ctx: Context[Any, Any]) -> KeyGrant | None:
    """The grant of the key the tool call came with, or ``None`` without keys."""
    try:
        request = ctx.request_context.request
    except ValueError:
        return None
    scope = getattr(request, "scope", None)
    grant = scope.get(GRANT) if isinstance(scope, dict) else None
    return grant if isinstance(grant, KeyGrant) else None


def require(ctx: Context[Any, Any], right: Right) -> None:
    """Return when the call may do what ``right`` allows; a tool error saying so otherwise."""
    refused = refusal(grant_in(ctx), right)
    if refused is not None:
        raise ToolError(refused)


def author_in(ctx: Context[Any, Any]) -> str:
    """Who writes what the tool call stores: its key's name, else the agent itself."""
    grant = grant_in(ctx)
    return AGENT if grant is None else grant.name
