//! # skillet
//!
//! The `skillet` binary: its command line, `skillet.toml` (`config`), the embedded mock model
//! (`embedded`), trace export and log format (`telemetry`), and its host assembly. The binary's
//! `main` only sets the allocator and calls [`main`]; this library half exists so the tests and
//! the fuzz targets reach the same code.
//!
//! The command line: argument parsing (`args`) and its help prose (`help`), host
//! assembly from `skillet.toml` (`setup`) found where `locate` looks, one module per command
//! (`run`, `discover`, `validate`, `serve`, `card`, `eval`, `init`, `completions`), the
//! "did you mean" of an unknown skill (`suggest`), the live progress display (`progress`),
//! whether output is coloured (`color`), exit codes (`exit`) and the redacted log output
//! (`logging`).
//!
//! ```text
//! skillet [--skills-dir DIR]... [--config FILE] [--provider NAME] [--model MODEL]
//!         [--base-url URL] [-v|-q]... [--log-format text|json] <COMMAND>
//!
//!   run SKILL [--args JSON|@FILE] [--json] [--timeout SECONDS]
//!   discover [--tag TAG]... [--category CATEGORY]... [--json] [--nats URL]
//!   validate DIR... [--strict] [--prepare] [--scripts]
//!   serve (--stdio | --mcp | --http [ADDR] | --nats [URL])
//!   call SKILL --nats [URL] [--args JSON|@FILE] [--json] [--id ID] [--timeout SECONDS]
//!   card [--url URL]
//!   toolkits [--json]
//!   eval SKILL [--model MODEL]... [--repeat N] [--concurrency N] [--case NAME]...
//!        [--json-out FILE] [--junit FILE] [--timeout SECONDS]
//!   init NAME [--dir DIR]
//!   completions bash|zsh|fish|elvish|powershell
//! ```
//!
//! stdout carries only a command's result; notices, progress and logs go to stderr.

pub mod args;
mod card;
pub mod color;
mod completions;
pub mod config;
pub mod console;
mod discover;
pub mod embedded;
mod eval;
mod eval_results;
mod eval_targets;
mod eval_trigger;
pub mod exit;
mod help;
mod init;
pub mod locate;
pub mod logging;
mod nats;
pub mod progress;
mod run;
mod run_files;
mod run_input;
mod runtime;
mod serve;
pub mod setup;
mod std_pipes;
mod suggest;
pub mod telemetry;
mod toolkits;
mod transcript_view;
mod validate;
mod validate_imports;
mod validate_runnable;
mod validate_scripts;
mod watch;

use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches};

use args::{Cli, Command};
use exit::{Failure, Outcome};
use setup::Console;

/// The binary's entry point: parses the command line, runs the command, returns its exit code.
pub fn main() -> ExitCode {
    // `COMPLETE=bash skillet ...`: a shell asking for completions; answered, then exits.
    completions::complete_from_env();
    let cli = parse_command_line();
    let console = Console {
        quiet: cli.global.quiet,
        verbose: cli.global.verbose,
    };
    // Read here for the runtime's size and the telemetry settings; a config that does not load
    // is reported by the command itself.
    let config = setup::load_config(&cli.global).ok();
    let configured_workers = config.as_ref().and_then(|c| c.server.worker_threads);
    let runtime = match runtime::build(&cli, configured_workers) {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("skillet: {e}");
            return Outcome::Setup.into();
        }
    };
    let telemetry = config.map(|c| c.telemetry).unwrap_or_default();
    let export = init_tracing(console, &cli.global, &telemetry, runtime.handle());
    tracing::debug!(
        worker_threads = runtime.metrics().num_workers(),
        "async runtime started"
    );
    let result = runtime.block_on(dispatch(&cli, console));
    if let Some(export) = export {
        // Flushes the spans still queued (bounded by the export timeout).
        export.shutdown();
    }
    // stdin is read on a blocking thread that cannot be interrupted; do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(200));
    match result {
        Ok(outcome) => outcome.into(),
        Err(Failure { outcome, message }) => {
            eprintln!("skillet: {message}");
            outcome.into()
        }
    }
}

