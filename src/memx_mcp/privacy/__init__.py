"""Privacy (SPEC §4.5): secrets and personal data masked with typed placeholders before any text is stored or
sent anywhere. It serves every door (what a person writes through `remember`, what the Reflector learns, what
a model is shown), so it sits below the engines: ``sanitizer.py`` judges, ``patterns.py`` finds candidates,
``shapes.py`` says what a value looks like."""

from .sanitizer import PrivacySanitizer

__all__ = ["PrivacySanitizer"]
