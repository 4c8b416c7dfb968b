"""The working-memory buffer: a session's bounded, explainable working memory.

One buffer per session ``(agent, user, session id)``, saved between turns
through the working-memory store. It never holds more than ``max_items``
items or ``max_tokens`` tokens; every admission, refusal and eviction comes
with its score and reason.

- :class:`WorkingMemoryBuffer`: the pure, in-memory buffer (admission,
  overflow policies, decay and fade-out, events, snapshot/restore);
- :class:`SessionBuffer`: the buffer of one session, loaded from and saved
  to a :class:`~prefrontal.stores.WorkingMemoryStore` (phase 10 calls
  :meth:`SessionBuffer.refresh_turn`);
- :class:`Keeper`: what writes a note to long-term memory before the
  buffer's policy lets it go (:mod:`prefrontal.buffer.promotion`;
  :func:`prefrontal.formation.episodic_keeper` is the usual one);
- :func:`decide_recall` and :meth:`SessionBuffer.recall_gate`: whether
  phases 5 and 6 may reuse the buffer instead of searching.
"""

from prefrontal.buffer.buffer import WorkingMemoryBuffer
from prefrontal.buffer.config import BufferConfig, OverflowPolicy, SalienceWeights
from prefrontal.buffer.events import BufferEvent, EventKind
from prefrontal.buffer.models import (
    BufferItem,
    Focus,
    ItemProvenance,
    ItemSource,
    Lifetime,
    NewItem,
    SalienceFactors,
    content_id,
)
from prefrontal.buffer.offers import Offer
from prefrontal.buffer.policies import Eviction, EvictionReason
from prefrontal.buffer.promotion import Keeper, NoLongTermMemory, PromotionError
from prefrontal.buffer.recall_gate import RecallCounters, RecallDecision, decide_recall
from prefrontal.buffer.salience import AdmissionDecision
from prefrontal.buffer.session import SessionBuffer, probe
from prefrontal.buffer.snapshot import (
    AddResult,
    BufferCounters,
    BufferSnapshot,
    Outcome,
    RefreshReport,
)
from prefrontal.buffer.summarizer import ExtractiveSummarizer, Summarizer
from prefrontal.buffer.themes import (
    Coherence,
    LinkSettings,
    Relationship,
    SessionLink,
    SessionProfile,
    link_sessions,
)
from prefrontal.traces.models import RecallMode

__all__ = [
    "AddResult",
    "AdmissionDecision",
    "BufferConfig",
    "BufferCounters",
    "BufferEvent",
    "BufferItem",
    "BufferSnapshot",
    "Coherence",
    "EventKind",
    "Eviction",
    "EvictionReason",
    "ExtractiveSummarizer",
    "Focus",
    "ItemProvenance",
    "ItemSource",
    "Keeper",
    "Lifetime",
    "LinkSettings",
    "NewItem",
    "NoLongTermMemory",
    "Offer",
    "Outcome",
    "OverflowPolicy",
    "PromotionError",
    "RecallCounters",
    "RecallDecision",
    "RecallMode",
    "RefreshReport",
    "Relationship",
    "SalienceFactors",
    "SalienceWeights",
    "SessionBuffer",
    "SessionLink",
    "SessionProfile",
    "Summarizer",
    "WorkingMemoryBuffer",
    "content_id",
    "decide_recall",
    "link_sessions",
    "probe",
]
