"""SURFACE: the MCP server (`localmem serve`), its HTTP transport and token, the memory tools."""
