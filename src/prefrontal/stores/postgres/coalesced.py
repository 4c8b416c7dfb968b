"""Single-statement writes begun together, sent as one statement.

When a turn ends, its writes start at once (the trace, each memory
store's recall counters...), each a statement alone. :class:`Coalescer`
lets the first wait one pass of the event loop for the others begun with
it, then sends them as one statement: each an ``INSERT``, ``UPDATE`` or
``DELETE`` in a ``WITH`` of its own, its parameters renumbered. One
statement is atomic and sees one snapshot; the writes it joins are to
different tables (:func:`target`: never two to one table, whose rows they
might both change), so none sees or undoes another's. When the statement
fails, each write is sent again alone, so each gets its own answer (an
erased tenant's insert refused, say) and the others are still written. A
joined statement, once sent, is waited for even when its sender is
cancelled (the cancellation is raised after it): its outcome is every
joined write's, so none is left unknown and sent again.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
import anyio.lowlevel

_WRITE = re.compile(r"\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([A-Za-z_][A-Za-z0-9_]*)", re.I)
_RETURNING = re.compile(r"\bRETURNING\b", re.I)
_PARAMETER = re.compile(r"\$(\d+)")

Send = Callable[[str, Sequence[Any]], Awaitable[None]]
"""Send one statement with its parameters, alone (a write of one statement)."""


def target(statement: str) -> str | None:
    """The table ``statement`` writes when it may join others: an ``INSERT``, ``UPDATE`` or
    ``DELETE`` returning nothing; ``None`` for any other."""
    found = _WRITE.match(statement)
    if found is None or returns_rows(statement):
        return None
    return found.group(1).lower()


def returns_rows(statement: str) -> bool:
    """Whether ``statement`` has a ``RETURNING`` clause (the word, in any case).

    The word is looked for in the statement upper-cased first (a scan in C); only a statement
    holding it is searched for it as a word, a case-blind search that tries every place.
    """
    return "RETURNING" in statement.upper() and _RETURNING.search(statement) is not None


def joined(writes: Sequence[tuple[str, Sequence[Any]]]) -> tuple[str, list[Any]]:
    """One statement making every write of ``writes``, and its parameters."""
    parts: list[str] = []
    args: list[Any] = []
    for n, (statement, values) in enumerate(writes):
        parts.append(f"w{n} AS ({renumbered(statement, len(args))})")
        args += values
    return "WITH " + ", ".join(parts) + " SELECT 1", args


def renumbered(statement: str, offset: int) -> str:
    """``statement`` with each parameter ``$n`` written ``$(n + offset)``.

    Split at its parameters (text and numbers alternate), the numbers rewritten, joined again.
    """
    if offset == 0:
        return statement
    parts = _PARAMETER.split(statement)
    parts[1::2] = [f"${int(n) + offset}" for n in parts[1::2]]
    return "".join(parts)


class _Write:
    __slots__ = ("alone", "args", "done", "statement", "table")

    def __init__(self, statement: str, args: Sequence[Any], table: str) -> None:
        self.statement, self.args, self.table = statement, args, table
        self.done = anyio.Event()
        self.alone = False
        """Set when the write is to be sent alone by its own caller."""


class Coalescer:
    """The single-statement writes of one database begun in the same pass of the event loop."""

    def __init__(self) -> None:
        self._pending: list[_Write] = []
        self._leading = False

    async def execute(self, statement: str, args: Sequence[Any], send: Send) -> None:
        """Make the write ``statement`` (``args``): with the others begun meanwhile, in one
        statement (``send``), when it may (:func:`target`); else alone."""
        table = target(statement)
        if table is None or any(w.table == table for w in self._pending):
            await send(statement, args)
            return
        write = _Write(statement, args, table)
        self._pending.append(write)
        if self._leading:
            await self._follow(write, send)
            return
        self._leading = True
        batch: list[_Write] | None = None
        try:
            await anyio.lowlevel.checkpoint()  # the writes begun with this one join it meanwhile
            batch, self._pending, self._leading = self._pending, [], False
            with anyio.CancelScope(shield=len(batch) > 1):
                # the others' writes ride on this send: once sent, it completes, so none is
                # sent twice (its outcome unknown) nor lost; a cancellation waits for it
                await self._send(write, batch, send)
            await anyio.lowlevel.checkpoint_if_cancelled()
        finally:
            if batch is None:  # cancelled while waiting: the others go alone
                batch, self._pending, self._leading = self._pending, [], False
            for other in batch:
                if other is not write and not other.done.is_set():
                    other.alone = True
                    other.done.set()

    async def _follow(self, write: _Write, send: Send) -> None:
        """Wait for the leader to send ``write``; send it alone when asked to."""
        try:
            await write.done.wait()
        except BaseException:
            if write in self._pending:
                self._pending.remove(write)
            raise
        if write.alone:
            await send(write.statement, write.args)

    async def _send(self, own: _Write, batch: list[_Write], send: Send) -> None:
        """Send ``batch`` (``own`` among them) as one statement; when that fails, each write
        again alone (``own``'s error raised here, the others' by their callers)."""
        if len(batch) == 1:
            await send(own.statement, own.args)
            return
        statement, args = joined([(w.statement, w.args) for w in batch])
        try:
            await send(statement, args)
        except Exception:
            for other in batch:
                if other is not own:
                    other.alone = True
                    other.done.set()
            await send(own.statement, own.args)
            return
        for other in batch:
            other.done.set()
