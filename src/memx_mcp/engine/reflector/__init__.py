"""The Reflector (SPEC §4): classify, score and distill knowledge from transcripts. Nothing is imported here:
the settings read the reading modes' registry at every start, the rules load with the first reflect."""
