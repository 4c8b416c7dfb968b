"""Code points that print nothing, and spacing: what the fence removes and what it looks past.

:func:`visible` removes, everywhere in a text, every code point a reader
cannot see but a model still reads:

- ``Default_Ignorable_Code_Point`` (UAX #44; the set UAX #31 leaves out of
  identifiers): zero-width characters, bidi controls, variation selectors,
  Hangul fillers, tag characters, the shorthand format controls
  U+1BCA0..U+1BCA3, and the code points reserved for more of them;
- every other format character (``Cf``: U+0600..U+0605, U+FFF9..U+FFFB,
  the Egyptian hieroglyph controls ...), control (``Cc``, but for the line
  break the fence has made of every kind) and lone surrogate (``Cs``,
  which no encoder accepts);
- :data:`OTHER_INVISIBLE`: U+16FE4 KHITAN SMALL SCRIPT FILLER, a filler
  that is not default-ignorable.

The property comes from the ``regex`` package's Unicode data (kept up to
date with each Unicode release), not from a list here.

:data:`SPACING` is what the fence looks past at the start of a line before
it looks for structure: any run of Unicode white space (``NBSP``, ``EM
SPACE``, ``IDEOGRAPHIC SPACE`` ...), combining marks with nothing to
combine with, and the blank-looking U+2800 BRAILLE PATTERN BLANK, however
long the run is.
"""

from __future__ import annotations

import regex

__all__ = ["OTHER_INVISIBLE", "SPACING", "has_invisible", "visible"]

OTHER_INVISIBLE = "\U00016fe4"
"""Invisible code points that are neither default-ignorable nor format characters."""

_INVISIBLE = regex.compile(
    rf"[[\p{{Default_Ignorable_Code_Point}}\p{{Cf}}\p{{Cc}}\p{{Cs}}{OTHER_INVISIBLE}]--[\n]]+",
    regex.VERSION1,
)

SPACING = regex.compile(r"[\s\p{Mn}\p{Me}\u2800]+")
"""A run of spacing at the start of a line (match it with ``SPACING.match``)."""


def visible(text: str) -> str:
    """``text`` without its invisible code points (see the module); line feeds are kept."""
    return _INVISIBLE.sub("", text)


def has_invisible(text: str) -> bool:
    """True when ``text`` holds a code point :func:`visible` removes."""
    return _INVISIBLE.search(text) is not None
