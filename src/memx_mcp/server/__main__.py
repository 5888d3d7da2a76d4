"""``python -m memx_mcp.server``: the MCP server, as before the server became a folder."""

from .app import main

main()
