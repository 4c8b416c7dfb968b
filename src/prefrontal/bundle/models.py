"""The output of a turn: ``ContextBundle``, the fragments chosen and their rendered text.

The pieces (:class:`Section`, :class:`Provenance`, :class:`Fragment`) are
defined in :mod:`prefrontal.bundle.fragments` and re-exported here.
"""

from __future__ import annotations

from datetime import datetime

from prefrontal.bundle.fragments import SECTION_ORDER, Fragment, Frozen, Provenance, Section
from prefrontal.bundle.messages import Message, to_messages

__all__ = ["SECTION_ORDER", "ContextBundle", "Fragment", "Frozen", "Provenance", "Section"]


class ContextBundle(Frozen):
    """The assembled context of one turn.

    Contract: ``total_tokens`` is the token count of ``text`` with the real
    tokenizer and never exceeds ``budget``.
    """

    turn_id: str
    text: str
    total_tokens: int
    budget: int
    fragments: tuple[Fragment, ...]
    source_breakdown: dict[str, int]
    checksum: str
    tokenizer: str
    version: str
    created_at: datetime

    def section(self, section: Section | str) -> tuple[Fragment, ...]:
        """The fragments of one section, in rendering order."""
        return tuple(f for f in self.fragments if f.section == section)

    def to_messages(self, user_input: str | None = None) -> list[Message]:
        """The context as chat messages (see :func:`prefrontal.bundle.messages.to_messages`)."""
        return to_messages(self.fragments, user_input)
