"""The text of forgotten messages taken out of their turns' traces.

A turn's trace keeps the user's input (so that ``end_turn`` can record it
from a bare turn id) and, once ended, the reply. When one of the turn's
messages is forgotten its text goes from the trace as well: the user's
message leaves ``user_input`` (``None``), the reply leaves the ending's
``reply`` (empty), the context as sent (``sent``, which ends with the user's
message) is emptied, and the trace lists the forgotten ids in ``forgotten``.
The rest of the trace (timings, ids, token counts) stays: it holds no text
of what was said.
"""

from __future__ import annotations

from collections.abc import Iterable

from prefrontal.stores.conversation import ConversationTurn, Role
from prefrontal.stores.tenancy import Tenant
from prefrontal.stores.traces import TraceStore
from prefrontal.traces.models import TurnTrace

MESSAGE_SUFFIXES = (":user", ":reply")
"""How a turn's two message ids end (``<turn>:user``, ``<turn>:reply``)."""


def message_turn(item_id: str) -> str | None:
    """The turn a message id belongs to; ``None`` for an id that names no turn's message."""
    for suffix in MESSAGE_SUFFIXES:
        if item_id.endswith(suffix) and len(item_id) > len(suffix):
            return item_id.removesuffix(suffix)
    return None


async def redact(traces: TraceStore, tenant: Tenant, messages: Iterable[ConversationTurn]) -> int:
    """Take ``messages``' text out of the traces of the turns they belong to; traces changed."""
    by_turn: dict[str, list[ConversationTurn]] = {}
    for message in messages:
        turn_id = message.metadata.get("turn_id")
        if isinstance(turn_id, str):
            by_turn.setdefault(turn_id, []).append(message)
    changed = 0
    for turn_id, said in by_turn.items():
        trace = await traces.get(tenant, turn_id)
        if trace is not None:
            await traces.put(redacted(trace, said))
            changed += 1
    return changed


def redacted(trace: TurnTrace, messages: Iterable[ConversationTurn]) -> TurnTrace:
    """``trace`` without the text of ``messages`` (its own user message or reply)."""
    update: dict[str, object] = {}
    forgotten = list(trace.forgotten)
    for message in messages:
        if message.role is Role.USER:
            update["user_input"] = None
        elif message.role is Role.ASSISTANT and trace.ending is not None:
            update["ending"] = trace.ending.model_copy(update={"reply": ""})
        forgotten.append(message.item_id)
    update["forgotten"] = tuple(dict.fromkeys(forgotten))
    update["sent"] = ()
    return trace.model_copy(update=update)
