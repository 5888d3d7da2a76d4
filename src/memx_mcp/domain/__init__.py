"""Domain values and rules: bullets, scopes, limits, the model catalog, the error tree. Pure."""
