"""A retried ``end_turn``: the same reply is answered again, another reply is a conflict.

``end_turn`` is idempotent for one turn and one reply: a retry (a client
that lost the answer, a second worker) gets what the first call wrote. A
call that gives another reply for a turn already ended would otherwise be
dropped without a word; :func:`check_same_reply` raises
:class:`~prefrontal.errors.TurnConflictError` naming both replies' hashes
instead (the texts themselves stay out of errors and logs).
"""

from __future__ import annotations

import hashlib

from prefrontal.errors import TurnConflictError
from prefrontal.traces.models import TurnTrace


def reply_hash(reply: str) -> str:
    """A short, stable hash of a reply's text: BLAKE2b, 16 hex digits."""
    return hashlib.blake2b(reply.encode(), digest_size=8).hexdigest()


def check_same_reply(trace: TurnTrace, reply: str) -> None:
    """Raise :class:`TurnConflictError` when ``trace`` was ended with a reply other than ``reply``.

    A trace not ended yet, or ended with this very reply, passes; so does one
    whose reply was forgotten since (there is nothing left to compare).
    """
    ending = trace.ending
    if ending is None or ending.reply == reply or reply_forgotten(trace):
        return
    raise TurnConflictError(trace.turn_id, reply_hash(ending.reply), reply_hash(reply))


def reply_forgotten(trace: TurnTrace) -> bool:
    """The turn's reply message was forgotten: its trace no longer holds the text."""
    return any(item_id.endswith(":reply") for item_id in trace.forgotten)
