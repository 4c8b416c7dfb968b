"""The default token counter: the pipeline's cached tiktoken counter (cl100k_base, offline).

The buffer takes any ``count_tokens(text) -> int``; this one is used when none
is given. The encoding is loaded on first use, never from the network.
"""

from __future__ import annotations


def count_tokens(text: str) -> int:
    """The number of cl100k_base tokens in ``text`` (cached per text)."""
    from prefrontal.budgets.tokens import default_counter

    return default_counter().count(text)
