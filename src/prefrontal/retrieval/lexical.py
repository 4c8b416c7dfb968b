"""Text analysis: what every backend indexes and every query searches for.

The analyser lower-cases, splits on anything that is not a letter or digit,
drops a short list of English stop words and applies the Porter stemmer.
Every backend indexes the output of :func:`terms` (the SQLite backend hands
it to FTS5, which then only splits on spaces), so they all agree on what
matches; :mod:`prefrontal.retrieval.ranking` scores the matches.
"""

from __future__ import annotations

import re
from functools import lru_cache

import snowballstemmer

from prefrontal.text_cache import text_cache

WORD = re.compile(r"[^\W_]+", re.UNICODE)
"""A run of letters and digits: what the analyser calls a word."""
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


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The Porter stem of a lower-case word."""
    return str(_STEMMER.stemWord(word))


def terms(text: str) -> list[str]:
    """The index terms of ``text``: lower-cased, stop words out, stemmed, never empty.

    The Porter stemmer reduces a lone ``s`` (as in "provider's") to nothing;
    such empty stems are dropped.
    """
    stems = (stem(w) for w in WORD.findall(text.lower()) if w not in STOP_WORDS)
    return [s for s in stems if s]


@text_cache(max_chars=8_000_000)
def term_set(text: str) -> frozenset[str]:
    """The distinct index terms of ``text``, cached: the same texts are matched turn after turn."""
    return frozenset(terms(text))
