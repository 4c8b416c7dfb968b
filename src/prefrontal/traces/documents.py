"""A trace as the JSON document a trace store keeps, and back, each document parsed once.

A turn's trace is read back several times soon after it is written: the
turn's end reads it to learn whether it ended already and to record its
ending, the next turn of the session reads its parent's. Each read used to
parse the whole document again (the context as sent is in it: about 0.7 ms
for a trace of a long conversation's turn). :func:`parse` remembers the
last :data:`PARSED_DOCUMENTS` documents it parsed or :func:`serialize`
wrote, by their text, and gives the same frozen trace for the same
document.

The cache holds values only (frozen traces, by their JSON): a document
parses to an equal trace whether it was remembered or not. The traces hold
users' words, so the cache is in the forgetting registry
(:func:`prefrontal.forgetting.register`): erasing a user or forgetting a
memory empties it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Final

from prefrontal.forgetting import register
from prefrontal.traces.models import TurnTrace

PARSED_DOCUMENTS: Final = 8
"""Documents whose traces :func:`parse` remembers: a turn's open trace and its ended one,
for the few turns a process runs at once. Each remembered trace is dozens of objects the
garbage collector walks, so the cache stays small (a store keeping a thousand traces as
JSON holds fewer than three objects a trace, these included)."""

_SERIALIZER = TurnTrace.__pydantic_serializer__


class _Parsed:
    """The last ``size`` documents and their traces, least recently used dropped first.

    Safe to share between threads (the store backends read in worker threads).
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[str | bytes, TurnTrace] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, document: str | bytes) -> TurnTrace | None:
        with self._lock:
            trace = self._entries.get(document)
            if trace is not None:
                self._entries.move_to_end(document)
            return trace

    def put(self, document: str | bytes, trace: TurnTrace) -> TurnTrace:
        with self._lock:
            self._entries[document] = trace
            self._entries.move_to_end(document)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
            return trace

    def clear(self) -> None:
        """Drop every document (an erased user's words among them)."""
        with self._lock:
            self._entries.clear()


_PARSED = _Parsed(PARSED_DOCUMENTS)
register(_PARSED)


def serialize(trace: TurnTrace) -> bytes:
    """``trace`` as its JSON document (``trace.model_dump_json()``, as bytes), remembered:
    parsing that document gives ``trace`` back without parsing."""
    document: bytes = _SERIALIZER.to_json(trace)
    _PARSED.put(document, trace)
    return document


def remember(document: str | bytes, trace: TurnTrace) -> None:
    """Note that ``document`` (a store's JSON of ``trace``) parses to ``trace``."""
    _PARSED.put(document, trace)


def parse(document: str | bytes) -> TurnTrace:
    """The trace of a stored JSON ``document``: remembered, or parsed (and then remembered).

    Raises pydantic's ``ValidationError`` for a document that is not a trace
    (the stores' readers report it as unreadable).
    """
    return _PARSED.get(document) or _PARSED.put(document, TurnTrace.model_validate_json(document))


def remembered_documents() -> int:
    """How many documents are remembered now (for tests)."""
    return len(_PARSED)
