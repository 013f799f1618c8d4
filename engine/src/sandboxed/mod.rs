//! Sandboxed execution: host-declared programs run through `skillet-sandbox`, as command tools
//! ([`CommandTool`]) and as out-of-process skills ([`PluginHost`]), with every way a child can
//! fail mapped onto an A2E error code.
//!
//! - `config.rs`: the `skillet.toml` shapes ([`CommandToolConfig`], [`PluginConfig`]). Only the
//!   host's configuration declares programs — never a SKILL.md.
//! - [`CommandTool`]: one sandboxed run per call; JSON arguments on stdin, one JSON document on
//!   stdout. It implements [`crate::tools::Tool`], so skills declare it like any tool.
//! - [`PluginHost`]: a long-lived child speaking A2E JSON lines over its stdio; its skills are
//!   discovered with `skill/discover/req` and registered as native skills whose handler
//!   ([`PluginSkillHandler`]) proxies `skill/call/req`, the plugin's `skill/event`s and the final
//!   `skill/call/resp`. Many calls may be in flight at once; a crash answers the calls in flight
//!   and the plugin is restarted (with backoff) for the next call.
//!
//! # Error mapping
//! | the child | command tool (model sees a tool error) | plugin call |
//! |---|---|---|
//! | hits its memory limit | `out_of_memory: …` | `out_of_memory` |
//! | killed by a signal, non-zero exit without a JSON answer, could not start, went away mid-call | `sandbox_crash: …` | `sandbox_crash` |
//! | runs past the wall clock / CPU limit / call deadline | `timeout: …` | `timeout` |
//! | output that breaks the contract (not JSON, not A2E, over the size cap) | `skill_error: …` | `skill_error` |
//!
//! A command tool's error is a [`crate::tools::ToolError`]: the model sees it and the run goes
//! on. A plugin's error is a [`crate::handler::HandlerError::Coded`]: the call fails with that
//! code. Nothing a child does takes the engine down: every failure is data.
//!
//! Not here: the sandbox itself (`skillet-sandbox`), deciding which tools a skill may use
//! (`tools`, `run`), or reading `skillet.toml` (`config`, `host`).

mod command;
mod config;
mod plugin;
mod scratch;

use skillet_sandbox::{Failure, Outcome, SandboxPolicy};

pub use command::{CommandFailure, CommandTool, CommandToolError};
pub use config::{CommandToolConfig, PluginConfig, SandboxedConfigError};
pub use plugin::{PluginError, PluginHost, PluginSkillHandler, PluginStartError};

use crate::protocol::ErrorCode;

/// The A2E code for how a sandboxed child ended, `None` when it succeeded (then its *output*
/// decides: a contract breach is `skill_error`).
pub fn outcome_error_code(outcome: &Outcome) -> Option<ErrorCode> {
    outcome.failure().map(failure_error_code)
}

/// The A2E code of each kind of sandbox failure (the table in the module doc). Exhaustive, so a
/// new kind of failure does not compile until it has a code.
fn failure_error_code(failure: Failure) -> ErrorCode {
    match failure {
        Failure::Crashed | Failure::NotStarted => ErrorCode::SandboxCrash,
        Failure::TimedOut => ErrorCode::Timeout,
        Failure::OutOfMemory => ErrorCode::OutOfMemory,
        Failure::OutputTooLarge => ErrorCode::SkillError,
    }
}

/// Longest piece of a child's output quoted in an error detail.
const QUOTE_LIMIT: usize = 400;

/// The last [`QUOTE_LIMIT`] characters of `text` (a child's stderr), trimmed, with every secret
/// the policy hands the child replaced — a child may print its environment, and error details
/// reach models and logs.
pub(crate) fn quote_tail(text: &str, policy: &SandboxPolicy) -> String {
    let text = policy.env.redact(text.trim());
    let skip = text.chars().count().saturating_sub(QUOTE_LIMIT);
    if skip == 0 {
        text
    } else {
        format!("…{}", text.chars().skip(skip).collect::<String>())
    }
}

/// The first [`QUOTE_LIMIT`] characters of `text` (a child's stdout), redacted like
/// [`quote_tail`].
pub(crate) fn quote_head(text: &str, policy: &SandboxPolicy) -> String {
    let text = policy.env.redact(text.trim());
    if text.chars().count() <= QUOTE_LIMIT {
        text
    } else {
        format!("{}…", text.chars().take(QUOTE_LIMIT).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_map_to_the_issue_codes() {
        assert_eq!(outcome_error_code(&Outcome::Exited { code: 0 }), None);
        assert_eq!(
            outcome_error_code(&Outcome::Exited { code: 1 }),
            Some(ErrorCode::SandboxCrash)
        );
        assert_eq!(
            outcome_error_code(&Outcome::OutOfMemory),
            Some(ErrorCode::OutOfMemory)
        );
        assert_eq!(
            outcome_error_code(&Outcome::TimedOut),
            Some(ErrorCode::Timeout)
        );
        assert_eq!(
            outcome_error_code(&Outcome::Signaled { signal: 11 }),
            Some(ErrorCode::SandboxCrash)
        );
    }

    #[test]
    fn every_sandbox_failure_maps_to_its_a2e_code() {
        let cases = [
            (Failure::Crashed, ErrorCode::SandboxCrash),
            (Failure::NotStarted, ErrorCode::SandboxCrash),
            (Failure::TimedOut, ErrorCode::Timeout),
            (Failure::OutOfMemory, ErrorCode::OutOfMemory),
            (Failure::OutputTooLarge, ErrorCode::SkillError),
        ];
        for (failure, code) in cases {
            assert_eq!(failure_error_code(failure), code, "{failure:?}");
        }
        // The outcomes behind each kind reach the same codes end to end.
        let cpu_limit = Outcome::Signaled {
            signal: libc::SIGXCPU,
        };
        assert_eq!(outcome_error_code(&cpu_limit), Some(ErrorCode::Timeout));
        let overflow = Outcome::OutputLimitExceeded {
            stream: skillet_sandbox::Stream::Stdout,
        };
        assert_eq!(outcome_error_code(&overflow), Some(ErrorCode::SkillError));
        let spawn = Outcome::SpawnFailed {
            reason: "no such program".into(),
        };
        assert_eq!(outcome_error_code(&spawn), Some(ErrorCode::SandboxCrash));
    }

    #[test]
    fn quoted_output_hides_secrets_given_to_the_child() {
        let policy: SandboxPolicy =
            toml::from_str("[env]\nset = { TOKEN = \"hunter2-secret\" }\n").unwrap();
        let quoted = quote_tail("env: TOKEN=hunter2-secret\n", &policy);
        assert_eq!(quoted, "env: TOKEN=[REDACTED]");
        let long = "x".repeat(1000);
        assert_eq!(quote_head(&long, &policy).chars().count(), QUOTE_LIMIT + 1);
        assert!(quote_tail(&long, &policy).starts_with('…'));
    }
}
