"""Cutting a fragment's text to a number of tokens, keeping whole lines while they fit.

Rules are trimmed, never dropped in silence: when the agent's rules are
longer than their share of the budget, the lines that fit are kept whole,
the next one is cut at a word and marked, and the rest is left out.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["MARK", "trim_to_tokens"]

MARK = " …"
"""Ends a line that was cut."""


def trim_to_tokens(text: str, max_tokens: int, count: Callable[[str], int]) -> str:
    """The longest head of ``text`` within ``max_tokens``: whole lines, then a cut line marked.

    Empty when not even the first word and the mark fit. Each step counts
    with ``count``, so the result is within ``max_tokens`` by that count.
    """
    if count(text) <= max_tokens:
        return text
    kept: list[str] = []
    for line in text.split("\n"):
        if count("\n".join([*kept, line])) > max_tokens:
            cut = _longest_head(
                line, lambda head: count("\n".join([*kept, head + MARK])), max_tokens
            )
            return "\n".join([*kept, cut + MARK]) if cut else "\n".join(kept)
        kept.append(line)
    return "\n".join(kept)  # pragma: no cover - the whole text fits, returned above


def _longest_head(line: str, cost: Callable[[str], int], max_tokens: int) -> str:
    """The most words of ``line`` whose ``cost`` is within ``max_tokens`` (binary search)."""
    words = line.split(" ")
    low, high = 0, len(words)
    while low < high:
        middle = (low + high + 1) // 2
        if cost(" ".join(words[:middle])) <= max_tokens:
            low = middle
        else:
            high = middle - 1
    return " ".join(words[:low])
