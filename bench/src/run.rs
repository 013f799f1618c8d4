//! One run of one mode in this process: start the mock, prepare the mode (capture the raw
//! requests, build the executor, or start a `skillet serve` child or a transport floor's child),
//! make one warm-up call, then drive N calls at concurrency C and turn the counters into a
//! [`RunReport`].
//!
//! Not here: several runs and modes (`main` runs each in a fresh process so peak RSS is per
//! run), the modes themselves (`modes`, `serve`, `mcp`, `mcp_http`, `relay`, `stdio_relay`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::ValueEnum;
use skillet_engine::service::SkillService;
use tokio_util::sync::CancellationToken;

use crate::mcp;
use crate::mcp_http;
use crate::measure::{self, RunReport};
use crate::mock::Mock;
use crate::modes::{self, Driven};
use crate::relay;
use crate::serve::{self, ServeChild};
use crate::workload::{self, ModelEndpoint, SkillFiles};

/// How calls reach the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// The engine's HTTP requests from a bare reqwest client, bodies encoded and answers
    /// parsed with serde_json: the parsing floor.
    Raw,
    /// The same requests replayed as captured bytes, answers only searched: the lower floor.
    Replay,
    /// `Executor::call` in this process.
    Engine,
    /// `skillet serve --http` child, JSON over loopback.
    Wire,
    /// `skillet serve --stdio` child, JSON Lines over pipes.
    Stdio,
    /// `skillet serve --mcp` child, MCP (JSON-RPC lines) over pipes, as MCP hosts drive it.
    Mcp,
    /// `skillet serve --http` child, MCP's streamable HTTP (`/mcp`), as remote MCP hosts drive it.
    McpHttp,
    /// The transport floor for `wire`: a minimal A2E-over-HTTP child (`relay`) that does the
    /// `raw` floor's model requests and answers with serde_json.
    Relay,
    /// The transport floor for `stdio`: a minimal A2E JSON Lines child (`stdio-relay`) doing
    /// the `raw` floor's model requests, driven by the `stdio` mode's client.
    StdioRelay,
    /// The transport floor for `mcp`: a minimal MCP-over-stdio child (`mcp-relay`) doing the
    /// `raw` floor's model requests, driven by the `mcp` mode's client.
    McpRelay,
}

impl Mode {
    /// The mode's name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Raw => "raw",
            Mode::Replay => "replay",
            Mode::Engine => "engine",
            Mode::Wire => "wire",
            Mode::Stdio => "stdio",
            Mode::Mcp => "mcp",
            Mode::McpHttp => "mcp-http",
            Mode::Relay => "relay",
            Mode::StdioRelay => "stdio-relay",
            Mode::McpRelay => "mcp-relay",
        }
    }
}

/// Where the mock runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MockPlacement {
    /// A thread of the bench process (its CPU time is subtracted).
    Inproc,
    /// A child process (needed above ~9,000 concurrent calls: file descriptors).
    Child,
}

/// The parameters of one run.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// The mode.
    pub mode: Mode,
    /// Calls to make.
    pub calls: u64,
    /// Calls in flight at once.
    pub concurrency: u64,
    /// Mock latency per model response.
    pub latency: Duration,
    /// Where the mock runs (ignored with `mock_url`).
    pub mock: MockPlacement,
    /// A running mock-llm serving the bench scenario.
    pub mock_url: Option<String>,
    /// The `skillet` binary for `wire` and `stdio`.
    pub skillet: Option<PathBuf>,
    /// Model requests over HTTP/2 by prior knowledge (every mode alike).
    pub http2: bool,
    /// `mcp` and `mcp-relay` modes: the `logging/setLevel` sent after `initialize`, if any.
    pub mcp_log_level: Option<String>,
}

