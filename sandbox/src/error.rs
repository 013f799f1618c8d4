//! Why a child could not be started. Failures *of* a running child are not errors but
//! [`crate::Outcome`]s; this type only covers the steps before the program runs.

use std::path::PathBuf;

/// A child could not be started; nothing ran.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The program is missing, not a file, or not found on `PATH`.
    #[error("program {program}: {detail}")]
    Program {
        /// The program as requested.
        program: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// The working directory is missing or unusable.
    #[error("working directory {path}: {detail}")]
    Workdir {
        /// The directory as requested.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// The policy names something that does not exist or makes no sense.
    #[error("sandbox policy: {detail}")]
    Policy {
        /// What is wrong.
        detail: String,
    },
    /// The Landlock ruleset could not be built.
    #[error("landlock: {detail}")]
    Landlock {
        /// What failed.
        detail: String,
    },
    /// The child's cgroup could not be created.
    #[error("cgroup: {detail}")]
    Cgroup {
        /// What failed.
        detail: String,
    },
    /// A strict policy asked for isolation this platform cannot provide.
    #[error("strict sandbox policy not enforceable here: {detail}")]
    NotEnforceable {
        /// The missing features (see the platform report).
        detail: String,
    },
    /// `fork`/`exec` or the in-child confinement failed (the OS error says which errno).
    #[error("spawn failed: {0}")]
    Spawn(#[source] std::io::Error),
}
