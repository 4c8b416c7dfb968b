"""Bounded echoes: what an error message may quote of a caller's input.

An error names the id or value it refuses so that the caller can see which
one, but never more than :data:`MAX_QUOTED_CHARS` of it: a megabyte id must
not come back as a megabyte error (nor fill a log line). Ids are bounded at
the edge too (256 characters, :data:`MAX_ID_CHARS`), before any work.
"""

from __future__ import annotations

from prefrontal.ids import MAX_ID_CHARS

__all__ = ["MAX_DETAIL_CHARS", "MAX_ID_CHARS", "MAX_QUOTED_CHARS", "bounded", "quoted"]

MAX_QUOTED_CHARS = 40
"""The most of one input an error message quotes."""
MAX_DETAIL_CHARS = 400
"""The longest error detail a server sends."""


def quoted(value: object) -> str:
    """``value`` quoted as ``repr`` does, its first :data:`MAX_QUOTED_CHARS` characters and
    ``…`` when there is more."""
    text = str(value)
    if len(text) <= MAX_QUOTED_CHARS:
        return repr(text)
    return repr(text[:MAX_QUOTED_CHARS]) + "…"


def bounded(detail: str) -> str:
    """``detail`` cut to :data:`MAX_DETAIL_CHARS` characters (``…`` marks a cut)."""
    return detail if len(detail) <= MAX_DETAIL_CHARS else detail[: MAX_DETAIL_CHARS - 1] + "…"
