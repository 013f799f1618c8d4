//! The async runtime a command runs on, and how many worker threads it has.
//!
//! Workers, in order of precedence:
//! 1. `[server] worker_threads` in `skillet.toml`, when set;
//! 2. tokio's own `TOKIO_WORKER_THREADS` environment variable, when set (read here: a value
//!    tokio cannot use is an error naming it, not tokio's panic);
//! 3. **one** for the stdio transports (`serve --stdio`, `serve --mcp`), one per CPU otherwise.
//!
//! Why one for stdio: a stdio server has one peer, one pipe in and one pipe out, and its CPU per
//! model turn is tens of microseconds, so one worker serves far more turns than any host drives
//! through a pipe; file work and scripts run on the blocking pool, not on the workers. Hosts also
//! spawn one child per session, and a worker per CPU in each of them mostly wakes the others:
//! on the 2 vCPU benchmark VM one worker cut `serve --stdio`'s CPU per turn by ~20 % and raised
//! its throughput at 16 calls in flight, giving up 10–20 % of a burst of thousands of calls
//! through one pipe (docs/SCALING.md, "Runtime threads"). Network servers (`--http`, `--nats`)
//! keep a worker per CPU: they serve many peers at once.
//!
//! Not here: what the command does once the runtime runs (the command modules).

use std::ffi::OsStr;

use super::args::{Cli, Command};
use crate::config::MAX_WORKER_THREADS;

/// Environment variable tokio reads for its worker count.
const TOKIO_WORKERS_ENV: &str = "TOKIO_WORKER_THREADS";

/// The runtime for `cli`: multi-threaded (so a blocked worker can hand its work on), with the
/// worker count [`worker_threads`] picks. An unusable `TOKIO_WORKER_THREADS` is an error
/// naming it (tokio itself would panic on it).
pub(crate) fn build(
    cli: &Cli,
    configured: Option<usize>,
) -> Result<tokio::runtime::Runtime, String> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    let env = std::env::var_os(TOKIO_WORKERS_ENV);
    if let Some(workers) = worker_threads(serves_stdio(&cli.command), configured, env.as_deref())? {
        builder.worker_threads(workers);
    }
    builder
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))
}

/// The worker count to set, or `None` for tokio's choice (one per CPU; the variable is then
/// unset, so tokio does not read it). `configured` is `[server] worker_threads` (zero counts as
/// unset; the config refuses more than [`MAX_WORKER_THREADS`]); `env` is `TOKIO_WORKER_THREADS`.
fn worker_threads(
    stdio: bool,
    configured: Option<usize>,
    env: Option<&OsStr>,
) -> Result<Option<usize>, String> {
    if let Some(n) = configured.filter(|&n| n > 0) {
        return Ok(Some(n));
    }
    match env {
        Some(value) => match value.to_str().and_then(|v| v.trim().parse::<usize>().ok()) {
            Some(n) if (1..=MAX_WORKER_THREADS).contains(&n) => Ok(Some(n)),
            _ => Err(format!(
                "{TOKIO_WORKERS_ENV}={value:?}: expected a whole number of worker threads from 1 \
                 to {MAX_WORKER_THREADS} (or unset it, or set [server] worker_threads)"
            )),
        },
        None => Ok(stdio.then_some(1)),
    }
}

/// Whether the command serves a stdio transport (A2E or MCP on stdin/stdout).
fn serves_stdio(command: &Command) -> bool {
    matches!(command, Command::Serve(args) if args.http.is_none() && args.nats.is_none())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn stdio(args: &[&str]) -> bool {
        let cli = Cli::try_parse_from(args).expect("valid command line");
        serves_stdio(&cli.command)
    }

    #[test]
    fn only_the_stdio_transports_count_as_stdio() {
        assert!(stdio(&["skillet", "serve", "--stdio"]));
        assert!(stdio(&["skillet", "serve", "--mcp"]));
        assert!(!stdio(&["skillet", "serve", "--http"]));
        assert!(!stdio(&["skillet", "serve", "--http", "127.0.0.1:0"]));
        assert!(!stdio(&["skillet", "serve", "--nats"]));
        assert!(!stdio(&["skillet", "discover"]));
        assert!(!stdio(&["skillet", "run", "echo"]));
    }

    #[test]
    fn the_config_wins_then_the_environment_then_the_transport() {
        let env = |v: &str| Some(OsStr::new(v).to_owned());
        let pick = |stdio, configured, value: Option<std::ffi::OsString>| {
            worker_threads(stdio, configured, value.as_deref())
        };
        assert_eq!(pick(true, Some(4), env("2")), Ok(Some(4)));
        assert_eq!(pick(false, Some(3), None), Ok(Some(3)));
        assert_eq!(pick(true, None, env("2")), Ok(Some(2)));
        assert_eq!(pick(false, None, env(" 5 ")), Ok(Some(5)));
        assert_eq!(pick(true, Some(0), env("2")), Ok(Some(2)));
        assert_eq!(pick(true, None, None), Ok(Some(1)));
        assert_eq!(pick(false, None, None), Ok(None));
        assert_eq!(pick(false, Some(0), None), Ok(None));
        // The config wins over a variable tokio could not use.
        assert_eq!(pick(false, Some(2), env("abc")), Ok(Some(2)));
    }

    #[test]
    fn an_unusable_environment_variable_is_an_error_naming_it() {
        for bad in ["abc", "0", "-1", "", "1.5", "100000"] {
            let value = OsStr::new(bad).to_owned();
            let error = worker_threads(true, None, Some(&value)).unwrap_err();
            assert!(error.contains("TOKIO_WORKER_THREADS"), "{bad}: {error}");
            assert!(error.contains("from 1 to"), "{bad}: {error}");
        }
    }
}
