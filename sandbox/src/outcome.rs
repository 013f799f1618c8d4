//! How a sandboxed child ended, as data, and the heuristics that classify it.
//!
//! The sandbox never decides protocol errors; it states what happened ([`Outcome`]) and, for a
//! child that did not succeed, which kind of failure that was ([`Failure`], from
//! [`Outcome::failure`]). The engine maps a [`Failure`] to its own error codes; this crate knows no
//! protocol. Output *content* (valid JSON or not) is the engine's business, not this module's.
//!
//! ## Out-of-memory heuristic
//! The memory limit is `RLIMIT_AS`, so running out of memory shows up as a failed allocation, and
//! what a program does then depends on its runtime. A child that did not exit successfully is
//! classified [`Outcome::OutOfMemory`] when its stderr carries one of these markers:
//! - `memory allocation of N bytes failed` (Rust's default alloc error handler, then `SIGABRT`),
//! - `out of memory` (any case: glibc, Go, C++ runtimes, many C programs),
//! - `MemoryError` (Python), `std::bad_alloc` (C++), `Cannot allocate memory` (`ENOMEM` text).
//!
//! A program that dereferences a failed `malloc` and dies of `SIGSEGV` without printing anything
//! is indistinguishable from any other segfault and is reported as [`Outcome::Signaled`].
//! A kernel OOM kill (`SIGKILL` under system memory pressure) is likewise `Signaled`.

use std::fmt;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use serde::Serialize;

/// Which output stream a limit applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

impl fmt::Display for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        })
    }
}

/// How a sandboxed child ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// The child exited by itself with this status code.
    Exited {
        /// The exit status (0 is success).
        code: i32,
    },
    /// The child was killed by a signal it did not ask for from the sandbox (segfault, abort,
    /// `SIGXCPU` from the CPU-time limit, `SIGXFSZ` from the file-size limit, ...).
    Signaled {
        /// The signal number.
        signal: i32,
    },
    /// The wall-clock budget ran out; the sandbox killed the process group.
    TimedOut,
    /// The child ran out of memory under its limit (see the module doc for the heuristic).
    OutOfMemory,
    /// The child wrote more than its output limit; the sandbox killed the process group.
    OutputLimitExceeded {
        /// The stream that overflowed.
        stream: Stream,
    },
    /// The child could not be started (bad program path, working directory, or a sandbox
    /// feature required by a strict policy is missing). Nothing ran.
    SpawnFailed {
        /// What went wrong, for logs and error details.
        reason: String,
    },
}

/// The kind of failure an [`Outcome`] is, for callers that map it onto their own error codes
/// (the engine maps each to an A2E `ErrorCode`). Deliberately not `#[non_exhaustive]`: a new kind
/// must fail to compile in every mapping until it is mapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// The child died: a non-zero exit, or a signal other than the CPU-time limit's.
    Crashed,
    /// The child ran out of time: the wall clock, or the CPU-time limit (`SIGXCPU`).
    TimedOut,
    /// The child ran out of memory under its limit.
    OutOfMemory,
    /// The child wrote more than its output limit.
    OutputTooLarge,
    /// The child could not be started; nothing ran.
    NotStarted,
}

impl Outcome {
    /// True when the child exited with status 0 on its own.
    pub fn is_success(&self) -> bool {
        matches!(self, Outcome::Exited { code: 0 })
    }

    /// Which kind of failure this outcome is, `None` when the child exited successfully (its
    /// caller then judges the output).
    ///
    /// - memory limit → [`Failure::OutOfMemory`]
    /// - wall clock, or the CPU-time limit (`SIGXCPU`) → [`Failure::TimedOut`]
    /// - killed by another signal, non-zero exit → [`Failure::Crashed`] (a caller may still
    ///   prefer a valid error payload the child printed before a non-zero exit)
    /// - could not start → [`Failure::NotStarted`]
    /// - output over its limit → [`Failure::OutputTooLarge`]
    pub fn failure(&self) -> Option<Failure> {
        match self {
            Outcome::Exited { code: 0 } => None,
            Outcome::Exited { .. } => Some(Failure::Crashed),
            Outcome::Signaled { signal } if *signal == libc::SIGXCPU => Some(Failure::TimedOut),
            Outcome::Signaled { .. } => Some(Failure::Crashed),
            Outcome::TimedOut => Some(Failure::TimedOut),
            Outcome::OutOfMemory => Some(Failure::OutOfMemory),
            Outcome::OutputLimitExceeded { .. } => Some(Failure::OutputTooLarge),
            Outcome::SpawnFailed { .. } => Some(Failure::NotStarted),
        }
    }

