//! Helpers for the NATS worker tests: a real `nats-server -js` on a free 127.0.0.1 port with a
//! temporary store (skipped with a notice when the binary is missing, a failure under `CI`),
//! `skillet serve --nats` workers as child processes with their logs in files, and a client.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use skillet_cli::config::NatsOptions;
use skillet_host::nats::NatsClient;
use tokio::process::{Child, Command};

use crate::cli_support::{SKILLET, write_skill};
use serde_json::{Map, json};
use skillet_protocol::{SkillCallRequest, SkillCallResponse};

/// The `nats-server` binary, if installed. Under `CI` a missing binary fails the test.
pub fn nats_server_binary(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/bin")])
        .map(|dir| dir.join("nats-server"))
        .find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but nats-server is missing (apt-get install nats-server)"
        );
        eprintln!(
            "\n==== SKIPPED {test}: nats-server not installed (apt-get install nats-server) ====\n"
        );
    }
    found
}

/// A running `nats-server -js`; killed on drop.
pub struct NatsServer {
    binary: PathBuf,
    child: Option<Child>,
    /// A server configuration file (`-c`), when the test needs one.
    config: Option<PathBuf>,
    pub port: u16,
    pub store: tempfile::TempDir,
}

impl NatsServer {
    /// Starts a server on a port the kernel picks, or `None` (skip) when the binary is missing.
    ///
    /// The server binds port 0 itself and reports the port in its ports file: picking a free
    /// port here and handing it over would race with the other tests, whose servers start at the
    /// same time (two servers on one port, one of them dead, and two tests sharing a stream).
    pub async fn start(test: &str) -> Option<NatsServer> {
        Self::start_with(test, "").await
    }

    /// [`Self::start`] with `config` as the server's configuration file (e.g.
    /// `max_payload: 65536`).
    pub async fn start_with(test: &str, config: &str) -> Option<NatsServer> {
        let binary = nats_server_binary(test)?;
        let store = tempfile::tempdir().unwrap();
        let config = (!config.is_empty()).then(|| {
            let path = store.path().join("nats-server.conf");
            std::fs::write(&path, config).unwrap();
            path
        });
        let mut server = NatsServer {
            binary,
            child: None,
            config,
            port: 0,
            store,
        };
        server.launch().await;
        Some(server)
    }

    /// Starts `nats-server` on `self.port` (0: the kernel picks) and waits until this child,
    /// not some other process, listens: its ports file names the port.
    async fn launch(&mut self) {
        let ports_dir = self.store.path().join("ports");
        let _ = std::fs::remove_dir_all(&ports_dir);
        std::fs::create_dir_all(&ports_dir).unwrap();
        let port = if self.port == 0 {
            "-1".to_string()
        } else {
            self.port.to_string()
        };
        let mut command = Command::new(&self.binary);
        if let Some(config) = &self.config {
            command.arg("-c").arg(config);
        }
        let mut child = command
            .args(["-js", "-a", "127.0.0.1", "-p", &port, "-sd"])
            .arg(self.store.path().join("js"))
            .arg("--ports_file_dir")
            .arg(&ports_dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("nats-server starts");
        let ports_file = ports_dir.join(format!("nats-server_{}.ports", child.id().unwrap()));
        for _ in 0..200 {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("nats-server exited at start ({status}); port {port} taken?");
            }
            if let Some(found) = listening_port(&ports_file) {
                assert!(self.port == 0 || self.port == found, "restarted on {found}");
                self.port = found;
                self.child = Some(child);
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("nats-server wrote no ports file within 10 s");
    }

    /// `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Kills the server (SIGKILL) and waits for it to exit.
    pub async fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().await.unwrap();
        }
    }

    /// Starts it again on the same port with the same store.
    pub async fn restart(&mut self) {
        self.kill().await;
        self.launch().await;
    }
}

/// The client port in a `nats-server` ports file (`{"nats":["nats://127.0.0.1:PORT"]}`), once
/// the file is complete.
fn listening_port(ports_file: &Path) -> Option<u16> {
    let text = std::fs::read_to_string(ports_file).ok()?;
    let ports: serde_json::Value = serde_json::from_str(&text).ok()?;
    let url = ports["nats"][0].as_str()?;
    url.rsplit(':').next()?.parse().ok()
}

/// `[nats]` text for a test: the server plus `extra` lines.
pub fn nats_toml(server: &NatsServer, extra: &str) -> String {
    format!("[nats]\nurl = \"{}\"\n{extra}\n", server.url())
}

