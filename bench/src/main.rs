//! `skillet-bench`: the bench-calc skill (two calculator calls, then a validated JSON answer)
//! against mock-llm, N calls at concurrency C, in ten modes — `raw` (the same HTTP requests
//! from a bare client that encodes and parses them with serde_json: the parsing floor),
//! `replay` (the captured bytes replayed, nothing parsed: the lower floor), `engine` (the
//! executor as a library), `wire` (`skillet serve --http`), `stdio` (`skillet serve --stdio`),
//! `mcp` (`skillet serve --mcp`, driven as an MCP host does), `mcp-http` (the streamable HTTP
//! `/mcp` of `skillet serve --http`, driven as a remote MCP host does), and the transport
//! floors, minimal server children making the `raw` floor's requests: `relay` (A2E over HTTP,
//! the floor for `wire` and `mcp-http`), `stdio-relay` (A2E JSON Lines over pipes, for `stdio`)
//! and `mcp-relay` (MCP over pipes, for `mcp`) — reporting calls/s, turns/s, p50/p99 latency,
//! CPU per turn (nanosecond clocks), peak RSS and the ratios to the floors.
//!
//! Every run happens in a fresh child process (`--one`), so peak RSS is that run's; runs of
//! different modes are interleaved so that a machine getting busier hurts them all alike.
//! See `BENCHMARKS.md` at the repository root.
//!
//! Module map: `workload` (skill, scenario, executor) · `mock` (where mock-llm runs) · `modes`
//! (driver, raw and engine calls) · `serve` (the `skillet serve` children) · `mcp` (the MCP
//! client of a `serve --mcp` child) · `mcp_http` (the MCP client of `/mcp`) · `relay` (the HTTP
//! transport floor's server child and its client) · `stdio_relay` (the stdio transport floors'
//! server child, driven by `serve`'s and `mcp`'s clients) · `run` (one measured run) · `measure`
//! (CPU/RSS from /proc, percentiles, the report) · `summary` (medians, ratios).
//!
//! The global allocator is mimalloc, as in the `skillet` binary, so the `engine` mode and the
//! floors run on the allocator `skillet serve` ships with (BENCHMARKS.md says what it bought).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod mcp;
mod mcp_http;
mod measure;
mod mock;
mod modes;
mod relay;
mod run;
mod serve;
mod stdio_relay;
mod summary;
mod workload;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use clap::{Parser, Subcommand};

use measure::RunReport;
use run::{MockPlacement, Mode, RunSpec};
use summary::Summary;

/// Measures Skillet's overhead over a bare HTTP client on a 3-turn skill against mock-llm.
#[derive(Debug, Parser)]
#[command(
    name = "skillet-bench",
    version,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Sub>,
    #[command(flatten)]
    bench: BenchArgs,
}

#[derive(Debug, Subcommand)]
enum Sub {
    /// Serve the bench scenario on 127.0.0.1:0, print the base URL, stop at end of stdin.
    Mock {
        /// Delay before each model response, in milliseconds.
        #[arg(long, default_value_t = 0)]
        latency_ms: u64,
    },
    /// The `relay` mode's server: a minimal A2E-over-HTTP server for the model at MOCK_URL,
    /// sending the captured requests in FILE; prints its URL, stops at end of stdin.
    Relay(FloorArgs),
    /// The `stdio-relay` mode's server: a minimal A2E server on stdin and stdout (JSON Lines)
    /// for the model at MOCK_URL, sending the captured requests in FILE; stops at end of stdin.
    StdioRelay(FloorArgs),
    /// The `mcp-relay` mode's server: a minimal MCP server on stdin and stdout (JSON-RPC
    /// lines) for the model at MOCK_URL, sending the captured requests in FILE; stops at end
    /// of stdin.
    McpRelay(FloorArgs),
}

