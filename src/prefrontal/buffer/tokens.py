"""How the buffer counts tokens: ``CountTokens``, any function of text to a count.

The default is the pipeline's cached tiktoken counter (cl100k_base, offline),
loaded on first use, never from the network; a turn passes its own
:class:`~prefrontal.budgets.tokens.TokenCounter`'s ``count``.
"""

from __future__ import annotations

from collections.abc import Callable

from prefrontal.budgets.tokens import default_counter

CountTokens = Callable[[str], int]
"""The number of tokens in a text."""


def count_tokens(text: str) -> int:
    """The number of cl100k_base tokens in ``text`` (cached per text)."""
    return default_counter().count(text)
