"""The Generator (SPEC §7): four-layer hybrid retrieval, fusion and token budget."""

from .generator import CandidateSource, RecallRequest, RetrievalParams, recall

__all__ = ["CandidateSource", "RecallRequest", "RetrievalParams", "recall"]
