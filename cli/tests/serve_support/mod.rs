//! Starting the real `skillet` binary as an HTTP server from a test: [`ServeHttp`] builds
//! `skillet [GLOBAL ARGS] serve --http 127.0.0.1:0 [--skills-dir DIR]...` with a clean
//! environment (`SKILLET_PROVIDER`/`SKILLET_CONFIG` removed, `XDG_STATE_HOME` under the working
//! directory so the web console's history stays there), piped stderr and `kill_on_drop`,
//! reads stderr until the "serving A2E on http://ADDR/a2e" notice, and returns the running
//! [`HttpServer`] with its base URL (and the embedded mock-llm URL when one was announced).
//! Stderr keeps being drained afterwards so the child never blocks on a full pipe.
//! [`get_json`] and [`post_json`] are the one-line "request, expect a JSON answer" calls the
//! tests make against such a server (or an in-process A2E HTTP host); [`jsonrpc_messages`]
//! reads the JSON-RPC messages of an MCP answer, SSE or plain JSON.
//!
//! It holds no assertions about the server and knows no skill or config content: tests write
//! their own `skillet.toml` into [`ServeHttp::cwd`]. The binary path is an argument because
//! `env!("CARGO_BIN_EXE_skillet")` only exists in the engine package; other crates include this
//! file by path.
#![allow(dead_code)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// A builder for `skillet ... serve --http 127.0.0.1:0`.
pub struct ServeHttp {
    program: PathBuf,
    shell_prefix: Option<String>,
    global_args: Vec<OsString>,
    skill_dirs: Vec<PathBuf>,
    env: Vec<(OsString, Option<OsString>)>,
    cwd: Option<PathBuf>,
}

/// A running `skillet serve --http` child (killed on drop).
pub struct HttpServer {
    pub child: Child,
    /// `http://ADDR`, without the `/a2e` path.
    pub base: String,
    /// The embedded mock-llm's URL, when the server announced one.
    pub mock: Option<String>,
    /// The stderr lines read up to and including the listening notice.
    pub startup_lines: Vec<String>,
    /// Every stderr line after those, as it arrives (for tests that look for what was logged).
    pub later_lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// The temporary working directory, when the builder made one.
    _cwd: Option<tempfile::TempDir>,
}

impl ServeHttp {
    /// Serves with the `skillet` binary at `program`.
    pub fn new(program: impl AsRef<Path>) -> Self {
        ServeHttp {
            program: program.as_ref().to_owned(),
            shell_prefix: None,
            global_args: Vec::new(),
            skill_dirs: Vec::new(),
            env: Vec::new(),
            cwd: None,
        }
    }

    /// Runs the binary through `sh -c "PREFIX && exec \"$0\" \"$@\""` (e.g. `ulimit -n 256`).
    pub fn shell_prefix(mut self, prefix: &str) -> Self {
        self.shell_prefix = Some(prefix.to_owned());
        self
    }

    /// Arguments placed before `serve` (e.g. `--provider`, `--model`).
    pub fn global_args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.global_args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Adds one `--skills-dir` (after `serve`).
    pub fn skills_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.skill_dirs.push(dir.as_ref().to_owned());
        self
    }

    /// Sets an environment variable for the child.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), Some(value.into())));
        self
    }

    /// Removes an environment variable from the child.
    pub fn env_remove(mut self, key: impl Into<OsString>) -> Self {
        self.env.push((key.into(), None));
        self
    }

    /// The working directory; without it, a fresh empty temporary directory (kept alive by
    /// the returned [`HttpServer`]) so no stray `skillet.toml` is read.
    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = Some(dir.as_ref().to_owned());
        self
    }

    /// Spawns the child and waits (at most 60 s) for its listening notice.
    pub async fn spawn(self) -> HttpServer {
        let temp_cwd = match self.cwd {
            Some(_) => None,
            None => Some(tempfile::tempdir().unwrap()),
        };
        let cwd = self
            .cwd
            .clone()
            .unwrap_or_else(|| temp_cwd.as_ref().unwrap().path().to_owned());
        let mut command = match &self.shell_prefix {
            Some(prefix) => {
                let mut shell = Command::new("sh");
                shell
                    .arg("-c")
                    .arg(format!(r#"{prefix} && exec "$0" "$@""#))
                    .arg(&self.program);
                shell
            }
            None => Command::new(&self.program),
        };
        command
            .current_dir(&cwd)
            .args(&self.global_args)
            .args(["serve", "--http", "127.0.0.1:0"]);
        for dir in &self.skill_dirs {
            command.arg("--skills-dir").arg(dir);
        }
        // The web console's run history (on by default on loopback) goes under the test's own
        // directory, never the user's XDG state directory.
        command
            .env_remove("SKILLET_PROVIDER")
            .env_remove("SKILLET_CONFIG")
            .env("XDG_STATE_HOME", cwd.join(".state"));
        for (key, value) in &self.env {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn skillet serve --http");
        let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
        let (mut mock, mut startup_lines) = (None, Vec::new());
        let base = loop {
            let line = tokio::time::timeout(Duration::from_secs(60), stderr.next_line())
                .await
                .expect("startup within 60 s")
                .unwrap()
                .expect("stderr open until the server listens");
            if let Some(rest) = line.split("embedded mock-llm at ").nth(1) {
                mock = rest.split_whitespace().next().map(str::to_owned);
            }
            let served = line
                .split("serving A2E on ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .map(|url| url.trim_end_matches("/a2e").to_owned());
            startup_lines.push(line);
            if let Some(base) = served {
                break base;
            }
        };
        // Keep draining stderr so the child never blocks on a full pipe.
        let later_lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let collected = std::sync::Arc::clone(&later_lines);
        tokio::spawn(async move {
            while let Ok(Some(line)) = stderr.next_line().await {
                collected.lock().unwrap().push(line);
            }
        });
        HttpServer {
            child,
            base,
            mock,
            startup_lines,
            later_lines,
            _cwd: temp_cwd,
        }
    }
}

/// GETs `url` and returns its JSON body (panics on a transport error or a non-JSON body).
pub async fn get_json(client: &reqwest::Client, url: impl reqwest::IntoUrl) -> serde_json::Value {
    client.get(url).send().await.unwrap().json().await.unwrap()
}

/// POSTs `body` to `url` and returns the JSON answer (panics on a transport error or a
/// non-JSON body).
pub async fn post_json(
    client: &reqwest::Client,
    url: impl reqwest::IntoUrl,
    body: impl Into<reqwest::Body>,
) -> serde_json::Value {
    client
        .post(url)
        .body(body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// The JSON-RPC messages of an SSE (or plain JSON) body.
pub fn jsonrpc_messages(text: &str) -> Vec<serde_json::Value> {
    if let Ok(one) = serde_json::from_str::<serde_json::Value>(text) {
        return vec![one];
    }
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}
