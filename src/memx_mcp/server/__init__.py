"""The MCP edge: tools, resources and prompts over Memory, served on stdio."""
