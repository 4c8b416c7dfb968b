"""A trace as the JSON document a trace store keeps, and back, each document parsed once.

A turn's trace is read back several times soon after it is written: the
turn's end reads it to learn whether it ended already and to record its
ending, the next turn of the session reads its parent's. Each read used to
parse the whole document again (the context as sent is in it: about 0.7 ms
for a trace of a long conversation's turn). :func:`parse` remembers the
last :data:`PARSED_DOCUMENTS` documents it parsed or :func:`serialize`
wrote, by their text, and gives the same frozen trace for the same
document.

A turn's trace is also written twice: open when its context is ready, then
with its ending, a copy of the open trace with only ``ending`` set (and
again as each later step of the ending is added). ``ending`` is the last
field of a trace's JSON, so :func:`serialize` writes such a copy as the
JSON it wrote for the trace it was copied from, up to ``"ending":``, and
the ending's own JSON: the very text ``trace.model_dump_json()`` gives,
without serializing the context as sent again. It knows a copy by every
other field holding the very same object as the trace it last wrote for
that turn (:data:`WRITTEN_HEADS` turns are remembered).

The cache holds values only (frozen traces, by their JSON): a document
parses to an equal trace whether it was remembered or not. The traces hold
users' words, so the cache is in the forgetting registry
(:func:`prefrontal.forgetting.register`): erasing a user or forgetting a
memory empties it.
"""

from __future__ import annotations

from typing import Final

from prefrontal.forgetting import register
from prefrontal.recent import Recent
from prefrontal.traces.models import TurnEnding, TurnTrace

PARSED_DOCUMENTS: Final = 8
"""Documents whose traces :func:`parse` remembers: a turn's open trace and its ended one,
for the few turns a process runs at once. Each remembered trace is dozens of objects the
garbage collector walks, so the cache stays small (a store keeping a thousand traces as
JSON holds fewer than three objects a trace, these included)."""

_SERIALIZER = TurnTrace.__pydantic_serializer__
_ENDING_SERIALIZER = TurnEnding.__pydantic_serializer__
_HEAD_FIELDS: Final = tuple(name for name in TurnTrace.model_fields if name != "ending")
assert tuple(TurnTrace.model_fields)[-1] == "ending", "a trace's JSON must end with its ending"
_NO_ENDING: Final = b"null}"
"""How an open trace's JSON ends: its ``ending``, then the closing brace."""
WRITTEN_HEADS: Final = PARSED_DOCUMENTS // 2
"""Turns whose last written trace :func:`serialize` remembers with its JSON up to ``ending``:
the turns whose documents (an open and an ended one each) :func:`parse` remembers, so no
trace stays alive longer for it (with 8, a growing conversation ran more collections)."""


_PARSED: Recent[str | bytes, TurnTrace] = Recent(PARSED_DOCUMENTS)
_HEADS: Recent[str, tuple[TurnTrace, bytes]] = Recent(WRITTEN_HEADS)
"""Per turn, the trace last written and its JSON up to its ending (``…,"ending":``), the last
:data:`WRITTEN_HEADS` turns used."""
register(_PARSED)
register(_HEADS)


def serialize(trace: TurnTrace) -> bytes:
    """``trace`` as its JSON document (``trace.model_dump_json()``, as bytes), remembered:
    parsing that document gives ``trace`` back without parsing.

    A copy of the trace last written for its turn that differs in ``ending`` only is
    written from that trace's JSON and the ending's (the module docstring).
    """
    head = _head_of(trace)
    if head is None:
        document: bytes = _SERIALIZER.to_json(trace)
        if trace.ending is None and type(trace) is TurnTrace:
            _HEADS.put(trace.turn_id, (trace, document[: -len(_NO_ENDING)]))
    else:
        ending = _NO_ENDING if trace.ending is None else _ENDING_SERIALIZER.to_json(trace.ending)
        document = head + ending + (b"" if trace.ending is None else b"}")
        _HEADS.put(trace.turn_id, (trace, head))
    _PARSED.put(document, trace)
    return document


def _head_of(trace: TurnTrace) -> bytes | None:
    """The JSON up to ``"ending":`` of the trace last written for ``trace``'s turn, when
    ``trace`` holds the very same object in every other field; else ``None``."""
    held = _HEADS.get(trace.turn_id)
    if held is None or type(trace) is not TurnTrace:
        return None
    written, head = held
    before, now = written.__dict__, trace.__dict__
    for name in _HEAD_FIELDS:
        if before[name] is not now[name]:
            return None
    return head


def written_heads() -> int:
    """How many turns' last written traces are remembered now (for tests)."""
    return len(_HEADS)


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
