"""The weights of memory recall: how hits become candidates, and how candidates are reranked.

Both are frozen value objects that :class:`~prefrontal.config.RecallConfig`
carries, so every weight can be set from the orchestrator's configuration.
"""

from __future__ import annotations

from dataclasses import dataclass

from prefrontal.errors import ConfigurationError

__all__ = ["RecallSettings", "RerankWeights"]


@dataclass(frozen=True, slots=True)
class RecallSettings:
    """How search hits become candidates: query weights, thread scores, neighbour lift."""

    context_weight: float = 0.3
    """Weight of the context query's hits beside the input's (1.0)."""
    context_share: float = 0.3
    """The context query asks for this share of the input's candidates (rounded up; 0 skips it).

    Its hits weigh ``context_weight`` of the input's, so its lower ones rank
    below what fits; asking it for as many as the input made a new session's
    turn 15 % slower on 100,000 items for about one rendered memory in a
    hundred (``docs/performance.md``).
    """
    thread_weight: float = 0.3
    """Share of its thread's score an item gains."""
    thread_top: int = 3
    """A thread scores the mean of its this many best items."""
    smoothing: float = 0.2
    """Share of its neighbours' scores an item adds (a message in a relevant exchange)."""
    speaker_weight: float = 0.2
    """What an item gains when the input names its speaker."""
    neighbour_anchors: int = 10
    """How many of the best items lift their neighbours, at least."""
    anchor_share: float = 0.125
    """Or this share of the candidates asked for, when that is more.

    The candidates asked for scale with the budget (:func:`candidate_limit`):
    where more fragments fit, more of the strong matches have room to bring
    the turns around them (10 anchors up to 2,000 tokens of budget, 25 at 4,000).
    """
    neighbour_radius: int = 2
    neighbour_factor: float = 0.8
    """An item after an anchor (a reply) scores at least this share of the anchor's score."""
    neighbour_before_factor: float = 0.8
    """An item before an anchor (what it replies to) scores at least this share."""
    feedback_weight: float = 0.3
    """Weight of the feedback query's hits (words of the input's best hits; measured best
    on LoCoMo among 0.1-0.5). Used only when ``RecallConfig.feedback`` is on; 0 disables."""
    feedback_docs: int = 2
    """How many of the input's best hits lend their words to the feedback query."""
    feedback_terms: int = 10
    """How many words the feedback query has."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.context_share <= 1.0:
            raise ConfigurationError(
                f"context_share is a share of the candidates, 0 to 1: got {self.context_share}"
            )


@dataclass(frozen=True, slots=True)
class RerankWeights:
    """How much each signal counts in the rerank.

    An item scores ``relevance * r * (1 - recency + recency * fresh)
    + importance * i + novelty * n``, where ``r`` is its relevance
    normalised to the best hit and ``fresh`` is :func:`recency`. Recency
    scales relevance rather than adding to it: at ``recency=0.1`` a match
    from long ago keeps 90% of its relevance, so age orders near-equal
    matches newest first, but a recent match never passes an old one more
    than 1/0.9 times (about 11%) as relevant, and an item that hardly
    matches gains next to nothing from being new.
    """

    relevance: float = 0.70
    recency: float = 0.10
    """The share of an item's relevance that fades with its age (0 to 1)."""
    importance: float = 0.15
    novelty: float = 0.05

    def __post_init__(self) -> None:
        if not 0.0 <= self.recency <= 1.0:
            raise ConfigurationError(f"recency is a share of relevance, 0 to 1: got {self.recency}")
        negative = [k for k in ("relevance", "importance", "novelty") if getattr(self, k) < 0]
        if negative:
            raise ConfigurationError(f"rerank weights cannot be negative: {', '.join(negative)}")
