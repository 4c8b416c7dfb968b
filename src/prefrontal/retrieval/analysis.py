"""Text analysis: the index terms of a text, the same for every backend and every language.

Every store indexes what :func:`terms` returns and every query is analysed
by it, so a word matches wherever it was written the same way after these
steps:

- **Folding.** Compatibility forms are unified (NFKC: full-width letters and
  digits become ASCII), case is folded (``Straße`` and ``STRASSE`` meet), and
  accents and other combining marks on Latin, Greek, Cyrillic, Hebrew and
  Arabic letters are removed (``café`` is ``cafe``; Arabic short vowels go);
  other scripts keep theirs (Japanese voicing: ``が`` stays ``が``).
- **Words.** A run of letters and digits is a word. Runs of scripts written
  without spaces (Chinese, Japanese, Korean, Thai, Lao, Khmer, Myanmar) are
  indexed as overlapping pairs of characters (a lone character as itself),
  so ``東京に行く`` and ``東京へ`` share the term ``東京`` without a dictionary.
  A symbol such as an emoji is a term of its own, spelt ``sym`` and its code
  point in hexadecimal, so that every backend's index (FTS5 included) keeps it.
- **Normalising.** English stop words are dropped and ASCII words are
  reduced by the Porter stemmer, as before; other words are kept whole, but
  for an Arabic word its article (``ال``) and the letter forms that vary in
  spelling (``ة``/``ه``, ``ى``/``ي``).

Text that is all ASCII takes a short path with exactly the steps that apply
to it (lower-case, split, stop words, Porter), so English is analysed as it
always was and its scores do not move.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

import snowballstemmer

from prefrontal.forgetting import remembered
from prefrontal.text_cache import text_cache

WORD = re.compile(r"[^\W_]+", re.UNICODE)
"""A run of letters and digits: what the analyser calls a word."""
_TOKEN = re.compile(r"[^\W_]+|[^\w\s]", re.UNICODE)
"""A word, or one character that is neither a word character nor a space."""
_STEMMER = snowballstemmer.stemmer("porter")

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)


_SPACELESS = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x1780, 0x17FF),  # Khmer
    (0x2E80, 0x9FFF),  # CJK radicals, kana, Bopomofo, Hangul compatibility, CJK ideographs
    (0xA960, 0xA97F),  # Hangul Jamo extended
    (0xAC00, 0xD7FF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width kana
    (0x20000, 0x3FFFF),  # CJK extensions
)
"""Code point ranges of scripts written without spaces between words."""
_SPACELESS_CHARS = "".join(f"{chr(low)}-{chr(high)}" for low, high in _SPACELESS)
_SCRIPT_RUN = re.compile(f"([{_SPACELESS_CHARS}]+)|([^{_SPACELESS_CHARS}]+)")
"""A run of characters of spaceless scripts (first group), or of any others (second)."""

_FOLDED_MARKS_BELOW = 0x0800
"""Combining marks are removed from letters below this code point (Latin to Arabic)."""

_ARABIC_ARTICLE = "\u0627\u0644"
_ARABIC_LETTERS = str.maketrans({"\u0629": "\u0647", "\u0649": "\u064a"})


@remembered(maxsize=65_536)
def stem(word: str) -> str:
    """The Porter stem of a lower-case word."""
    return str(_STEMMER.stemWord(word))


@remembered(maxsize=65_536)
def _indexed(word: str) -> str:
    """The stem of a lower-case word, or ``""`` for a stop word: one cached look-up per word."""
    return "" if word in STOP_WORDS else stem(word)


_ASCII_WORDS = bytes(
    byte + 32 if 65 <= byte <= 90 else byte if 97 <= byte <= 122 or 48 <= byte <= 57 else 32
    for byte in range(256)
)
"""An ASCII byte's lower case when it is a letter or a digit, else a space."""


def _words(text: str) -> list[str]:
    """The words of ASCII ``text``, in lower case: ``WORD.findall(text.lower())``.

    For ASCII, a run of letters and digits is a run of ``[A-Za-z0-9]``: each
    byte is mapped to its lower case, or to a space when it is neither (one
    table look-up a byte), and the text split at spaces, without a regular
    expression's step per character.
    """
    return text.encode().translate(_ASCII_WORDS).decode().split()


