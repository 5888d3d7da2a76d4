"""``memx ui``: a local web page to look inside the memory (see ``server.py``)."""
