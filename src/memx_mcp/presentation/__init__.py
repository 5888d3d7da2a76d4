"""What memx answers, as pydantic shapes and as readable text."""
