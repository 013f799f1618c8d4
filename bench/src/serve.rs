//! The `wire` and `stdio` modes: a real `skillet serve` child configured (through a generated
//! `skillet.toml`) with the bench skill, the mock as its only provider and a concurrent-call
//! limit as large as the run's concurrency.
//!
//! The binary is `--skillet PATH`, else `skillet` next to this binary (cargo puts both in
//! `target/<profile>/`: build it with `cargo build --release -p skillet --bin skillet`).
//!
//! The piped child ([`start_piped`]) and the A2E stdio client ([`start_stdio`]) take the child's
//! command, so the `stdio-relay` floor's child is driven by the very code that drives
//! `skillet serve --stdio` (and the `mcp` client, `mcp`, by the same pipes).
//!
//! Not here: the driver and the answer check (`modes`), the floor children (`relay`,
//! `stdio_relay`).

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use skillet_engine::protocol::{self, Message, SkillCallResponse};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::process::{Child, ChildStdout, Command};
use tokio::sync::{mpsc, oneshot};

use crate::measure;
use crate::workload::{self, ModelEndpoint, SkillFiles};

/// Finds the `skillet` binary: `explicit`, else next to the running executable.
pub fn find_skillet(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(path) = explicit {
        anyhow::ensure!(path.is_file(), "--skillet {}: no such file", path.display());
        return Ok(path.to_owned());
    }
    let exe = std::env::current_exe()?;
    let beside = exe.with_file_name("skillet");
    anyhow::ensure!(
        beside.is_file(),
        "no skillet binary at {}; build it with `cargo build --release -p skillet \
         --bin skillet` (same profile as skillet-bench) or pass --skillet PATH",
        beside.display()
    );
    Ok(beside)
}

/// A running `skillet serve` child.
#[derive(Debug)]
pub struct ServeChild {
    child: Child,
    /// Where stderr lines after startup go (the last few are kept for error messages).
    stderr_tail: Arc<Mutex<Vec<String>>>,
}

/// The command of `skillet serve TRANSPORT` (writing its `skillet.toml`: the bench skill, the
/// model at `model`, `max_calls` calls at once), its pipes piped.
pub fn skillet_command(
    skillet: &Path,
    files: &SkillFiles,
    model: &ModelEndpoint,
    max_calls: usize,
    transport: &[&str],
) -> anyhow::Result<Command> {
    let config = files.write_config(model, max_calls)?;
    let mut command = Command::new(skillet);
    command
        .arg("--config")
        .arg(config)
        .arg("serve")
        .args(transport)
        .env(workload::API_KEY_ENV, "bench-key")
        .env_remove("SKILLET_PROVIDER")
        .env_remove("SKILLET_MODEL")
        .env_remove("SKILLET_BASE_URL")
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    Ok(command)
}

impl ServeChild {
    /// Another server child of the bench (the HTTP `relay`), whose stderr is not followed.
    pub fn adopt(child: Child) -> ServeChild {
        ServeChild {
            child,
            stderr_tail: Arc::default(),
        }
    }

    /// CPU seconds and peak RSS (KiB) of the child so far.
    pub fn usage(&self) -> anyhow::Result<(f64, u64)> {
        let pid = self
            .child
            .id()
            .ok_or_else(|| anyhow::anyhow!("server child already exited"))?;
        Ok((
            measure::child_cpu_seconds(pid)?,
            measure::peak_rss_kib(&pid.to_string())?,
        ))
    }

    /// The last stderr lines, for error messages.
    pub fn stderr_tail(&self) -> String {
        self.stderr_tail
            .lock()
            .map(|t| t.join("\n"))
            .unwrap_or_default()
    }

    /// Stops the child (end of input for stdio, then SIGKILL) and waits for it.
    pub async fn stop(mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}

/// Keeps reading `stderr` on a thread, keeping the last lines; returns the lines read until
/// `until` matched one (that line included), or all of them if the stream ended first.
fn follow_stderr(
    stderr: std::process::ChildStderr,
    tail: Arc<Mutex<Vec<String>>>,
    until: impl Fn(&str) -> bool + Send + 'static,
) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut found = false;
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if !found && until(&line) {
                found = true;
                let _ = tx.send(line.clone());
            }
            if let Ok(mut tail) = tail.lock() {
                tail.push(line);
                let excess = tail.len().saturating_sub(20);
                tail.drain(..excess);
            }
        }
    });
    rx
}

fn into_std_stderr(child: &mut Child) -> anyhow::Result<std::process::ChildStderr> {
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| anyhow::anyhow!("server child has no stderr"))?;
    // A blocking reader thread is simplest for a pipe nobody waits on.
    let fd = stderr.into_owned_fd()?;
    Ok(std::process::ChildStderr::from(fd))
}