/// Runs `spec` and measures it.
pub async fn run(spec: &RunSpec) -> anyhow::Result<RunReport> {
    let files = SkillFiles::write()?;
    let mock = match (&spec.mock_url, spec.mock) {
        (Some(url), _) => Mock::External {
            url: url.trim_end_matches('/').to_owned(),
        },
        (None, MockPlacement::Inproc) => Mock::start_inproc(spec.latency)?,
        (None, MockPlacement::Child) => Mock::start_child(spec.latency)?,
    };
    let url = mock.url().to_owned();
    let model = ModelEndpoint {
        url: url.clone(),
        http2: spec.http2,
    };
    // `serve` answers calls beyond its limit with an error instead of queueing them.
    let max_calls = usize::try_from(spec.concurrency)?.max(64);
    let (calls, concurrency) = (spec.calls, spec.concurrency);

    let (driven, start, end, server) = match spec.mode {
        Mode::Raw | Mode::Replay => {
            let requests = Arc::new(modes::capture(&files).await?);
            let client = modes::http_client(spec.http2)?;
            let parse = spec.mode == Mode::Raw;
            let one = move |client: reqwest::Client, url: String, requests: Arc<Vec<_>>| async move {
                if parse {
                    modes::raw_call(&client, &url, &requests).await
                } else {
                    modes::replay_call(&client, &url, &requests).await
                }
            };
            one(client.clone(), url.clone(), requests.clone())
                .await
                .map_err(|e| anyhow::anyhow!("warm-up: {e}"))?;
            let start = Baseline::take(&mock, None)?;
            let driven = modes::drive(calls, concurrency, move |_| {
                one(client.clone(), url.clone(), requests.clone())
            })
            .await;
            (driven, start, Baseline::take(&mock, None)?, None)
        }
        Mode::Engine => {
            let executor = workload::executor(&files, &model)?;
            let warm = executor
                .call(workload::request(), None, CancellationToken::new())
                .await;
            modes::check_response(&warm).map_err(|e| anyhow::anyhow!("warm-up: {e}"))?;
            let start = Baseline::take(&mock, None)?;
            let driven = modes::drive(calls, concurrency, move |_| {
                let executor = executor.clone();
                async move {
                    let response = executor
                        .call(workload::request(), None, CancellationToken::new())
                        .await;
                    modes::check_response(&response)
                }
            })
            .await;
            (driven, start, Baseline::take(&mock, None)?, None)
        }
        Mode::Wire => {
            let skillet = serve::find_skillet(spec.skillet.as_deref())?;
            let (child, a2e) = serve::start_http(&skillet, &files, &model, max_calls).await?;
            // The bench's own requests to `serve --http`: HTTP/1.1, as hosts send them.
            let client = (modes::http_client(false)?, a2e);
            through_child(spec, &mock, child, client, |(client, a2e)| async move {
                serve::wire_call(&client, &a2e).await
            })
            .await?
        }
        Mode::Stdio => {
            let skillet = serve::find_skillet(spec.skillet.as_deref())?;
            let command =
                serve::skillet_command(&skillet, &files, &model, max_calls, &["--stdio"])?;
            let (child, client) = serve::start_stdio(command)?;
            through_child(spec, &mock, child, client, |client| async move {
                client.call().await
            })
            .await?
        }
        Mode::Mcp => {
            let skillet = serve::find_skillet(spec.skillet.as_deref())?;
            let level = spec.mcp_log_level.as_deref();
            let command = serve::skillet_command(&skillet, &files, &model, max_calls, &["--mcp"])?;
            let (child, client) = mcp::start(command, level).await?;
            through_child(spec, &mock, child, client, |client| async move {
                client.call().await
            })
            .await?
        }
        Mode::McpHttp => {
            let skillet = serve::find_skillet(spec.skillet.as_deref())?;
            let (child, client) = mcp_http::start(&skillet, &files, &model, max_calls).await?;
            through_child(spec, &mock, child, client, |client| async move {
                client.call().await
            })
            .await?
        }
        Mode::Relay => {
            let requests = modes::capture(&files).await?;
            let (child, a2e) =
                relay::start_child(files.root(), &url, &requests, spec.http2).await?;
            // The bench's own requests to the relay: HTTP/1.1, as `wire` sends them.
            let client = (modes::http_client(false)?, a2e);
            through_child(spec, &mock, child, client, |(client, a2e)| async move {
                relay::call(&client, &a2e).await
            })
            .await?
        }
        Mode::StdioRelay => {
            let requests = modes::capture(&files).await?;
            let command =
                relay::child_command("stdio-relay", files.root(), &url, &requests, spec.http2)?;
            // The `stdio` mode's client, driving the floor's child.
            let (child, client) = serve::start_stdio(command)?;
            through_child(spec, &mock, child, client, |client| async move {
                client.call().await
            })
            .await?
        }
        Mode::McpRelay => {
            let requests = modes::capture(&files).await?;
            let command =
                relay::child_command("mcp-relay", files.root(), &url, &requests, spec.http2)?;
            // The `mcp` mode's client (and its `logging/setLevel`, if any), driving the floor.
            let level = spec.mcp_log_level.as_deref();
            let (child, client) = mcp::start(command, level).await?;
            through_child(spec, &mock, child, client, |client| async move {
                client.call().await
            })
            .await?
        }
    };
    let report = report(spec, &mock, &driven, &start, &end);
    if let Some(server) = server {
        server.stop().await;
    }
    mock.stop();
    Ok(report)
}

