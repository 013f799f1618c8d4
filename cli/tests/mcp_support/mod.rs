//! Locating the `mcp-test-server` binary for the MCP integration tests.
//!
//! The server belongs to another package, so `CARGO_BIN_EXE_mcp-test-server` does not exist in
//! engine tests. [`test_server`] builds it once per test process with the same cargo, target
//! directory and profile as the running test (`cargo build -p mcp-test-server`, a no-op when it
//! is fresh) and returns its path. Set `SKILLET_MCP_TEST_SERVER` to a built binary to skip the
//! build (e.g. when cross-compiling, where the target layout differs).

#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

#[path = "../../../engine/tests/workspace_bins/mod.rs"]
mod workspace_bins;

/// The `mcp-test-server` binary, built on first use.
pub fn test_server() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        if let Some(path) = std::env::var_os("SKILLET_MCP_TEST_SERVER") {
            return PathBuf::from(path);
        }
        let profile_dir =
            workspace_bins::build(&["-p", "mcp-test-server", "--bin", "mcp-test-server"]);
        let binary = profile_dir.join("mcp-test-server");
        assert!(binary.exists(), "{} was not built", binary.display());
        binary
    })
}