async fn dispatch(cli: &Cli, console: Console) -> Result<Outcome, Failure> {
    let global = &cli.global;
    if global.models.len() > 1 && !matches!(cli.command, Command::Eval(_)) {
        return Err(Failure::usage(
            "--model: given more than once; only `eval` runs several models",
        ));
    }
    match &cli.command {
        Command::Run(args) => run::run(global, args, console).await,
        Command::Discover(args) if args.nats.is_some() => {
            nats::discover(global, args, console).await
        }
        Command::Discover(args) => discover::discover(global, args, console).await,
        Command::Validate(args) => validate::validate(args, global, console).await,
        Command::Serve(args) if args.nats.is_some() => nats::serve(global, args, console).await,
        Command::Serve(args) => serve::serve(global, args, console).await,
        Command::Call(args) => nats::call(global, args, console).await,

        Command::Card(args) => card::card(global, args, console).await,
        Command::Toolkits(args) => toolkits::toolkits(global, args, console).await,
        Command::Eval(args) => eval::eval(global, args, console).await,
        Command::Init(args) => init::init(args, global, console),
        Command::Completions(args) => completions::completions(args),
    }
}

/// `Cli::parse()`, with clap's help and errors coloured as `color` decides for everything else
/// (`NO_COLOR` off, `CLICOLOR_FORCE`/`FORCE_COLOR` on, else per terminal).
fn parse_command_line() -> Cli {
    let mut command = Cli::command().color(color::ColorChoice::from_env().for_clap());
    let parsed = command
        .try_get_matches_from_mut(std::env::args_os())
        .and_then(|mut matches| Cli::from_arg_matches_mut(&mut matches));
    match parsed {
        Ok(cli) => cli,
        Err(e) => e.format(&mut command).exit(),
    }
}

/// Logs go to stderr (`--log-format`); `RUST_LOG` wins over `-v`/`-q`. Spans also go to an
/// OTLP collector when `[telemetry]` or `OTEL_EXPORTER_OTLP_ENDPOINT` names one (independent of
/// the log level). A bad telemetry setting is a warning, never a failed command.
fn init_tracing(
    console: Console,
    global: &args::GlobalArgs,
    telemetry: &crate::telemetry::TelemetryConfig,
    runtime: &tokio::runtime::Handle,
) -> Option<crate::telemetry::otlp::OtlpExport> {
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;

    // The level, `RUST_LOG` and the caps on third-party targets that print raw provider bytes.
    let rust_log = std::env::var("RUST_LOG").ok();
    let filter = logging::filter(console, rust_log.as_deref());
    // The span gate asks a copy of the same filter which spans the logs take.
    let copy = logging::filter(console, rust_log.as_deref());
    let started = crate::telemetry::otlp::start(telemetry, runtime.clone(), copy);
    let started = started.unwrap_or_else(|e| {
        console.warn(format!("telemetry: {e}; traces are not exported"));
        None
    });
    let format = global.log_format;
    let ansi = color::stderr_colors();
    let stderr = logging::redacting_stderr;
    // Without an exporter the stack is the filtered log layer alone: an absent (`None`) layer
    // would declare interest in every callsite, so every span and event below the log level
    // would still be built and then discarded. With one, the span gate goes right above the
    // registry (`telemetry::admission`: a refused span is then not built at all).
    match started {
        Some(started) => {
            let _ = tracing_subscriber::registry()
                .with(started.gate)
                .with(
                    crate::telemetry::logs::stderr_layer(format, ansi, stderr).with_filter(filter),
                )
                .with(started.layer)
                .try_init();
            Some(started.export)
        }
        None => {
            let _ = tracing_subscriber::registry()
                .with(
                    crate::telemetry::logs::stderr_layer(format, ansi, stderr).with_filter(filter),
                )
                .try_init();
            None
        }
    }
}

/// Completes on SIGTERM or SIGINT (Ctrl-C).
pub(crate) async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
