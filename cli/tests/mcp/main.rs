//! One test binary: MCP: both revisions over stdio and HTTP, tasks, approvals, toolkits, its
//! security rules, each file a module driving the `skillet` binary. The `*_support` modules are
//! shared by every binary (`cli/tests/*_support/`).

#[path = "../auth_support/mod.rs"]
mod auth_support;
#[path = "../cli_support/mod.rs"]
mod cli_support;
#[path = "../mcp_support/mod.rs"]
mod mcp_support;
#[path = "../serve_support/mod.rs"]
mod serve_support;

mod mcp_approval_2026;
mod mcp_revision_2026;
mod mcp_run;
mod mcp_tasks;
mod mcp_toolkit;
mod security_mcp;
