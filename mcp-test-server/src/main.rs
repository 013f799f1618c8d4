//! Placeholder: the MCP test server (issue 7).
fn main() {}
