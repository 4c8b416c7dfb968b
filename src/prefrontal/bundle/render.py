"""Rendering fragments as text: a heading per section, group headers, one line per fragment."""

from __future__ import annotations

from collections.abc import Iterable

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


def render_section(section: Section, fragments: Iterable[Fragment]) -> str:
    """One section: its header, then its fragments by position, group headers where they change."""
    lines = [section_header(section)]
    current: str | None = None
    for fragment in sorted(fragments, key=lambda f: (f.position, f.rank)):
        if fragment.heading is not None and fragment.heading != current:
            lines.append(group_header(fragment.heading))
        current = fragment.heading
        lines.append(fragment.text)
    return "\n".join(lines)


def in_rendering_order(fragments: Iterable[Fragment]) -> list[Fragment]:
    """The fragments in the order they are rendered: by section, then by position and rank."""
    return sorted(fragments, key=lambda f: (_SECTION_INDEX[f.section], f.position, f.rank))


def render_sections(fragments: Iterable[Fragment]) -> str:
    """All fragments, grouped by section in the fixed section order."""
    by_section: dict[Section, list[Fragment]] = {}
    for fragment in fragments:
        by_section.setdefault(fragment.section, []).append(fragment)
    blocks = [render_section(s, by_section[s]) for s in SECTION_ORDER if s in by_section]
    return SECTION_SEPARATOR.join(blocks)
