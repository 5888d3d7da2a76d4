"""Text tools shared by the engines (Reflector, Curator): pure functions on strings, no dependencies."""
