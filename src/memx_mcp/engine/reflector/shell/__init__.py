"""Reading the shell commands and tool output in a session's steps."""
