"""histor-sign: sign the complete tools/list of an MCP server, gate releases, detect drift."""

__version__ = "0.1.0"
