"""Unicode TR39 confusable skeletons, from Unicode's own ``confusables.txt``.

:func:`skeleton` is UTS #39's *skeleton* (section 4): the text in NFD,
each character replaced by its prototype from ``confusables.txt``, NFD
again. Two strings that look alike to a reader (``ЅУЅТЕМ`` in Cyrillic
capitals, ``ᏚᎩᏚᎢᎬᎷ`` in Cherokee, ``SYSTEM``) have the same skeleton.
:func:`fold` compares a word with a name whatever its letter case and
small capitals too (``ꜱʏꜱᴛᴇᴍ``), which TR39 keeps apart from capitals.

The data is the unmodified ``confusables.txt`` of Unicode 17.0.0
(:data:`VERSION`), shipped as package data
(``prefrontal/bundle/unicode_data/``, with Unicode's licence, Unicode-3.0,
beside it) and read once, on the first skeleton of non-ASCII text (about
30 ms). Printable ASCII needs only :data:`ASCII_PROTOTYPES`, the file's
lines for ASCII sources (a test checks they agree). To move to a later
version, replace the file and :data:`VERSION`.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache
from importlib.resources import files

__all__ = ["VERSION", "casings", "fold", "skeleton"]

DATA = files("prefrontal.bundle") / "unicode_data" / "confusables.txt"
"""Unicode's ``confusables.txt``, as published."""

VERSION = "17.0.0"
"""The Unicode version of :data:`DATA` (its ``# Version:`` line; a test checks they agree)."""

ASCII_PROTOTYPES = {
    ord("`"): "'",
    ord('"'): "''",
    ord("|"): "l",
    ord("1"): "l",
    ord("I"): "l",
    ord("0"): "O",
    ord("%"): "º/₀",
    ord("m"): "rn",
}
"""The lines of :data:`DATA` whose source is ASCII: all a skeleton of ASCII text needs."""

_SMALL_CAPITAL = re.compile(r"(?:LATIN|MODIFIER) LETTER SMALL CAPITAL ([A-Z])")
_SMALL_CAPITAL_BLOCKS = ((0x0250, 0x02AF), (0x1D00, 0x1DBF), (0xA720, 0xA7FF), (0x10780, 0x107BF))
"""IPA Extensions, Phonetic Extensions, Latin Extended-D and -F: where small capitals are."""


@cache
def prototypes() -> dict[int, str]:
    """Each confusable code point's prototype (a line of ``confusables.txt``: source ; target)."""
    table: dict[int, str] = {}
    for line in DATA.read_text(encoding="utf-8").splitlines():
        data = line.split("#", 1)[0]
        if not data.strip():
            continue
        source, target, *_ = data.split(";")
        table[int(source, 16)] = "".join(chr(int(code, 16)) for code in target.split())
    return table


def version_line() -> str:
    """The ``# Version:`` line of :data:`DATA`'s header."""
    with DATA.open(encoding="utf-8") as data:
        return next(line.strip() for line in data if line.startswith("# Version:"))


def skeleton(text: str) -> str:
    """UTS #39 ``skeleton(text)``: NFD, every character to its prototype, NFD again.

    Default-ignorable code points are not removed here: text reaching this
    function has been cleaned of them (:mod:`prefrontal.bundle.invisible`).
    """
    if text.isascii():
        mapped = text.translate(ASCII_PROTOTYPES)
        return mapped if mapped.isascii() else unicodedata.normalize("NFD", mapped)
    mapped = unicodedata.normalize("NFD", text).translate(prototypes())
    return unicodedata.normalize("NFD", mapped)


@cache
def small_capitals() -> dict[int, str]:
    """Each Latin small capital, and its skeleton when that is not ASCII, to its letter.

    From the characters' names (``LATIN LETTER SMALL CAPITAL M`` is ``m``);
    the skeleton too because TR39 gives some small capitals another
    prototype (``ᴍ`` is ``ʍ``, also the prototype of Cyrillic ``м``).
    """
    table: dict[int, str] = {}
    for first, last in _SMALL_CAPITAL_BLOCKS:
        for code in range(first, last + 1):
            named = _SMALL_CAPITAL.fullmatch(unicodedata.name(chr(code), ""))
            if named is not None:
                letter = named.group(1).lower()
                table[code] = letter
                prototype = skeleton(chr(code))
                if len(prototype) == 1 and not prototype.isascii():
                    table.setdefault(ord(prototype), letter)
    return table


@lru_cache(maxsize=8_192)
def fold(word: str) -> str:
    """``word`` folded for comparison with a name whatever its case, width and look-alikes.

    NFKC, then twice: skeleton, casefold, small capitals to their letters.
    A skeleton is case-sensitive (``I`` and ``l`` share one, ``i`` has its
    own) and some prototypes are capitals (Cherokee ``Ꮪ`` is ``S``), so the
    second round folds what the first produced. Compare with
    :func:`casings` of the name.
    """
    text = word if word.isascii() else unicodedata.normalize("NFKC", word)
    for _ in range(2):
        text = skeleton(text).casefold()
        if not text.isascii():
            text = text.translate(small_capitals())
    return text


def casings(name: str) -> frozenset[str]:
    """:func:`fold` of ``name`` in lower case, upper case and title case."""
    return frozenset(fold(form) for form in (name.lower(), name.upper(), name.title()))
