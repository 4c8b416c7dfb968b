"""Pure retrieval functions: text analysis, lexical scoring, score fusion, recall weights."""

from prefrontal.retrieval.embedder import Embedder, HashingEmbedder
from prefrontal.retrieval.settings import RecallSettings, RerankWeights

__all__ = ["Embedder", "HashingEmbedder", "RecallSettings", "RerankWeights"]
