//! Building and locating binaries of *other* workspace packages from engine tests.
//!
//! `env!("CARGO_BIN_EXE_x")` only exists inside the package that owns binary `x`, and
//! `cargo test -p skillet-engine` does not build other packages' binaries. [`build`] runs
//! `cargo build --quiet <args>` with the `cargo` that runs the tests (`$CARGO`), into the *same*
//! target directory and profile as the running test executable (found from its own path,
//! `<target>/<profile>/deps/<test>`), and returns `<target>/<profile>/`, where the binaries are.
//! The build is a no-op when nothing changed. A cross-compiling layout
//! (`<target>/<triple>/<profile>`) is not supported. Included by path from the support modules.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Builds with `args` (e.g. `["-p", "mcp-test-server", "--bins"]`); returns the profile dir.
pub fn build(args: &[&str]) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test executable lives in <target>/<profile>/deps")
        .to_owned();
    let target_dir = profile_dir.parent().expect("<target>/<profile>");
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .expect("profile directory name");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = std::process::Command::new(cargo);
    command
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["build", "--quiet"])
        .args(args)
        .arg("--target-dir")
        .arg(target_dir);
    match profile {
        "debug" => {}
        "release" => {
            command.arg("--release");
        }
        other => {
            command.args(["--profile", other]);
        }
    }
    let status = command.status().expect("run cargo build");
    assert!(status.success(), "cargo build {args:?} failed: {status}");
    profile_dir
}
