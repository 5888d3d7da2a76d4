"""The ACE engines (Reflector, Curator, Decay, Generator): pure functions of domain values."""
