//! The binary's log output on stderr: the level from `-v`/`-q` (or `RUST_LOG`), caps on the
//! third-party targets that print raw provider bytes, and a writer that redacts the host's known
//! secrets from every line.
//!
//! Two defences, because a key can reach a log line two ways:
//! - **Raw bytes from third-party crates.** `async-openai` logs `failed deserialization of:
//!   {raw frame}` at ERROR, so a provider (or proxy) echoing the key in an in-stream error put it
//!   on stderr even with `-q`; `hyper`, `h2` and `reqwest` print frames and header values
//!   (including request-supplied override headers) at debug/trace; `rmcp` prints whole JSON-RPC
//!   messages at debug; `async-nats` prints its `CONNECT` (the token, user and password) and
//!   every published message's headers (a caller's `Authorization: Bearer` key) at trace, and
//!   server URLs with their userinfo at debug. Those targets are capped ([`CAPPED_TARGETS`])
//!   whatever `-v` or `RUST_LOG` ask for: a `RUST_LOG` directive naming a capped target (or a
//!   module under it) is dropped, and one naming only a span is confined to Skillet's own
//!   targets, so none can raise a cap. There is no opt-in: the engine reports the same failures
//!   itself, redacted. This defence is the one for secrets the process cannot know — callers'
//!   keys, a token written into a URL.
//! - **Known secrets anywhere.** Every formatted line passes [`Redactor`] before it is written:
//!   every secret the configuration names (the process's one set, `skillet_engine::secrets`) is replaced
//!   by `[REDACTED]`, so even a line we did not foresee cannot print them.
//!
//! Not here: redaction of provider error messages (`skillet-providers`), events and results.

use std::io::Write;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::{Directive, LevelFilter};

use super::console::Console;

/// Third-party targets and the most they may log: at these levels they print no request or
/// response bytes.
pub const CAPPED_TARGETS: [(&str, &str); 11] = [
    ("async_openai", "off"),
    ("async_nats", "info"),
    ("tower", "info"),
    ("reqwest", "warn"),
    ("reqwest_eventsource", "warn"),
    ("eventsource_stream", "warn"),
    ("hyper", "warn"),
    ("hyper_util", "warn"),
    ("h2", "warn"),
    ("rmcp", "info"),
    ("rmcp::transport::streamable_http_server::session", "warn"), // session ids at info
];

pub use skillet_engine::secrets::{REDACTOR, Redactor};

/// A stderr writer that buffers one formatted event and writes it redacted.
pub struct RedactingStderr {
    buffer: Vec<u8>,
}

impl Write for RedactingStderr {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let text = String::from_utf8_lossy(&self.buffer);
        let redacted = REDACTOR.redact(&text);
        self.buffer.clear();
        std::io::stderr().lock().write_all(redacted.as_bytes())
    }
}

impl Drop for RedactingStderr {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// A fresh redacting stderr writer (a `MakeWriter` for the log layer).
pub fn redacting_stderr() -> RedactingStderr {
    RedactingStderr { buffer: Vec::new() }
}

/// The filter: `RUST_LOG` when set, else the level `-v`/`-q` ask for; then the caps.
pub fn filter(console: Console, rust_log: Option<&str>) -> EnvFilter {
    let level = match (console.quiet, console.verbose) {
        (q, _) if q >= 2 => "off",
        (1, _) => "error",
        (_, 0) => "warn",
        (_, 1) => "info",
        (_, 2) => "debug",
        _ => "trace",
    };
    let mut filter = rust_log
        .and_then(|directives| EnvFilter::try_new(confined(directives)).ok())
        .unwrap_or_else(|| EnvFilter::new(level));
    for (target, cap) in CAPPED_TARGETS {
        if let Ok(directive) =
            format!("{target}={}", capped(level, rust_log, cap)).parse::<Directive>()
        {
            filter = filter.add_directive(directive);
        }
    }
    filter
}

/// `RUST_LOG`'s directives without any that could raise a capped target: one naming a capped
/// target or a module under it is dropped; one naming only spans (`[span]=trace`, which would
/// enable every target inside those spans) is confined to Skillet's own targets (`skillet*`).
fn confined(directives: &str) -> String {
    let kept: Vec<String> = directives
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .filter_map(|directive| {
            let target_end = directive.find(['[', '=']).unwrap_or(directive.len());
            let target = &directive[..target_end];
            if target.is_empty() {
                return Some(format!("skillet{directive}"));
            }
            let bare_level = target_end == directive.len() && target.parse::<LevelFilter>().is_ok();
            let capped = CAPPED_TARGETS
                .iter()
                .any(|(capped, _)| target.starts_with(capped));
            (bare_level || !capped).then(|| directive.to_owned())
        })
        .collect();
    kept.join(",")
}

/// The level a capped target gets: the cap, or lower when the whole output is quieter.
fn capped<'a>(level: &'a str, rust_log: Option<&str>, cap: &'a str) -> &'a str {
    const ORDER: [&str; 6] = ["off", "error", "warn", "info", "debug", "trace"];
    let rank = |l: &str| ORDER.iter().position(|o| *o == l).unwrap_or(0);
    match rust_log {
        // With RUST_LOG the general level is the user's; only the cap applies.
        Some(_) => cap,
        None if rank(level) < rank(cap) => level,
        None => cap,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_targets_stay_capped_at_every_verbosity_and_under_rust_log() {
        for (quiet, verbose) in [(0, 0), (1, 0), (0, 1), (0, 2), (0, 3)] {
            let text = filter(Console { quiet, verbose }, None).to_string();
            assert!(text.contains("async_openai=off"), "{text}");
            assert!(
                !text.contains("h2=debug") && !text.contains("h2=trace"),
                "{text}"
            );
        }
        let text = filter(
            Console {
                quiet: 0,
                verbose: 0,
            },
            Some("trace,async_openai=trace"),
        )
        .to_string();
        assert!(text.contains("async_openai=off"), "{text}");
        assert!(!text.contains("async_openai=trace"), "{text}");
    }

    #[test]
    fn rust_log_cannot_raise_a_capped_target_by_module_or_by_span() {
        let text = filter(
            Console {
                quiet: 0,
                verbose: 0,
            },
            Some("trace,async_nats::connection=trace,rmcp::service=debug,[call]=trace,hyper_util"),
        )
        .to_string();
        for raised in [
            "async_nats::connection",
            "rmcp::service",
            "hyper_util=trace",
        ] {
            assert!(!text.contains(raised), "{raised} kept: {text}");
        }
        assert!(text.contains("async_nats=info"), "{text}");
        assert!(text.contains("skillet[call]=trace"), "{text}");
        assert!(text.contains("trace"), "the global level stays: {text}");
    }

    #[test]
    fn rust_log_directives_of_other_targets_and_bare_levels_are_kept() {
        assert_eq!(
            confined("debug, skillet_host=trace,tokio=warn"),
            "debug,skillet_host=trace,tokio=warn"
        );
        assert_eq!(
            confined("info,[span{id=1}]=debug"),
            "info,skillet[span{id=1}]=debug"
        );
        assert_eq!(confined("async_nats,h2=trace"), "");
    }
}
