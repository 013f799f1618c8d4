//! Where mock-llm runs during a run, and how its CPU time is told apart from the code under
//! test:
//!
//! - `inproc` — in this process, on a dedicated thread with its own single-threaded tokio
//!   runtime, so its CPU time can be read per thread and subtracted from the process's;
//! - `child` — a `skillet-bench mock` child process (this binary again): needed for very large
//!   concurrency, where mock and client sockets together would exceed this process's
//!   file-descriptor limit; its CPU is read from `/proc/PID`;
//! - `external` — a server already running at `--mock-url` (CPU not measured).
//!
//! The journal is kept tiny during runs (it would otherwise hold 10,000 request bodies and
//! count in the peak RSS); `capture` uses a separate server with the full journal.
//!
//! Not here: the scenario itself (`workload`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mock_llm::{MockConfig, MockServer, Scenario};

use crate::measure;
use crate::workload;

/// Journal entries kept by the mock during a run.
const RUN_JOURNAL: usize = 16;

/// A running mock.
#[derive(Debug)]
pub enum Mock {
    /// On a thread of this process.
    InProc {
        /// Base URL (`http://127.0.0.1:PORT`).
        url: String,
        /// The thread's kernel id, for `/proc/self/task/TID`.
        tid: i32,
        /// Dropping it stops the server and its thread.
        stop: Option<tokio::sync::oneshot::Sender<()>>,
        /// The thread, joined on stop.
        thread: Option<std::thread::JoinHandle<()>>,
    },
    /// A `skillet-bench mock` child; closing its stdin stops it.
    Child {
        /// Base URL.
        url: String,
        /// The process.
        child: Child,
    },
    /// Somebody else's server.
    External {
        /// Base URL.
        url: String,
    },
}

/// The mock configuration of a run: the bench scenario, `latency` per response.
pub fn config(latency: Duration) -> anyhow::Result<MockConfig> {
    Ok(MockConfig::default()
        .with_scenario(Scenario::from_yaml_str(workload::SCENARIO)?)
        .with_latency(latency)
        .with_journal_limit(RUN_JOURNAL))
}

impl Mock {
    /// Starts the mock on its own thread in this process.
    pub fn start_inproc(latency: Duration) -> anyhow::Result<Mock> {
        let config = config(latency)?;
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("mock-llm".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(anyhow::anyhow!("mock runtime: {e}")));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let tid = rustix::thread::gettid().as_raw_nonzero().get();
                    match MockServer::start(config).await {
                        Ok(server) => {
                            let _ = ready_tx.send(Ok((server.base_url(), tid)));
                            let _ = stop_rx.await;
                            server.shutdown().await;
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(anyhow::anyhow!("mock-llm: {e}")));
                        }
                    }
                });
            })?;
        let (url, tid) = ready_rx
            .recv()
            .map_err(|_| anyhow::anyhow!("mock thread ended before starting"))??;
        Ok(Mock::InProc {
            url,
            tid,
            stop: Some(stop_tx),
            thread: Some(thread),
        })
    }

    /// Starts `skillet-bench mock --latency-ms L` and reads its URL from its first stdout line.
    pub fn start_child(latency: Duration) -> anyhow::Result<Mock> {
        let exe = std::env::current_exe()?;
        let mut child = Command::new(exe)
            .arg("mock")
            .arg("--latency-ms")
            .arg(latency.as_millis().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| anyhow::anyhow!("mock child has no stdout"))?;
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line)?;
        let url = line.trim().to_owned();
        if !url.starts_with("http://") {
            let _ = child.kill();
            anyhow::bail!("mock child did not print its URL (got {line:?})");
        }
        Ok(Mock::Child { url, child })
    }

    /// The base URL.
    pub fn url(&self) -> &str {
        match self {
            Mock::InProc { url, .. } | Mock::Child { url, .. } | Mock::External { url } => url,
        }
    }

    /// `inproc`, `child` or `external`.
    pub fn placement(&self) -> &'static str {
        match self {
            Mock::InProc { .. } => "inproc",
            Mock::Child { .. } => "child",
            Mock::External { .. } => "external",
        }
    }

    /// CPU seconds the mock has used (0 when external).
    pub fn cpu_seconds(&self) -> anyhow::Result<f64> {
        match self {
            Mock::InProc { tid, .. } => measure::task_cpu_seconds(&format!("self/task/{tid}")),
            Mock::Child { child, .. } => measure::child_cpu_seconds(child.id()),
            Mock::External { .. } => Ok(0.0),
        }
    }

    /// Stops the mock and waits for it.
    pub fn stop(mut self) {
        self.stop_in_place();
    }

    fn stop_in_place(&mut self) {
        match self {
            Mock::InProc { stop, thread, .. } => {
                drop(stop.take());
                if let Some(thread) = thread.take() {
                    let _ = thread.join();
                }
            }
            Mock::Child { child, .. } => {
                drop(child.stdin.take());
                let _ = child.wait();
            }
            Mock::External { .. } => {}
        }
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        self.stop_in_place();
    }
}

/// `skillet-bench mock`: serves the bench scenario on 127.0.0.1:0, prints the base URL on
/// stdout, and stops when stdin ends.
pub async fn serve_child(latency: Duration) -> anyhow::Result<()> {
    use tokio::io::AsyncReadExt;
    let server = MockServer::start(config(latency)?).await?;
    println!("{}", server.base_url());
    let mut sink = Vec::new();
    tokio::io::stdin().read_to_end(&mut sink).await?;
    server.shutdown().await;
    Ok(())
}
