"""The Reflector's rules: candidates found in a transcript without a model, and their bullet text."""