/// What a transport floor's server child makes its model requests with.
#[derive(Debug, clap::Args)]
struct FloorArgs {
    /// The model's base URL.
    #[arg(long, value_name = "MOCK_URL")]
    mock_url: String,
    /// The captured model requests, `[[path, body], ...]`.
    #[arg(long, value_name = "FILE")]
    requests: PathBuf,
    /// Model requests over HTTP/2 by prior knowledge.
    #[arg(long)]
    http2: bool,
}

#[derive(Debug, clap::Args)]
struct BenchArgs {
    /// Modes to run, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "raw,replay,engine,wire,stdio,mcp,mcp-http,relay,stdio-relay,mcp-relay"
    )]
    mode: Vec<Mode>,
    /// Calls per run.
    #[arg(long, short = 'n', default_value_t = 200)]
    calls: u64,
    /// Calls in flight at once.
    #[arg(long, short = 'c', default_value_t = 16)]
    concurrency: u64,
    /// Mock latency per model response, in milliseconds.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Runs per mode (the summary reports medians).
    #[arg(long, default_value_t = 1)]
    runs: usize,
    /// Where mock-llm runs: a thread of the bench process, or a child process (use it above
    /// ~9,000 concurrent calls: one process cannot hold both ends of that many sockets).
    #[arg(long, value_enum, default_value = "inproc")]
    mock: MockPlacement,
    /// Use a running mock-llm serving bench/skills/bench-calc/mock-scenario.yaml instead.
    #[arg(long, value_name = "URL")]
    mock_url: Option<String>,
    /// Speak HTTP/2 by prior knowledge (`h2c`) to the mock in every mode: the floors' client,
    /// the engine's provider and the serve child's provider each multiplex all calls over one
    /// connection (`http2_prior_knowledge`), as clients of HTTPS APIs do after ALPN.
    #[arg(long)]
    http2: bool,
    /// `mcp` and `mcp-relay` modes: send `logging/setLevel` with LEVEL after `initialize` (e.g.
    /// `warning`: no status or info log lines as `notifications/message`); default: the
    /// session's level.
    #[arg(long, value_name = "LEVEL")]
    mcp_log_level: Option<String>,
    /// The skillet binary for wire and stdio (default: next to this binary).
    #[arg(long, value_name = "PATH")]
    skillet: Option<PathBuf>,
    /// Print the summary (every run, medians, ratios) as JSON.
    #[arg(long)]
    json: bool,
    /// Also write the JSON summary to FILE.
    #[arg(long, value_name = "FILE")]
    save: Option<PathBuf>,
    /// Internal: take one run of the first mode in this process and print its JSON report.
    #[arg(long, hide = true)]
    one: bool,
}

impl BenchArgs {
    fn spec(&self, mode: Mode) -> RunSpec {
        RunSpec {
            mode,
            calls: self.calls,
            concurrency: self.concurrency,
            latency: Duration::from_millis(self.latency_ms),
            mock: self.mock,
            mock_url: self.mock_url.clone(),
            skillet: self.skillet.clone(),
            http2: self.http2,
            mcp_log_level: self.mcp_log_level.clone(),
        }
    }
}

