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

/// The `mcp-test-server` binary, built on first use.
pub fn test_server() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        if let Some(path) = std::env::var_os("SKILLET_MCP_TEST_SERVER") {
            return PathBuf::from(path);
        }
        // This test runs from <target>/<profile>/deps/<name>-<hash>.
        let exe = std::env::current_exe().expect("test executable path");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("test executable inside <target>/<profile>/deps");
        let target_dir = profile_dir.parent().expect("target directory");
        let profile = profile_dir
            .file_name()
            .and_then(|n| n.to_str())
            .expect("profile directory name");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = std::process::Command::new(cargo);
        build
            .args([
                "build",
                "--quiet",
                "-p",
                "mcp-test-server",
                "--bin",
                "mcp-test-server",
            ])
            .env("CARGO_TARGET_DIR", target_dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        match profile {
            "debug" => {}
            "release" => {
                build.arg("--release");
            }
            other => {
                build.args(["--profile", other]);
            }
        }
        let status = build.status().expect("run cargo build for mcp-test-server");
        assert!(
            status.success(),
            "building mcp-test-server failed: {status}"
        );
        let binary = profile_dir.join("mcp-test-server");
        assert!(binary.exists(), "{} was not built", binary.display());
        binary
    })
}
