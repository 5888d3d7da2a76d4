"""How a session is read: the modes and what they share with a model (windows, prompts' checks)."""
