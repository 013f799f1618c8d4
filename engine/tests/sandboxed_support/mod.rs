//! Shared helpers of the `sandboxed_*` tests: locating (and building once) the test children of
//! *other* workspace packages, and contexts for calls.
//!
//! The first test that needs a child builds `plugin-test-child` and `skillet-sandbox`'s binaries
//! once (see `workspace_bins`); later tests reuse them.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Map;
use skillet_engine::deadline::Deadline;
use skillet_engine::events::EventEmitter;
use skillet_engine::handler::HandlerContext;
use skillet_engine::tools::ToolContext;
use skillet_sandbox::{ProcessBackend, SandboxBackend, SandboxPolicy};
use tokio_util::sync::CancellationToken;

#[path = "../workspace_bins/mod.rs"]
mod workspace_bins;

/// The directory holding this profile's binaries, after building the test children into it.
fn binaries_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        workspace_bins::build(&["-p", "plugin-test-child", "-p", "skillet-sandbox", "--bins"])
    })
}

/// The misbehaving A2E plugin (`plugin-test-child`).
pub fn plugin_child() -> PathBuf {
    binaries_dir().join("plugin-test-child")
}

/// The sandbox's misbehaving one-shot child (`sandbox-test-child`).
pub fn sandbox_child() -> PathBuf {
    binaries_dir().join("sandbox-test-child")
}

/// The backend every test uses.
pub fn backend() -> Arc<dyn SandboxBackend> {
    Arc::new(ProcessBackend::new())
}

/// A policy with a 512 MiB address space (so unbounded allocation fails fast) and generous
/// time limits (the shared machine is slow; tests that want a timeout set their own).
pub fn test_policy() -> SandboxPolicy {
    let mut policy = SandboxPolicy {
        timeout_ms: 30_000,
        ..SandboxPolicy::default()
    };
    policy.limits.address_space_bytes = Some(512 << 20);
    policy.limits.cpu_seconds = Some(30);
    policy
}

/// A tool-call context with `timeout` left, its cancel token, and its emitter.
pub fn tool_context(timeout: Duration) -> ToolContext {
    ToolContext {
        cancel: CancellationToken::new(),
        deadline: Deadline::after(timeout),
        events: EventEmitter::collecting("tool-call"),
        call_id: "call_1".into(),
    }
}

/// A native-skill context for call `req_id` with `timeout` left.
pub fn handler_context(req_id: &str, timeout: Duration) -> HandlerContext {
    HandlerContext {
        events: EventEmitter::collecting(req_id),
        deadline: Deadline::after(timeout),
        cancel: CancellationToken::new(),
        correlation_id: "corr-1".into(),
        metadata: Map::new(),
        llm_override: None,
    }
}
