"""Adapters for clients' hooks. They fail open: a log line, never an error for the client."""
