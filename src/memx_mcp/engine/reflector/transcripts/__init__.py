"""Transcripts: a session in any client's format, parsed into the same steps."""
