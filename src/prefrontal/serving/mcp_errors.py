"""MCP tool errors a model can act on: which argument, what is wrong, and whether to retry.

:class:`PrefrontalMCP` is the SDK's server with three differences, for every
tool registered on it:

* an argument the tool does not take is refused (as the HTTP API refuses an
  unknown field), and the tools' input schemas say so
  (``additionalProperties: false``); the list is compacted to what a model
  needs to call the tools (:mod:`prefrontal.serving.mcp_schema`);
* a failure becomes one sentence: the arguments that are wrong and why
  (never pydantic's help links), a token budget below the agent's floor
  (naming the floor), a turn or memory that is not there, a
  store that is unavailable, or, when the server runs as many turns as it
  admits, that the call may be retried after a number of seconds;
* an unexpected failure is logged once, in one line
  (:func:`~prefrontal.serving.failures.log_unexpected`), and the model is
  told only that the server failed.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult, Tool
from pydantic import ValidationError

from prefrontal.errors import (
    BudgetBelowFloorError,
    ErasedTenantError,
    ItemRejectedError,
    NotFoundError,
    OverloadedError,
    StoreError,
)
from prefrontal.serving.failures import log_unexpected
from prefrontal.serving.field_errors import summary
from prefrontal.serving.mcp_schema import compact


class PrefrontalMCP(MCPServer):
    """An MCP server whose tools refuse unknown arguments and fail in words (see the module)."""

    async def list_tools(self) -> list[Tool]:
        """The tools, compacted, each input schema closed to arguments it does not name."""
        return [compact(tool) for tool in await super().list_tools()]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> CallToolResult | InputRequiredResult:
        """Call ``name``; every failure is a :class:`ToolError` whose text says what to do."""
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            known = tool.parameters.get("properties", {})
            unknown = sorted(set(arguments) - set(known))
            if unknown:
                raise ToolError(
                    f"{name}: unknown argument(s) {', '.join(unknown)}; "
                    f"it takes {', '.join(known) or 'none'}."
                )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            raise ToolError(actionable(name, error)) from None


def actionable(tool: str, error: ToolError) -> str:
    """What the model should know about ``error`` of ``tool``, in one sentence or two."""
    cause = _innermost(error.__cause__) if error.__cause__ is not None else None
    if isinstance(cause, ValidationError):
        return f"{tool}: invalid arguments: {summary(cause.errors())}. Correct them and call again."
    if isinstance(cause, OverloadedError):
        wait = max(1, round(cause.retry_after_s))
        return (
            f"{tool}: the server is running as many turns as it admits. This is temporary: "
            f"retry the same call in {wait} s."
        )
    if isinstance(cause, BudgetBelowFloorError):
        return (
            f"{tool}: {_sentence(str(cause))} "
            f"Call again with a token_budget of at least {cause.floor}."
        )
    if isinstance(cause, NotFoundError | ItemRejectedError | ErasedTenantError | ValueError):
        return f"{tool}: {_sentence(str(cause))}"
    if isinstance(cause, StoreError):
        return f"{tool}: a memory store is unavailable. This is temporary: retry in a few seconds."
    if isinstance(error, UnexpectedToolError):
        log_unexpected(cause or error, tool=tool)
        return f"{tool}: the server failed to handle the call; it has been logged."
    return str(error)


def _innermost(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _sentence(text: str) -> str:
    text = " ".join(text.split()) or "failed"
    return text if text.endswith((".", "!", "?")) else text + "."
