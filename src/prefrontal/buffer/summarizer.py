"""Summaries for the SUMMARIZE policy: evicted items folded into one item.

A summarizer is one async callable. The default is extractive and
deterministic (the first sentence of each item, most important first), so
the policy works offline and in tests; an LLM summarizer plugs in the same way.
Whatever a summarizer returns, the buffer trims it to the room it has.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from prefrontal.buffer.models import BufferItem
from prefrontal.buffer.tokens import CountTokens
from prefrontal.text_fit import longest_head

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


class Summarizer(Protocol):
    """Turns the items about to be evicted into one short text.

    Contract: return plain text, ideally within ``max_tokens`` as counted by
    ``count_tokens`` (longer text is trimmed by the buffer); raise nothing for
    ordinary input. It may be slow: the buffer awaits it before changing anything.
    """

    async def __call__(
        self, items: Sequence[BufferItem], max_tokens: int, count_tokens: CountTokens
    ) -> str: ...


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (all of it when it has one), whitespace collapsed."""
    flat = " ".join(text.split())
    return _SENTENCE_END.split(flat, maxsplit=1)[0]


def fit_tokens(text: str, max_tokens: int, count_tokens: CountTokens) -> str:
    """The longest prefix of ``text``, cut at a word, that has at most ``max_tokens`` tokens."""
    if count_tokens(text) <= max_tokens:
        return text
    return longest_head(text.split(), count_tokens, max_tokens)


class ExtractiveSummarizer:
    """First sentences of the items, highest priority first, as many as fit.

    A summary item among the items (the rolling summary being grown) brings
    its lines along; when everything does not fit, the newly folded items'
    sentences are kept first (most important first), then the summary's
    newest lines, so a full summary drops its oldest lines.
    """

    async def __call__(
        self, items: Sequence[BufferItem], max_tokens: int, count_tokens: CountTokens
    ) -> str:
        """The summary's kept lines, then the new first sentences, within ``max_tokens``."""
        old = [line for i in items if i.is_summary for line in _lines(i.content)]
        fresh = sorted((i for i in items if not i.is_summary), key=lambda i: (-i.priority, i.seq))
        new: list[str] = []
        for item in fresh:
            line = f"- {first_sentence(item.content)}"
            if count_tokens("\n".join([*new, line])) > max_tokens:
                break
            new.append(line)
        kept: list[str] = []
        for line in reversed(old):
            if count_tokens("\n".join([line, *kept, *new])) > max_tokens:
                break
            kept.insert(0, line)
        lines = [*kept, *new]
        if not lines and fresh:
            lines = [f"- {first_sentence(fresh[0].content)}"]
        return "\n".join(lines)


def _lines(text: str) -> list[str]:
    """The non-blank lines of a summary, stripped."""
    return [line.strip() for line in text.splitlines() if line.strip()]
