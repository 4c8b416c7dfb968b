"""What fragments cost once rendered: the figures allocation and selection both use.

A fragment costs its tokens and a line break; the first fragment of a
section also pays for the section's header and the break before it. Pure
functions of the fragments and a token count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from prefrontal.bundle.fragments import Fragment, Section
from prefrontal.bundle.render import section_header

__all__ = [
    "LINE_BREAK_TOKENS",
    "SECTION_BREAK_TOKENS",
    "demand",
    "fragment_cost",
    "header_cost",
    "lines_cost",
]

LINE_BREAK_TOKENS = 1
SECTION_BREAK_TOKENS = 2


def header_cost(count: Callable[[str], int], section: Section) -> int:
    """Tokens of a section's header and the break before it."""
    return count(section_header(section)) + SECTION_BREAK_TOKENS


def fragment_cost(fragment: Fragment) -> int:
    """Tokens a fragment adds when rendered on its own line."""
    return fragment.tokens + LINE_BREAK_TOKENS


def demand(count: Callable[[str], int], section: Section, fragments: Sequence[Fragment]) -> int:
    """What a section would cost with every fragment it loaded (0 when it has none)."""
    if not fragments:
        return 0
    return header_cost(count, section) + lines_cost(fragments)


def lines_cost(fragments: Sequence[Fragment]) -> int:
    """Tokens the fragments add, each on its own line: the sum of their ``fragment_cost``."""
    return sum(f.tokens for f in fragments) + LINE_BREAK_TOKENS * len(fragments)
