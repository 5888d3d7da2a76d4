"""The floor of `benchmarks/startup.py`: a bare MCP server with one tool, on the same SDK and Python as
memx-mcp, started the same way. Whatever memx-mcp takes beyond this before answering `initialize` is
memx's own."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

app = MCPServer("bare")


@app.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return text


if __name__ == "__main__":
    app.run("stdio")
