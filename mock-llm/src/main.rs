//! The `mock-llm` binary: serve scenario files on a loopback port until SIGINT/SIGTERM.
//!
//! Prints exactly one line on stdout once bound, `mock-llm listening on http://ADDR`, so a parent
//! process can read the address (useful with `--listen 127.0.0.1:0`). Logs go to stderr.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use mock_llm::{MockConfig, MockServer, Scenario};

/// A deterministic LLM server speaking the OpenAI, Ollama and Anthropic chat APIs.
#[derive(Debug, Parser)]
#[command(name = "mock-llm", version)]
struct Cli {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:0", env = "MOCK_LLM_LISTEN")]
    listen: SocketAddr,
    /// Scenario files (YAML, or JSON by `.json` extension); rules are concatenated in order.
    #[arg(long, num_args = 1.., value_name = "FILE")]
    scenario: Vec<PathBuf>,
    /// Seed for fault probabilities.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Use the system clock instead of the fixed 2024-01-01 timestamps.
    #[arg(long)]
    system_clock: bool,
    /// Reject chat requests without `Authorization` / `x-api-key` (401).
    #[arg(long)]
    require_auth: bool,
    /// `record`: proxy to a real server and write what it answers as a scenario.
    #[command(subcommand)]
    command: Option<Command>,
}

/// Subcommands; without one, mock-llm serves the `--scenario` files.
#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Proxy to a real OpenAI-compatible, Anthropic or Ollama server and write its answers as a
    /// scenario that `mock-llm --scenario FILE` replays (credentials are never written).
    Record(RecordArgs),
}

/// `mock-llm record` options.
#[derive(Debug, clap::Args)]
struct RecordArgs {
    /// The real server's root URL, e.g. `http://127.0.0.1:8080` (request paths are appended).
    #[arg(long, value_name = "URL")]
    upstream: String,
    /// The scenario file to write (JSON by `.json` extension, else YAML); rewritten after each
    /// answer.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Environment variables whose values must never appear in the file (repeatable).
    #[arg(long, value_name = "NAME")]
    redact_env: Vec<String>,
    /// Request headers whose values are credentials, forwarded but never written (repeatable;
    /// `Authorization`, `x-api-key`, … and any header named like `*auth*`, `*token*`, `*key*`,
    /// `*secret*`, `*password*`, `*cookie*`, `*session*` always are).
    #[arg(long, value_name = "NAME")]
    redact_header: Vec<String>,
    /// Address to listen on (default: the top-level `--listen`, a free loopback port).
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
}

fn main() -> anyhow::Result<()> {
    runtime()?.block_on(serve())
}

/// A multi-threaded runtime. `TOKIO_WORKER_THREADS` is read here, so a value tokio cannot use is
/// an error naming it instead of tokio's panic.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if let Some(value) = std::env::var_os("TOKIO_WORKER_THREADS") {
        let workers = value
            .to_str()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|n| (1..=1024).contains(n))
            .with_context(|| {
                format!("TOKIO_WORKER_THREADS={value:?}: expected a whole number from 1 to 1024")
            })?;
        builder.worker_threads(workers);
    }
    builder.build().context("starting the async runtime")
}

async fn serve() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("MOCK_LLM_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let cli = Cli::parse();
    if let Some(Command::Record(args)) = cli.command {
        return record(cli.listen, args).await;
    }
    let mut scenario = Scenario::new();
    for path in &cli.scenario {
        let s = Scenario::from_file(path).with_context(|| format!("loading {}", path.display()))?;
        scenario = scenario.merge(s);
    }
    let mut config = MockConfig::default()
        .with_listen(cli.listen)
        .with_scenario(scenario)
        .with_seed(cli.seed)
        .with_required_auth(cli.require_auth);
    if cli.system_clock {
        config = config.with_clock(mock_llm::Clock::System);
    }
    let server = MockServer::start(config).await?;
    println!("mock-llm listening on {}", server.base_url());
    shutdown_signal().await?;
    server.shutdown().await;
    Ok(())
}

/// `mock-llm record`: prints `mock-llm recording on http://ADDR -> UPSTREAM` once bound.
async fn record(listen: SocketAddr, args: RecordArgs) -> anyhow::Result<()> {
    let config = mock_llm::RecordConfig::new(args.upstream.clone(), args.out.clone())
        .with_listen(args.listen.unwrap_or(listen))
        .with_redact_env(args.redact_env)
        .with_redact_headers(args.redact_header);
    let recorder = mock_llm::Recorder::start(config).await?;
    println!(
        "mock-llm recording on {} -> {} into {}",
        recorder.base_url(),
        recorder.upstream_display(),
        args.out.display()
    );
    shutdown_signal().await?;
    recorder.shutdown().await;
    Ok(())
}

async fn shutdown_signal() -> anyhow::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("installing the SIGTERM handler")?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.context("waiting for SIGINT")?,
        _ = term.recv() => {}
    }
    Ok(())
}
