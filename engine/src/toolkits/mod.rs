//! Placeholder: toolkits backed by MCP servers (issue 7).
