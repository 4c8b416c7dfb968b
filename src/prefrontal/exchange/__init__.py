"""The write side: what ``end_turn`` records, and the memory that forms from it.

:mod:`.records` builds an exchange's messages and episodic items;
:mod:`.summary` folds what leaves the recent window into the rolling
summary (a pluggable :class:`Summarizer`); :mod:`.extract` is the optional
:class:`Extractor` hook for semantic items; :mod:`.background` runs work
off the caller's path under the orchestrator's task group.
"""

from prefrontal.exchange.config import EndTurnConfig
from prefrontal.exchange.extract import ExchangeView, Extractor
from prefrontal.exchange.models import EndTurnResult, Extracted, ToolCall
from prefrontal.exchange.summary import ExtractiveSummarizer, Summarizer

__all__ = [
    "EndTurnConfig",
    "EndTurnResult",
    "ExchangeView",
    "Extracted",
    "ExtractiveSummarizer",
    "Extractor",
    "Summarizer",
    "ToolCall",
]