/// The same settings as a typed config (for the client).
pub fn nats_config(server: &NatsServer, extra: &str) -> NatsOptions {
    let config: skillet_cli::config::Config = toml::from_str(&nats_toml(server, extra)).unwrap();
    config.nats
}

/// A `skillet serve --nats` child whose stderr goes to a log file.
pub struct Worker {
    pub child: Child,
    pub log: PathBuf,
    pub dir: tempfile::TempDir,
}

impl Worker {
    /// Spawns a worker over `skills` with `toml` as its skillet.toml.
    pub fn spawn(server: &NatsServer, skills: &Path, toml: &str) -> Worker {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("skillet.toml"), toml).unwrap();
        let log = dir.path().join("worker.log");
        let child = Command::new(SKILLET)
            .current_dir(dir.path())
            .args(["serve", "--nats", &server.url(), "--skills-dir"])
            .arg(skills)
            .arg("-v")
            .env_remove("SKILLET_PROVIDER")
            .env_remove("SKILLET_CONFIG")
            .env_remove("RUST_LOG")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn skillet serve --nats");
        Worker { child, log, dir }
    }

    /// Spawns `count` workers sharing `skills` and `toml`, then waits until each pulls calls.
    pub async fn spawn_ready(
        count: usize,
        server: &NatsServer,
        skills: &Path,
        toml: &str,
    ) -> Vec<Worker> {
        let workers: Vec<Worker> = (0..count)
            .map(|_| Worker::spawn(server, skills, toml))
            .collect();
        for worker in &workers {
            worker.ready().await;
        }
        workers
    }

    /// Waits until the worker logged that it pulls calls.
    pub async fn ready(&self) {
        self.wait_for_line("NATS worker pulling calls", Duration::from_secs(30))
            .await;
    }

    /// Waits until a log line contains `needle`.
    pub async fn wait_for_line(&self, needle: &str, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if self.lines().iter().any(|l| l.contains(needle)) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "worker never logged {needle:?}:\n{}",
                self.lines().join("\n")
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The log, ANSI colours removed.
    pub fn lines(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines().map(strip_ansi).collect()
    }

    /// `(req_id, fields)` of every log line with `message`.
    pub fn events(&self, message: &str) -> Vec<LogEvent> {
        self.lines()
            .iter()
            .filter(|l| l.contains(message))
            .map(|l| LogEvent::parse(l))
            .collect()
    }

    /// SIGKILL.
    pub async fn kill9(&mut self) {
        self.child.kill().await.unwrap();
    }

    /// SIGTERM, then the exit code.
    pub async fn terminate(&mut self) -> i32 {
        crate::cli_support::sigterm(self.child.id().unwrap());
        let status = tokio::time::timeout(Duration::from_secs(60), self.child.wait())
            .await
            .expect("worker exits within 60 s")
            .unwrap();
        status.code().expect("exited normally")
    }
}

/// The fields of one worker log line.
#[derive(Debug, Clone)]
pub struct LogEvent {
    pub req_id: String,
    pub delivery: u64,
    pub in_flight: Option<u64>,
}

impl LogEvent {
    fn parse(line: &str) -> LogEvent {
        let field = |name: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(&format!("{name}=")))
                .map(str::to_owned)
        };
        LogEvent {
            req_id: field("req_id").unwrap_or_default(),
            delivery: field("delivery").and_then(|d| d.parse().ok()).unwrap_or(0),
            in_flight: field("in_flight").and_then(|d| d.parse().ok()),
        }
    }
}

fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A client with `config`.
pub async fn client(config: &NatsOptions) -> NatsClient {
    NatsClient::connect(config).await.expect("client connects")
}

/// A skills root with `echo` answering after `latency_ms`.
pub fn echo_skills(latency_ms: u64) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    write_skill(root.path(), "echo", latency_ms, "{json: {echo: \"hello\"}}");
    root
}

pub fn echo_call(id: &str) -> SkillCallRequest {
    let mut arguments = Map::new();
    arguments.insert("text".into(), json!("hello"));
    let mut request = SkillCallRequest::new("echo", arguments);
    request.id = id.to_owned();
    request.streaming = false;
    request
}

pub fn assert_succeeded(response: &SkillCallResponse, id: &str) {
    assert_eq!(response.req_id, id);
    assert!(response.error.is_none(), "{response:?}");
    let data = response.data.as_ref().expect("a result");
    assert!(data.success, "{response:?}");
    assert_eq!(data.data, Some(json!({"echo": "hello"})));
}
