"""The longest run of words that fits: the one search both trimming and summaries use."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["longest_head"]


def longest_head(words: list[str], cost: Callable[[str], int], limit: int) -> str:
    """The most leading ``words``, joined by spaces, whose ``cost`` is at most ``limit``.

    Binary search: ``cost`` is called about log2(len(words)) times, and must
    not fall as words are added (token counts do not).
    """
    low, high = 0, len(words)
    while low < high:
        middle = (low + high + 1) // 2
        if cost(" ".join(words[:middle])) <= limit:
            low = middle
        else:
            high = middle - 1
    return " ".join(words[:low])
