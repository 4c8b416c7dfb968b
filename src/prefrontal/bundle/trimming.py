"""Cutting a fragment's text to a number of tokens, keeping whole lines while they fit.

Rules are trimmed, never dropped in silence: when the agent's rules are
longer than their share of the budget, the lines that fit are kept whole,
the next one is cut at a word and marked, and the rest is left out.
"""

from __future__ import annotations

from collections.abc import Callable

from prefrontal.text_fit import longest_head

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
    lines = text.split("\n")
    whole = 0
    while count("\n".join(lines[: whole + 1])) <= max_tokens:
        whole += 1
    kept = lines[:whole]

    def cost(head: str) -> int:
        return count("\n".join([*kept, head + MARK]))

    cut = longest_head(lines[whole].split(" "), cost, max_tokens)
    return "\n".join([*kept, cut + MARK]) if cut else "\n".join(kept)
