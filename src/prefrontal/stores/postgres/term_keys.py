"""How PostgreSQL stores an analysed term: itself, or a digest when it is long."""

from __future__ import annotations

import hashlib

LONGEST_KEY = 64
"""Terms longer than this many characters are indexed by their digest instead."""


def key(term: str) -> str:
    """How ``term`` is stored and looked up: itself, or ``~`` and its SHA-256 when long.

    An index entry must fit in a page; a term may be any length (a long
    word, a base64 blob). Analysed terms are letters and digits only, so a
    digest key, starting with ``~``, never equals a real term; two long
    terms share a key only if SHA-256 collides.
    """
    if len(term) <= LONGEST_KEY:
        return term
    return "~" + hashlib.sha256(term.encode("utf-8")).hexdigest()