def terms(text: str) -> list[str]:
    """The index terms of ``text`` in order, as the module describes; never an empty term.

    The Porter stemmer reduces a lone ``s`` (as in "provider's") to nothing;
    such empty stems are dropped.
    """
    if text.isascii():
        return [s for s in map(_indexed, _words(text)) if s]
    out: list[str] = []
    for token in _TOKEN.findall(folded(text)):
        out.extend(_token_terms(token))
    return out


class _Indexed(dict[str, str]):
    """Word to :func:`_indexed` of it, filled on first look-up (one batch's words)."""

    def __missing__(self, word: str) -> str:
        self[word] = found = _indexed(word)
        return found


def terms_of_each(texts: Iterable[str]) -> list[list[str]]:
    """:func:`terms` of each text, in order: the same lists, with less work per word.

    For a batch: each distinct ASCII word is looked up once in a plain
    dictionary held for the call, and the lists are built without a Python
    step per word.
    """
    indexed = _Indexed()
    look_up = indexed.__getitem__
    out: list[list[str]] = []
    add = out.append
    for text in texts:
        if text.isascii():
            add(list(filter(None, map(look_up, _words(text)))))
        else:
            add(terms(text))
    return out


def written_terms(text: str) -> list[tuple[str, str]]:
    """Each term of ``text`` with a word to write it by: ``(term, word)``, in order.

    For ASCII text the word is the lower-case word the stem came from (one
    reads better than a stem); otherwise it is the term itself. Either way
    the word is meant to be analysed again, as a query.
    """
    if not text.isascii():
        return [(term, term) for term in terms(text)]
    words = (w for w in WORD.findall(text.lower()) if w not in STOP_WORDS)
    return [(s, w) for w in words if (s := stem(w))]


@text_cache(max_bytes=16_000_000)
def term_set(text: str) -> frozenset[str]:
    """The distinct index terms of ``text``, cached: the same texts are matched turn after turn."""
    return frozenset(terms(text))


def folded(text: str) -> str:
    """``text`` in compatibility form, case-folded, without marks on Latin to Arabic letters."""
    decomposed = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", text).casefold())
    if not any(map(unicodedata.combining, decomposed)):  # no mark to remove: one pass in C
        return unicodedata.normalize("NFC", decomposed)
    kept: list[str] = []
    base = 0
    for char in decomposed:
        if unicodedata.combining(char):
            if base >= _FOLDED_MARKS_BELOW:
                kept.append(char)
            continue
        base = ord(char)
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


def _token_terms(token: str) -> list[str]:
    """The terms of one token of folded text: a word's, or a symbol's own."""
    if not WORD.fullmatch(token):
        return [f"sym{ord(token):x}"] if unicodedata.category(token) == "So" else []
    out: list[str] = []
    for run, spaceless in _script_runs(token):
        if spaceless:
            out.extend(_pairs(run))
        else:
            out.extend(_word_terms(run))
    return out


def _word_terms(word: str) -> list[str]:
    """A spaced word's terms: none for a stop word, its stem, or the word itself."""
    if word in STOP_WORDS:
        return []
    if word.isascii():
        stemmed = stem(word)
        return [stemmed] if stemmed else []
    return [_arabic(word)]


def _arabic(word: str) -> str:
    """``word`` without the Arabic article and with its variable letter forms unified."""
    while word.startswith(_ARABIC_ARTICLE) and len(word) > len(_ARABIC_ARTICLE) + 1:
        word = word[len(_ARABIC_ARTICLE) :]
    return word.translate(_ARABIC_LETTERS)


def _script_runs(word: str) -> list[tuple[str, bool]]:
    """``word`` cut where it passes between a spaceless script and any other: each run,
    and whether it is spaceless."""
    return [(spaceless or other, bool(spaceless)) for spaceless, other in _SCRIPT_RUN.findall(word)]


def _pairs(run: str) -> list[str]:
    """Overlapping pairs of characters of ``run``; a lone character is its own term."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]