fn main() -> std::process::ExitCode {
    // As in the `skillet` binary (`engine/src/main.rs` says why): THP off, so the floors and
    // the engine mode run on the memory set-up `skillet serve` ships with.
    let _ = rustix::thread::disable_transparent_huge_pages(true);
    let cli = Cli::parse();
    let outcome = match &cli.command {
        Some(Sub::Mock { latency_ms }) => runtime()
            .and_then(|rt| rt.block_on(mock::serve_child(Duration::from_millis(*latency_ms)))),
        Some(Sub::Relay(floor)) => runtime().and_then(|rt| {
            rt.block_on(relay::serve_child(
                floor.mock_url.clone(),
                &floor.requests,
                floor.http2,
            ))
        }),
        Some(Sub::StdioRelay(floor)) => stdio_floor(floor, stdio_relay::Dialect::A2e),
        Some(Sub::McpRelay(floor)) => stdio_floor(floor, stdio_relay::Dialect::Mcp),
        None if cli.bench.one => one(&cli.bench),
        None => orchestrate(&cli.bench),
    };
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("skillet-bench: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// A stdio transport floor's child, on the runtime `skillet serve`'s stdio transports run on.
fn stdio_floor(floor: &FloorArgs, dialect: stdio_relay::Dialect) -> anyhow::Result<()> {
    stdio_relay::runtime()?.block_on(stdio_relay::serve_child(
        floor.mock_url.clone(),
        &floor.requests,
        floor.http2,
        dialect,
    ))
}

/// `--one`: a single run in this process, its report as one JSON line.
fn one(args: &BenchArgs) -> anyhow::Result<()> {
    let mode = *args
        .mode
        .first()
        .ok_or_else(|| anyhow::anyhow!("--mode is empty"))?;
    let report = runtime()?.block_on(run::run(&args.spec(mode)))?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

/// Every (run, mode) in a fresh `--one` child, interleaved; then the summary.
fn orchestrate(args: &BenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.calls > 0 && args.concurrency > 0,
        "--calls and --concurrency must be at least 1"
    );
    let exe = std::env::current_exe()?;
    let mut reports = Vec::new();
    for round in 1..=args.runs.max(1) {
        for mode in &args.mode {
            let report = spawn_one(&exe, args, *mode)?;
            if !args.json {
                eprintln!("[{round}/{}] {}", args.runs.max(1), report.line());
            }
            if report.failures > 0 {
                eprintln!(
                    "  {} of {} calls failed; first: {}",
                    report.failures,
                    report.calls,
                    report.first_failure.as_deref().unwrap_or("?")
                );
            }
            reports.push(report);
        }
    }
    let failed = reports.iter().any(|r| r.failures > 0);
    let summary = Summary::of(reports);
    if let Some(path) = &args.save {
        std::fs::write(path, serde_json::to_string_pretty(&summary)?)
            .map_err(|e| anyhow::anyhow!("--save {}: {e}", path.display()))?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        println!(
            "\nN={} C={} latency={} ms, mock {}, medians of {} run(s), load average now {}",
            args.calls,
            args.concurrency,
            args.latency_ms,
            if args.mock_url.is_some() {
                "external"
            } else if args.mock == MockPlacement::Child {
                "child"
            } else {
                "inproc"
            },
            args.runs.max(1),
            measure::load_average().map_or("?".to_owned(), |l| format!("{l:.2}")),
        );
        print!("{}", summary.table());
    }
    anyhow::ensure!(!failed, "some calls failed (see above)");
    Ok(())
}

fn spawn_one(exe: &std::path::Path, args: &BenchArgs, mode: Mode) -> anyhow::Result<RunReport> {
    let mut command = Command::new(exe);
    command
        .arg("--one")
        .arg("--mode")
        .arg(mode.name())
        .arg("--calls")
        .arg(args.calls.to_string())
        .arg("--concurrency")
        .arg(args.concurrency.to_string())
        .arg("--latency-ms")
        .arg(args.latency_ms.to_string())
        .arg("--mock")
        .arg(match args.mock {
            MockPlacement::Inproc => "inproc",
            MockPlacement::Child => "child",
        });
    if let Some(url) = &args.mock_url {
        command.arg("--mock-url").arg(url);
    }
    if let Some(skillet) = &args.skillet {
        command.arg("--skillet").arg(skillet);
    }
    if args.http2 {
        command.arg("--http2");
    }
    if let Some(level) = &args.mcp_log_level {
        command.arg("--mcp-log-level").arg(level);
    }
    let output = command.stderr(Stdio::inherit()).output()?;
    anyhow::ensure!(
        output.status.success(),
        "{} run failed ({})",
        mode.name(),
        output.status
    );
    let text = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(text.trim())
        .map_err(|e| anyhow::anyhow!("{} run printed no report ({e}): {text}", mode.name()))
}
