//! The `skillet` command line: argument parsing (`args`), host assembly from `skillet.toml`
//! (`setup`), one module per command (`run`, `discover`, `validate`, `serve`, `card`), the live
//! progress display (`progress`) and exit codes (`exit`).
//!
//! ```text
//! skillet [--skills-dir DIR]... [--config FILE] [--provider NAME] [--model MODEL]
//!         [--base-url URL] [-v|-q]... <COMMAND>
//!
//!   run SKILL [--args JSON|@FILE] [--json] [--timeout SECONDS]
//!   discover [--tag TAG]... [--category CATEGORY]... [--json] [--nats URL]
//!   validate DIR... [--strict]
//!   serve (--stdio | --http [ADDR] | --nats [URL])
//!   call SKILL --nats [URL] [--args JSON|@FILE] [--json] [--id ID] [--timeout SECONDS]
//!   card [--url URL]
//!   toolkits [--json]
//! ```
//!
//! stdout carries only a command's result; notices, progress and logs go to stderr.

pub mod args;
mod card;
mod discover;
pub mod exit;
mod nats;
pub mod progress;
mod run;
mod serve;
pub mod setup;
mod toolkits;
mod validate;

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use tracing_subscriber::EnvFilter;

use args::{Cli, Command};
use exit::{Failure, Outcome};
use setup::Console;

/// The binary's entry point: parses the command line, runs the command, returns its exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let console = Console {
        quiet: cli.global.quiet,
        verbose: cli.global.verbose,
    };
    init_tracing(console);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("skillet: cannot start the async runtime: {e}");
            return Outcome::Setup.into();
        }
    };
    let result = runtime.block_on(dispatch(&cli, console));
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
    match &cli.command {
        Command::Run(args) => run::run(global, args, console).await,
        Command::Discover(args) if args.nats.is_some() => {
            nats::discover(global, args, console).await
        }
        Command::Discover(args) => discover::discover(global, args, console).await,
        Command::Validate(args) => validate::validate(args, console),
        Command::Serve(args) if args.nats.is_some() => nats::serve(global, args, console).await,
        Command::Serve(args) => serve::serve(global, args, console).await,
        Command::Call(args) => nats::call(global, args, console).await,

        Command::Card(args) => card::card(global, args, console).await,
        Command::Toolkits(args) => toolkits::toolkits(global, args, console).await,
    }
}

/// Logs go to stderr; `RUST_LOG` wins over `-v`/`-q`.
fn init_tracing(console: Console) {
    let level = match (console.quiet, console.verbose) {
        (q, _) if q >= 2 => "off",
        (1, _) => "error",
        (_, 0) => "warn",
        (_, 1) => "info",
        (_, 2) => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
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
