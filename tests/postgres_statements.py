"""Statements sent to PostgreSQL, counted at the driver: every pool asyncpg creates in the block.

:func:`counted_statements` wraps ``asyncpg.create_pool`` so that each
connection of a pool created inside the block logs its statements
(asyncpg's query loggers: one record per ``execute``, ``fetch*``,
``executemany`` and transaction ``BEGIN``/``COMMIT``/``ROLLBACK``) into one
list. It counts what the stores send whatever the checkout, so the same
counter measures today's code and another's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import asyncpg


@contextlib.contextmanager
def counted_statements() -> Iterator[list[str]]:
    """The statements sent by the pools created in the block, in order, as they are sent."""
    sent: list[str] = []
    original = asyncpg.create_pool

    def log(record: Any) -> None:
        sent.append(record.query)

    def counting_pool(*args: Any, **kwargs: Any) -> Any:
        setup = kwargs.pop("init", None)

        async def init(connection: Any) -> None:
            connection.add_query_logger(log)
            if setup is not None:
                await setup(connection)

        return original(*args, init=init, **kwargs)

    asyncpg.create_pool = counting_pool
    try:
        yield sent
    finally:
        asyncpg.create_pool = original
