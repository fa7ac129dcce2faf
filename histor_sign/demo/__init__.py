"""Bundled example material for the offline demo (an example MCP server)."""