/// A run through a server child: one warm-up call through `client` (its failure fails the run
/// with the child's stderr), then the measured calls, each `call` on a clone of `client`.
/// Returns the run, the counters before and after it, and the child (still running: `client`
/// is dropped only after the end was measured, since a stdio child ends with its input).
async fn through_child<C, F, Fut>(
    spec: &RunSpec,
    mock: &Mock,
    child: ServeChild,
    client: C,
    call: F,
) -> anyhow::Result<(Driven, Baseline, Baseline, Option<ServeChild>)>
where
    C: Clone + Send + Sync + 'static,
    F: Fn(C) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send + 'static,
{
    let warm = call(client.clone()).await;
    let child = warmed(child, warm).await?;
    let start = Baseline::take(mock, Some(&child))?;
    let driving = client.clone();
    let driven = modes::drive(spec.calls, spec.concurrency, move |_| call(driving.clone())).await;
    let end = Baseline::take(mock, Some(&child))?;
    drop(client);
    Ok((driven, start, end, Some(child)))
}

/// Fails with the child's stderr when its warm-up call failed.
async fn warmed(child: ServeChild, warm: Result<(), String>) -> anyhow::Result<ServeChild> {
    match warm {
        Ok(()) => Ok(child),
        Err(e) => {
            // Give the stderr reader a moment to collect the child's last words.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let tail = child.stderr_tail();
            child.stop().await;
            anyhow::bail!("warm-up call through the server child failed: {e}\nits stderr:\n{tail}")
        }
    }
}

/// CPU counters at one moment.
#[derive(Debug, Clone, Copy)]
struct Baseline {
    process: f64,
    mock: f64,
    server: f64,
    server_rss: u64,
}

impl Baseline {
    fn take(mock: &Mock, server: Option<&ServeChild>) -> anyhow::Result<Baseline> {
        let (server, server_rss) = match server {
            Some(child) => child.usage()?,
            None => (0.0, 0),
        };
        Ok(Baseline {
            process: measure::process_cpu_seconds()?,
            mock: mock.cpu_seconds()?,
            server,
            server_rss,
        })
    }
}

fn report(
    spec: &RunSpec,
    mock: &Mock,
    driven: &Driven,
    start: &Baseline,
    end: &Baseline,
) -> RunReport {
    let mut latencies = driven.latencies.clone();
    latencies.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let turns = spec.calls * workload::TURNS_PER_CALL;
    let wall = driven.wall.as_secs_f64().max(f64::EPSILON);
    let mock_cpu = end.mock - start.mock;
    let client_cpu = match mock {
        // The in-process mock's thread is part of this process's counters.
        Mock::InProc { .. } => (end.process - start.process) - mock_cpu,
        _ => end.process - start.process,
    };
    let server_cpu = end.server - start.server;
    #[allow(clippy::cast_precision_loss)]
    RunReport {
        mode: spec.mode.name().to_owned(),
        calls: spec.calls,
        concurrency: spec.concurrency,
        latency_ms: u64::try_from(spec.latency.as_millis()).unwrap_or(u64::MAX),
        mock: mock.placement().to_owned(),
        failures: driven.failures,
        first_failure: driven.first_failure.clone(),
        turns,
        wall_s: wall,
        calls_per_s: spec.calls as f64 / wall,
        turns_per_s: turns as f64 / wall,
        p50_ms: ms(measure::quantile(&latencies, 0.50)),
        p99_ms: ms(measure::quantile(&latencies, 0.99)),
        max_ms: ms(latencies.last().copied().unwrap_or_default()),
        client_cpu_s: client_cpu.max(0.0),
        server_cpu_s: server_cpu.max(0.0),
        mock_cpu_s: mock_cpu.max(0.0),
        cpu_us_per_turn: (client_cpu + server_cpu).max(0.0) * 1e6 / (turns.max(1) as f64),
        peak_rss_kib: measure::peak_rss_kib("self").unwrap_or(0),
        server_peak_rss_kib: end.server_rss,
        load_avg: measure::load_average(),
    }
}

