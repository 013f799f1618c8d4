//! The host's doors against a fake [`SkillService`](skillet_core::service::SkillService)
//! (`support`), with no engine in the build: the host core and A2E adapters on their bad paths
//! (`core`), the stdio and HTTP transports (`transports`), the MCP adapter against an rmcp
//! client (`mcp`) and its streamable-HTTP limits (`mcp_http_limits`). One test binary.
//!
//! Not here: doors driven through the `skillet` binary with the engine behind them
//! (`cli/tests`).

mod core;
mod mcp;
mod mcp_http_limits;
mod support;
mod transports;
