"""Blobs and ``None`` are bound as they are: the driver's adapters for them change no value.

:func:`~prefrontal.stores.sqlite.driver.bind_as_they_are` registers an
adapter for ``bytes`` and one for ``None`` so the driver finds one at once
instead of failing two attribute look-ups per value. Every value is stored
as before (a blob, ``NULL``, the same bytes), a ``bytes`` subclass included;
an adapter the application registered first is kept.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from prefrontal.stores.sqlite.driver import bind_as_they_are, sqlite3


class _Blob(bytes):
    """A ``bytes`` subclass: the driver looks its adapter up by its own type."""


@pytest.fixture
def connection() -> Iterator[sqlite3.Connection]:
    with sqlite3.connect(":memory:") as connected:
        connected.execute("CREATE TABLE t (n INTEGER, value)")
        yield connected


def test_the_adapters_are_registered_on_import() -> None:
    for kind in (bytes, type(None)):
        assert (kind, sqlite3.PrepareProtocol) in sqlite3.adapters


def test_blobs_and_none_are_stored_as_they_are(connection: sqlite3.Connection) -> None:
    values: list[object] = [b"", b"\x00\xff" * 700, None, _Blob(b"sub"), bytearray(b"ba"), 3, "t"]
    connection.executemany("INSERT INTO t VALUES (?, ?)", list(enumerate(values)))
    connection.execute("INSERT INTO t VALUES (:n, :value)", {"n": 99, "value": None})
    rows = connection.execute("SELECT n, value, typeof(value) FROM t ORDER BY n").fetchall()
    types = ["blob", "blob", "null", "blob", "blob", "integer", "text", "null"]
    expected = [bytes(v) if isinstance(v, bytes | bytearray) else v for v in values] + [None]
    assert [row[1] for row in rows] == expected
    assert [row[2] for row in rows] == types


def test_an_adapter_registered_before_is_kept(connection: sqlite3.Connection) -> None:
    key = (bytes, sqlite3.PrepareProtocol)
    ours = sqlite3.adapters[key]
    try:
        sqlite3.register_adapter(bytes, lambda value: value[::-1])
        bind_as_they_are()
        connection.execute("INSERT INTO t VALUES (1, ?)", (b"ab",))
        assert connection.execute("SELECT value FROM t").fetchone() == (b"ba",)
    finally:
        sqlite3.adapters[key] = ours