#[cfg(test)]
mod tests {
    use mock_llm::{MockConfig, MockServer, Scenario};

    use super::*;

    fn spec(mode: Mode, mock_url: Option<String>) -> RunSpec {
        RunSpec {
            mode,
            calls: 4,
            concurrency: 2,
            latency: Duration::ZERO,
            mock: MockPlacement::Inproc,
            mock_url,
            skillet: None,
            http2: false,
            mcp_log_level: None,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn engine_and_raw_runs_complete_every_call_with_three_turns_each() {
        for mode in [Mode::Engine, Mode::Raw, Mode::Replay] {
            let report = run(&spec(mode, None)).await.unwrap();
            assert_eq!(report.failures, 0, "{mode:?}: {:?}", report.first_failure);
            assert_eq!(report.turns, 12);
            assert_eq!(report.mock, "inproc");
            assert!(report.p50_ms <= report.p99_ms);
            assert!(report.peak_rss_kib > 0);
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn http2_runs_complete_every_call_over_one_connection_to_the_mock() {
        let server = MockServer::start(
            MockConfig::default()
                .with_scenario(Scenario::from_yaml_str(workload::SCENARIO).unwrap()),
        )
        .await
        .unwrap();
        for mode in [Mode::Engine, Mode::Raw] {
            let mut spec = spec(mode, Some(server.base_url()));
            spec.http2 = true;
            let report = run(&spec).await.unwrap();
            assert_eq!(report.failures, 0, "{mode:?}: {:?}", report.first_failure);
            assert_eq!(report.turns, 12);
        }
        let journal = server.journal();
        assert!(
            journal.iter().all(|e| e.http_version == "HTTP/2.0"),
            "{journal:?}"
        );
        // The raw mode's capture uses its own mock; here one connection per mode's client.
        assert_eq!(server.connections_accepted(), 2);
        server.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_mock_answering_the_wrong_output_fails_the_run_at_warm_up() {
        // A mock whose final answer is schema-valid but not the expected one.
        let wrong = workload::SCENARIO.replace("result: 43", "result: 44");
        let server = MockServer::start(
            MockConfig::default().with_scenario(Scenario::from_yaml_str(&wrong).unwrap()),
        )
        .await
        .unwrap();
        let error = run(&spec(Mode::Engine, Some(server.base_url())))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("warm-up") && error.contains("unexpected output"),
            "{error}"
        );
        server.shutdown().await;
    }

    #[tokio::test]
    async fn the_driver_counts_failed_calls_and_keeps_the_first_reason() {
        let driven = modes::drive(10, 3, |i| async move {
            if i % 2 == 1 {
                Err(format!("call {i} failed"))
            } else {
                Ok(())
            }
        })
        .await;
        assert_eq!(driven.latencies.len(), 10);
        assert_eq!(driven.failures, 5);
        assert!(driven.first_failure.unwrap().ends_with("failed"));
    }

    #[tokio::test]
    async fn a_missing_skillet_binary_is_a_clear_error() {
        let mut spec = spec(Mode::Stdio, None);
        spec.skillet = Some(PathBuf::from("/nonexistent/skillet"));
        let error = run(&spec).await.unwrap_err().to_string();
        assert!(error.contains("no such file"), "{error}");
    }
}
