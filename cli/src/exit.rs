//! Exit codes of the `skillet` binary: one per kind of outcome, so scripts can branch on them.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success (`run`: the skill succeeded; `validate`: no errors; `serve`: clean shutdown) |
//! | 1 | the skill ran and failed (`data.success: false`, any `error_code` but `timeout` and `runtime_error`); `validate` found problems; `card` is not a valid A2A card; an `eval` run did not pass |
//! | 2 | usage error: bad command line, `--args` not a JSON object or unreadable; `init`: an invalid name or an existing folder |
//! | 3 | the call was rejected before execution (`error` set: `unknown_skill`, `schema_violation`, `unauthorized`, …); `run`/`eval` of a skill that is not loaded, refused before a model starts |
//! | 4 | the skill timed out (`error_code: timeout`) |
//! | 5 | configuration or setup error: config file, provider, skills directory, bind address, embedded mock; `run`: the skill could not run here (`error_code: runtime_error`: the provider unreachable or refusing its key or model, the host cancelling it) |
//! | 130 | interrupted (Ctrl-C / SIGTERM during `run` or `eval`) |

use std::process::ExitCode;

use skillet_protocol::{ErrorCode, SkillCallResponse};

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// 0.
    Success,
    /// 1.
    Failed,
    /// 2.
    Usage,
    /// 3.
    Rejected,
    /// 4.
    TimedOut,
    /// 5.
    Setup,
    /// 130.
    Interrupted,
}

impl Outcome {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Outcome::Success => 0,
            Outcome::Failed => 1,
            Outcome::Usage => 2,
            Outcome::Rejected => 3,
            Outcome::TimedOut => 4,
            Outcome::Setup => 5,
            Outcome::Interrupted => 130,
        }
    }

    /// The outcome of a `run`'s response.
    pub fn of_response(response: &SkillCallResponse) -> Outcome {
        if response.error.is_some() {
            return Outcome::Rejected;
        }
        match &response.data {
            Some(result) if result.success => Outcome::Success,
            Some(result) if result.error_code == Some(ErrorCode::Timeout) => Outcome::TimedOut,
            Some(result) if result.error_code == Some(ErrorCode::RuntimeError) => Outcome::Setup,
            _ => Outcome::Failed,
        }
    }
}

impl From<Outcome> for ExitCode {
    fn from(outcome: Outcome) -> Self {
        ExitCode::from(outcome.code())
    }
}

/// A command that could not complete, with the outcome to exit with. The message is printed
/// on stderr as `skillet: MESSAGE`.
#[derive(Debug)]
pub struct Failure {
    /// The exit outcome.
    pub outcome: Outcome,
    /// What went wrong.
    pub message: String,
}

impl Failure {
    /// A setup failure (exit 5).
    pub fn setup(message: impl std::fmt::Display) -> Self {
        Failure {
            outcome: Outcome::Setup,
            message: message.to_string(),
        }
    }

    /// A usage failure (exit 2).
    pub fn usage(message: impl std::fmt::Display) -> Self {
        Failure {
            outcome: Outcome::Usage,
            message: message.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillet_protocol::{ProtocolError, SkillResult};

    #[test]
    fn each_response_kind_maps_to_its_documented_code() {
        let ok = SkillCallResponse::result("r", "s", SkillResult::success(None, None, 1));
        assert_eq!(Outcome::of_response(&ok).code(), 0);
        let failed = SkillCallResponse::result(
            "r",
            "s",
            SkillResult::failure(ErrorCode::SkillError, "x", 1),
        );
        assert_eq!(Outcome::of_response(&failed).code(), 1);
        let timed_out =
            SkillCallResponse::result("r", "s", SkillResult::failure(ErrorCode::Timeout, "x", 1));
        assert_eq!(Outcome::of_response(&timed_out).code(), 4);
        let unreachable = SkillCallResponse::result(
            "r",
            "s",
            SkillResult::failure(ErrorCode::RuntimeError, "x", 1),
        );
        assert_eq!(Outcome::of_response(&unreachable).code(), 5);
        let rejected =
            SkillCallResponse::rejected("r", "s", ProtocolError::new(ErrorCode::UnknownSkill, "x"));
        assert_eq!(Outcome::of_response(&rejected).code(), 3);
    }
}
