//! The async runtime a command runs on, and how many worker threads it has.
//!
//! Workers, in order of precedence:
//! 1. `[server] worker_threads` in `skillet.toml`, when set;
//! 2. tokio's own `TOKIO_WORKER_THREADS` environment variable, when set;
//! 3. **one** for the stdio transports (`serve --stdio`, `serve --mcp`), one per CPU otherwise.
//!
//! Why one for stdio: a stdio server has one peer, one pipe in and one pipe out, and its CPU per
//! model turn is tens of microseconds, so one worker serves far more turns than any host drives
//! through a pipe; file work and scripts run on the blocking pool, not on the workers. Hosts also
//! spawn one child per session, and a worker per CPU in each of them mostly wakes the others:
//! on the 2 vCPU benchmark VM one worker cut `serve --stdio`'s CPU per turn by ~20 % and did not
//! lower its throughput (BENCHMARKS.md). Network servers (`--http`, `--nats`) keep a worker per
//! CPU: they serve many peers at once.
//!
//! Not here: what the command does once the runtime runs (the command modules).

use super::args::{Cli, Command};

/// Environment variable tokio reads for its worker count.
const TOKIO_WORKERS_ENV: &str = "TOKIO_WORKER_THREADS";

/// The runtime for `cli`: multi-threaded (so a blocked worker can hand its work on), with the
/// worker count [`worker_threads`] picks.
pub(crate) fn build(
    cli: &Cli,
    configured: Option<usize>,
) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    let from_env = std::env::var_os(TOKIO_WORKERS_ENV).is_some();
    if let Some(workers) = worker_threads(serves_stdio(&cli.command), configured, from_env) {
        builder.worker_threads(workers);
    }
    builder.build()
}

/// The worker count to set, or `None` for tokio's choice (`TOKIO_WORKER_THREADS`, else one per
/// CPU). `configured` is `[server] worker_threads`; zero counts as unset.
pub(crate) fn worker_threads(
    stdio: bool,
    configured: Option<usize>,
    env_set: bool,
) -> Option<usize> {
    match configured.filter(|&n| n > 0) {
        Some(n) => Some(n),
        None if env_set => None,
        None => stdio.then_some(1),
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
        assert_eq!(worker_threads(true, Some(4), true), Some(4));
        assert_eq!(worker_threads(false, Some(3), false), Some(3));
        assert_eq!(worker_threads(true, None, true), None);
        assert_eq!(worker_threads(true, Some(0), true), None);
        assert_eq!(worker_threads(true, None, false), Some(1));
        assert_eq!(worker_threads(false, None, false), None);
        assert_eq!(worker_threads(false, Some(0), false), None);
    }
}
