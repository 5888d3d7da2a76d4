"""Episodes: a failure, the actions taken, the first observed success; and those a person reports."""
