"""Statements sent to PostgreSQL, logged at the driver: every pool asyncpg creates in the block.

:func:`logged_statements` wraps ``asyncpg.create_pool`` so that each
connection of a pool created inside the block logs its statements
(asyncpg's query loggers: one record per ``execute``, ``fetch*``,
``executemany`` and transaction ``BEGIN``/``COMMIT``/``ROLLBACK``) into one
list, each with its arguments; :func:`counted_statements` keeps their SQL
only. Both see what the stores send whatever the checkout, so the same
counter measures today's code and another's.

asyncpg hands a record to the loggers in the event loop's next pass after
its statement: await ``anyio.sleep(0)`` before reading the list when the
last statement matters.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import asyncpg


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement as sent: its SQL and its arguments (a tuple of values; for an
    ``executemany``, the sequence of such tuples the caller passed)."""

    query: str
    args: Any

    @property
    def many(self) -> bool:
        """Sent by ``executemany``: its arguments are the caller's sequence of rows (a
        list, as the stores pass them), where every other method's are a tuple."""
        return not isinstance(self.args, tuple)


@contextlib.contextmanager
def logged_statements() -> Iterator[list[Statement]]:
    """The statements sent by the pools created in the block, in order, with their arguments."""
    sent: list[Statement] = []
    with _logging_pools(lambda record: sent.append(Statement(record.query, record.args))):
        yield sent


@contextlib.contextmanager
def counted_statements() -> Iterator[list[str]]:
    """The SQL of the statements sent by the pools created in the block, in order."""
    sent: list[str] = []
    with _logging_pools(lambda record: sent.append(record.query)):
        yield sent


@contextlib.contextmanager
def _logging_pools(log: Callable[[Any], None]) -> Iterator[None]:
    """Every pool created in the block has ``log`` as each connection's query logger."""
    original = asyncpg.create_pool

    def logging_pool(*args: Any, **kwargs: Any) -> Any:
        setup = kwargs.pop("init", None)

        async def init(connection: Any) -> None:
            connection.add_query_logger(log)
            if setup is not None:
                await setup(connection)

        return original(*args, init=init, **kwargs)

    asyncpg.create_pool = logging_pool
    try:
        yield
    finally:
        asyncpg.create_pool = original
