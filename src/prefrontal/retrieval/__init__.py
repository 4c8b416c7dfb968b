"""Pure retrieval functions: text analysis, one BM25 over any backend's candidates, fusion."""

from prefrontal.retrieval.embedder import Embedder, HashingEmbedder
from prefrontal.retrieval.ranking import Candidate, Corpus, LexicalMatches
from prefrontal.retrieval.settings import RecallSettings, RerankWeights

__all__ = [
    "Candidate",
    "Corpus",
    "Embedder",
    "HashingEmbedder",
    "LexicalMatches",
    "RecallSettings",
    "RerankWeights",
]
