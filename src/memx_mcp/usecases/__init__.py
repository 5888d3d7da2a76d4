"""What memx does, one module per use case: each receives the ports it needs and takes its own locks."""
