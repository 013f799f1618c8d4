//! Helpers shared by the end-to-end tests in `tests/tests/`: locating (and, when stale,
//! building) the workspace's binaries, the bundled skills' mock scenarios, and talking JSON
//! lines to a child process.
//!
//! `CARGO_BIN_EXE_*` only exists for binaries of a test's own package, so the binaries of other
//! packages (`skillet`, `mock-llm`) are built once per test process with the same cargo, target
//! directory and profile as the running test — a no-op under `cargo test --workspace`, which has
//! built them already.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the repository root")
        .to_path_buf()
}

/// The `mock-scenario.yaml` of each bundled skill in `names`.
pub fn bundled_scenarios(names: &[&str]) -> Vec<PathBuf> {
    names
        .iter()
        .map(|name| {
            repo_root()
                .join("skills")
                .join(name)
                .join("mock-scenario.yaml")
        })
        .collect()
}

/// Paths of the `skillet` and `mock-llm` binaries, built on first use.
pub fn binaries() -> &'static (PathBuf, PathBuf) {
    static BINARIES: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BINARIES.get_or_init(|| {
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
            .unwrap_or("debug");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = std::process::Command::new(cargo);
        build
            .args(["build", "--quiet", "-p", "skillet", "--bin", "skillet"])
            .args(["-p", "mock-llm", "--bin", "mock-llm"])
            .env("CARGO_TARGET_DIR", target_dir)
            .current_dir(repo_root());
        match profile {
            "debug" => {}
            "release" => {
                build.arg("--release");
            }
            other => {
                build.args(["--profile", other]);
            }
        }
        let status = build.status().expect("run cargo build");
        assert!(
            status.success(),
            "building skillet and mock-llm failed: {status}"
        );
        (profile_dir.join("skillet"), profile_dir.join("mock-llm"))
    })
}

/// A running `mock-llm` binary.
pub struct MockLlmProcess {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
}

impl MockLlmProcess {
    /// Starts `mock-llm` on a free loopback port with the given scenario files and reads the
    /// address it prints.
    pub async fn start(scenarios: &[PathBuf]) -> Result<Self> {
        let mut command = Command::new(&binaries().1);
        command.args(["--listen", "127.0.0.1:0"]);
        for file in scenarios {
            command.arg("--scenario").arg(file);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("spawn mock-llm")?;
        let stdout = child.stdout.take().context("mock-llm stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .context("mock-llm did not print its address")??
            .context("mock-llm exited before printing its address")?;
        let url = line
            .rsplit(' ')
            .next()
            .filter(|u| u.starts_with("http://127.0.0.1:"))
            .with_context(|| format!("unexpected first line from mock-llm: {line}"))?
            .to_owned();
        Ok(MockLlmProcess { child, url })
    }

    /// The journal (`GET /_mock/requests`).
    pub async fn journal(&self) -> Result<Vec<Value>> {
        let body = reqwest::get(format!("{}/_mock/requests", self.url))
            .await?
            .text()
            .await?;
        Ok(serde_json::from_str(&body)?)
    }

    /// Stops the server.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

/// A child speaking JSON lines on stdin/stdout (e.g. `skillet serve --stdio`), whose raw output
/// lines are all kept for inspection.
pub struct JsonLinesChild {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    /// Every line read so far, verbatim.
    pub transcript: Vec<String>,
}

impl JsonLinesChild {
    /// Spawns `command` with piped stdio (stderr inherited for debugging).
    pub fn spawn(mut command: Command) -> Result<Self> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .context("spawn child")?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().context("child stdout")?;
        Ok(JsonLinesChild {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
            transcript: Vec::new(),
        })
    }

    /// Sends one message as a line.
    pub async fn send(&mut self, message: &Value) -> Result<()> {
        let stdin = self.stdin.as_mut().context("stdin already closed")?;
        stdin.write_all(format!("{message}\n").as_bytes()).await?;
        stdin.flush().await?;
        Ok(())
    }

    /// Reads the next message (within `timeout`).
    pub async fn next(&mut self, timeout: Duration) -> Result<Value> {
        let line = tokio::time::timeout(timeout, self.lines.next_line())
            .await
            .context("timed out waiting for a line")??
            .context("the child closed its stdout")?;
        self.transcript.push(line.clone());
        serde_json::from_str(&line).with_context(|| format!("not JSON: {line}"))
    }

    /// Closes stdin, reads what is left, waits for the exit code; returns it with the whole
    /// transcript.
    pub async fn finish(mut self, timeout: Duration) -> Result<(i32, Vec<String>)> {
        drop(self.stdin.take());
        while let Ok(Ok(Some(line))) = tokio::time::timeout(timeout, self.lines.next_line()).await {
            self.transcript.push(line);
        }
        let status = tokio::time::timeout(timeout, self.child.wait()).await??;
        match status.code() {
            Some(code) => Ok((code, self.transcript)),
            None => bail!("child killed by a signal: {status}"),
        }
    }
}
