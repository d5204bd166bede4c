"""The MCP server (``memcore mcp``): memcore's memory as tools for MCP clients."""