/// `skillet serve --http 127.0.0.1:0`; returns the child and its A2E URL.
pub async fn start_http(
    skillet: &Path,
    files: &SkillFiles,
    model: &ModelEndpoint,
    max_calls: usize,
) -> anyhow::Result<(ServeChild, String)> {
    let mut child =
        skillet_command(skillet, files, model, max_calls, &["--http", "127.0.0.1:0"])?.spawn()?;
    let tail = Arc::new(Mutex::new(Vec::new()));
    let found = follow_stderr(into_std_stderr(&mut child)?, Arc::clone(&tail), |line| {
        line.contains("serving A2E on http://")
    });
    let line =
        tokio::task::spawn_blocking(move || found.recv_timeout(std::time::Duration::from_secs(30)))
            .await?;
    let served = ServeChild {
        child,
        stderr_tail: tail,
    };
    let Ok(line) = line else {
        let tail = served.stderr_tail();
        served.stop().await;
        anyhow::bail!("skillet serve --http did not start:\n{tail}");
    };
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://") && w.ends_with("/a2e"))
        .ok_or_else(|| anyhow::anyhow!("no URL in {line:?}"))?
        .to_owned();
    Ok((served, url))
}

/// One `wire` call: `POST /a2e` with the request, the JSON answer checked.
pub async fn wire_call(client: &reqwest::Client, url: &str) -> Result<(), String> {
    let body = protocol::encode(&Message::CallRequest(workload::request()));
    let bytes = crate::modes::post_json(client.post(url).body(body)).await?;
    let text = std::str::from_utf8(&bytes).map_err(|e| format!("answer is not UTF-8: {e}"))?;
    match protocol::decode(text) {
        Ok(Message::CallResponse(response)) => crate::modes::check_response(&response),
        Ok(other) => Err(format!("unexpected {}", other.type_name())),
        Err(e) => Err(format!("undecodable answer: {e}")),
    }
}

type Waiters = Arc<Mutex<HashMap<String, oneshot::Sender<SkillCallResponse>>>>;

/// An A2E client over a stdio child's pipes: a writer task (requests, one per line) and a reader
/// task (answers, routed to their callers by `req_id`).
#[derive(Debug, Clone)]
pub struct StdioClient {
    lines: mpsc::UnboundedSender<String>,
    waiters: Waiters,
}

/// Starts `command` (a server child speaking on its stdin and stdout: `skillet serve --stdio`
/// or `--mcp`, or a floor child) with its pipes piped and its stderr followed; returns the
/// child, a sender of lines to its stdin (see [`line_writer`]) and its stdout.
pub fn start_piped(
    mut command: Command,
) -> anyhow::Result<(ServeChild, mpsc::UnboundedSender<String>, ChildStdout)> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn()?;
    let tail = Arc::new(Mutex::new(Vec::new()));
    let _ = follow_stderr(into_std_stderr(&mut child)?, Arc::clone(&tail), |_| false);
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| anyhow::anyhow!("server child has no stdin"))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| anyhow::anyhow!("server child has no stdout"))?;
    let served = ServeChild {
        child,
        stderr_tail: tail,
    };
    Ok((served, line_writer(stdin), stdout))
}

/// A task writing the lines sent to it into `output` (a child's stdin), each with its newline,
/// batching whatever is queued into one write; it ends when every sender is gone (closing the
/// child's input) or the child stops reading.
pub(crate) fn line_writer(
    mut output: impl AsyncWrite + Unpin + Send + 'static,
) -> mpsc::UnboundedSender<String> {
    let (lines, mut outgoing) = mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        let mut buffer = Vec::new();
        while let Some(line) = outgoing.recv().await {
            buffer.clear();
            buffer.extend_from_slice(line.as_bytes());
            buffer.push(b'\n');
            while let Ok(more) = outgoing.try_recv() {
                buffer.extend_from_slice(more.as_bytes());
                buffer.push(b'\n');
            }
            if output.write_all(&buffer).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });
    lines
}

/// Starts `command` (`skillet serve --stdio`, or the `stdio-relay` floor) as [`start_piped`]
/// does; returns the child and an A2E client for it.
pub fn start_stdio(command: Command) -> anyhow::Result<(ServeChild, StdioClient)> {
    let (child, lines, stdout) = start_piped(command)?;
    Ok((child, StdioClient::over(lines, stdout)))
}

impl StdioClient {
    /// A client sending its request lines to `lines` and reading the answers from `answers`
    /// (the child's stdout).
    pub(crate) fn over(
        lines: mpsc::UnboundedSender<String>,
        answers: impl AsyncRead + Unpin + Send + 'static,
    ) -> StdioClient {
        let waiters: Waiters = Arc::default();
        let routed = Arc::clone(&waiters);
        tokio::spawn(async move {
            let mut reader = tokio::io::BufReader::new(answers).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                if let Ok(Message::CallResponse(response)) = protocol::decode(&line) {
                    let waiter = routed
                        .lock()
                        .ok()
                        .and_then(|mut w| w.remove(&response.req_id));
                    if let Some(waiter) = waiter {
                        let _ = waiter.send(response);
                    }
                }
            }
            // The child is gone: callers still waiting see their sender dropped.
            if let Ok(mut w) = routed.lock() {
                w.clear();
            }
        });
        StdioClient { lines, waiters }
    }

    /// One `stdio` call: the request written as a line, its answer awaited and checked.
    pub async fn call(&self) -> Result<(), String> {
        let request = workload::request();
        let (tx, rx) = oneshot::channel();
        self.waiters
            .lock()
            .map_err(|_| "waiter table poisoned".to_owned())?
            .insert(request.id.clone(), tx);
        self.lines
            .send(protocol::encode(&Message::CallRequest(request)))
            .map_err(|_| "the child's stdin is closed".to_owned())?;
        let response = rx
            .await
            .map_err(|_| "the child ended before answering".to_owned())?;
        crate::modes::check_response(&response)
    }
}
