"""SQLite: which traces are open, known from an index without reading their bodies.

A turn's trace is written open when its context is ready, and its end
checks that it has not ended yet (twice: before and inside the transaction
that writes the ending). The body of a long conversation's trace is tens of
kilobytes, just written, so a reader finds it in the write-ahead log, page
after page. :data:`OPEN_INDEX` holds each trace's key and whether its body
ends as an open trace's (:data:`~prefrontal.stores.traces.OPEN_SUFFIX`),
worked out when the trace is written; :data:`OPEN_SQL` reads that from the
index alone.
"""

from __future__ import annotations

from prefrontal.stores.traces import OPEN_SUFFIX

OPENED = f"substr(CAST(body AS BLOB), -{len(OPEN_SUFFIX)}) = CAST('{OPEN_SUFFIX}' AS BLOB)"
"""SQL: the body ends as an open trace's, compared as bytes (the trace store's check of a
body, its suffix written in: an index's expression takes no parameter)."""
assert "'" not in OPEN_SUFFIX

OPEN_INDEX = (
    f"CREATE INDEX IF NOT EXISTS traces_open ON traces (turn_id, agent_id, user_id, ({OPENED}))"
)
"""Each trace's key and whether its body ends as an open trace's, worked out when it is
written: the check of an open trace reads a few bytes of this index instead of the body (tens
of kilobytes for a long conversation's turn, read back from the log just after it was written)."""

OPEN_SQL = f"""
SELECT {OPENED} FROM traces INDEXED BY traces_open
WHERE turn_id = ? AND agent_id = ? AND user_id = ?
"""
"""The trace's row in :data:`OPEN_INDEX`: whether it is open, the body not read (the very
expression of the index, answered from it; ``INDEXED BY`` as the turn id's own unique index
would be chosen otherwise, which leads to the body)."""
