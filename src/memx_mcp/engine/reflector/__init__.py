"""The Reflector (SPEC §4): sanitize, classify, score and distill knowledge from transcripts."""

from .classify import Classification, classify, extract_metadata, instructivity
from .sanitizer import PrivacySanitizer

__all__ = ["Classification", "PrivacySanitizer", "classify", "extract_metadata", "instructivity"]
