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


def _section_of(fragment: Fragment) -> Section:
    return fragment.section


def _section_block(section: Section, ordered: Iterable[Fragment]) -> str:
    """One section: its header, then its fragments as ordered, group headers where they change."""
    lines = [section_header(section)]
    current: str | None = None
    for fragment in ordered:
        if fragment.heading is not None and fragment.heading != current:
            lines.append(group_header(fragment.heading))
        current = fragment.heading
        lines.append(fragment.text)
    return "\n".join(lines)