    /// Classifies a child that ended on its own (not killed by the sandbox) from its wait status
    /// and the stderr it produced.
    pub fn classify(status: ExitStatus, stderr: &[u8]) -> Outcome {
        if status.success() {
            return Outcome::Exited { code: 0 };
        }
        if stderr_reports_out_of_memory(stderr) {
            return Outcome::OutOfMemory;
        }
        match (status.code(), status.signal()) {
            (Some(code), _) => Outcome::Exited { code },
            (None, Some(signal)) => Outcome::Signaled { signal },
            // Neither code nor signal: a stopped/continued status, which `wait` does not return
            // for a child it reaps. Report it as a crash rather than guess.
            (None, None) => Outcome::Signaled { signal: 0 },
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Exited { code } => write!(f, "exited with status {code}"),
            Outcome::Signaled { signal } => write!(f, "killed by signal {signal}"),
            Outcome::TimedOut => f.write_str("wall-clock timeout"),
            Outcome::OutOfMemory => f.write_str("out of memory under the sandbox limit"),
            Outcome::OutputLimitExceeded { stream } => write!(f, "{stream} over its size limit"),
            Outcome::SpawnFailed { reason } => write!(f, "could not start: {reason}"),
        }
    }
}

/// True when stderr carries one of the out-of-memory markers listed in the module doc.
fn stderr_reports_out_of_memory(stderr: &[u8]) -> bool {
    let text = String::from_utf8_lossy(stderr);
    let lower = text.to_ascii_lowercase();
    (lower.contains("memory allocation of") && lower.contains("failed"))
        || lower.contains("out of memory")
        || text.contains("MemoryError")
        || text.contains("std::bad_alloc")
        || text.contains("Cannot allocate memory")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signaled(signal: i32) -> ExitStatus {
        ExitStatus::from_raw(signal)
    }

    fn exited(code: i32) -> ExitStatus {
        ExitStatus::from_raw(code << 8)
    }

    #[test]
    fn rust_allocation_failure_abort_is_out_of_memory() {
        let stderr = b"memory allocation of 67108864 bytes failed\n";
        assert_eq!(
            Outcome::classify(signaled(libc::SIGABRT), stderr),
            Outcome::OutOfMemory
        );
    }

    #[test]
    fn python_memory_error_exit_is_out_of_memory() {
        let stderr = b"Traceback ...\nMemoryError\n";
        assert_eq!(Outcome::classify(exited(1), stderr), Outcome::OutOfMemory);
    }

    #[test]
    fn plain_segfault_is_signaled_not_out_of_memory() {
        let outcome = Outcome::classify(signaled(libc::SIGSEGV), b"");
        assert_eq!(
            outcome,
            Outcome::Signaled {
                signal: libc::SIGSEGV
            }
        );
        assert_eq!(outcome.failure(), Some(Failure::Crashed));
    }

    #[test]
    fn successful_exit_ignores_memory_words_on_stderr() {
        let outcome = Outcome::classify(exited(0), b"warning: out of memory soon");
        assert!(outcome.is_success());
        assert_eq!(outcome.failure(), None);
    }

    #[test]
    fn failures_follow_the_issue_mapping() {
        assert_eq!(Outcome::OutOfMemory.failure(), Some(Failure::OutOfMemory));
        assert_eq!(Outcome::TimedOut.failure(), Some(Failure::TimedOut));
        assert_eq!(
            Outcome::Signaled {
                signal: libc::SIGXCPU
            }
            .failure(),
            Some(Failure::TimedOut)
        );
        assert_eq!(
            Outcome::Exited { code: 2 }.failure(),
            Some(Failure::Crashed)
        );
        let overflow = Outcome::OutputLimitExceeded {
            stream: Stream::Stdout,
        };
        assert_eq!(overflow.failure(), Some(Failure::OutputTooLarge));
        let spawn = Outcome::SpawnFailed {
            reason: "no such program".into(),
        };
        assert_eq!(spawn.failure(), Some(Failure::NotStarted));
    }
}
