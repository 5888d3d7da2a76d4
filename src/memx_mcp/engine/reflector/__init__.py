"""The Reflector (SPEC §4): classify, score and distill knowledge from transcripts."""

from .classify import Classification, classify, extract_metadata, instructivity

__all__ = ["Classification", "classify", "extract_metadata", "instructivity"]
