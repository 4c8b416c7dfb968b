"""Rendering fragments as text: a heading per section, group headers, one line per fragment."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby

from prefrontal.bundle.fragments import SECTION_ORDER, Fragment, Section

SECTION_SEPARATOR = "\n\n"

_SECTION_HEADERS = {section: f"## {section.heading}" for section in Section}
"""Each section's header line, formatted once."""

_SECTION_INDEX = {section: index for index, section in enumerate(SECTION_ORDER)}
"""Each section's place in the fixed order."""


def section_header(section: Section) -> str:
    """The line a section starts with."""
    return _SECTION_HEADERS[section]


def group_header(heading: str) -> str:
    """The line a group (such as one session's date) starts with."""
    return f"[{heading}]"


def in_rendering_order(fragments: Iterable[Fragment]) -> list[Fragment]:
    """The fragments in the order they are rendered: by section, then by position and rank.

    Fragments alike in all three keep the order they were given in.
    """
    return sorted(fragments, key=lambda f: (_SECTION_INDEX[f.section], f.position, f.rank))


def render_sections(fragments: Iterable[Fragment]) -> str:
    """All fragments, grouped by section in the fixed section order."""
    return render_in_order(in_rendering_order(fragments))


def render_in_order(ordered: Iterable[Fragment]) -> str:
    """Fragments already in rendering order (:func:`in_rendering_order`), rendered without sorting.

    The same text as :func:`render_sections` gives for them.
    """
    blocks = [_section_block(s, group) for s, group in groupby(ordered, key=_section_of)]
    return SECTION_SEPARATOR.join(blocks)


def render_pieces(ordered: Iterable[Fragment]) -> list[str]:
    """Fragments already in rendering order, rendered as pieces whose concatenation is the text
    :func:`render_in_order` gives for them.

    A piece is a run of whole lines, each with the line break (or section
    break) after it; a new piece starts at a line whose first character is
    neither whitespace nor ``/``, so every piece but the last ends with a
    line break and the next starts with a character that no pre-token of
    ``cl100k_base`` or ``o200k_base`` joins to a line break before it (see
    :func:`prefrontal.bundle.fitting.rendered_tokens`). Most pieces are one
    fragment's line, the same text turn after turn.
    """
    lines: list[str] = []
    breaks: list[str] = []
    for section, group in groupby(ordered, key=_section_of):
        if breaks:
            breaks[-1] = SECTION_SEPARATOR
        block = _section_lines(section, group)
        lines += block
        breaks += ["\n"] * len(block)
    if breaks:
        breaks[-1] = ""
    pieces: list[str] = []
    for line, after in zip(lines, breaks, strict=True):
        first = line[:1]
        if pieces and (first in _GLUED or first.isspace()):
            pieces[-1] += line + after
        else:
            pieces.append(line + after)
    return pieces


_GLUED = ("", "/")
"""First characters of a line that start no piece of its own: empty, and ``/`` (``o200k_base``
joins a slash to the punctuation and line break before it); whitespace is tested apart."""


def _section_of(fragment: Fragment) -> Section:
    return fragment.section


def _section_block(section: Section, ordered: Iterable[Fragment]) -> str:
    """One section: its header, then its fragments as ordered, group headers where they change."""
    return "\n".join(_section_lines(section, ordered))


def _section_lines(section: Section, ordered: Iterable[Fragment]) -> list[str]:
    """The lines of one section's block: its header, group headers where they change, texts."""
    lines = [section_header(section)]
    current: str | None = None
    for fragment in ordered:
        if fragment.heading is not None and fragment.heading != current:
            lines.append(group_header(fragment.heading))
        current = fragment.heading
        lines.append(fragment.text)
    return lines
