//! [`EnvironmentError`]: why a skill's environment, an interpreter or a system tool cannot be
//! had — one enum for the whole `environments` module, whose variants name what failed (a
//! declaration refused, an interpreter not found, a build tool's failure with its output's tail,
//! the cache directory's I/O, ...).
//!
//! The text a person or a model reads (what, where, what to do) is written here, in `Display`,
//! and nowhere else: the code paths carry the type, and a caller turns it into text only where
//! it shows it (a tool error, `skillet validate`, a `Blocked` reason). Errors are `Clone` and
//! compare equal when they say the same (a failed build is remembered and reported again).
//!
//! Not here: what the errors are about (the sibling modules), the grammar's own errors
//! ([`RequirementError`], [`ManifestError`]), which are wrapped with the file that held them.

use std::fmt;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

use super::TESTED_UV_VERSION;
use super::node_manifest::ManifestError;
use super::pep508::RequirementError;

/// Why an environment, an interpreter or a system tool cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvironmentError {
    /// No interpreter is configured for the extension an environment needs.
    #[error("no interpreter is configured for `.{extension}` (`[skills.scripts] interpreters`)")]
    NoInterpreter {
        /// `py`, `js`.
        extension: &'static str,
    },
    /// A configured interpreter's bare name matches nothing on `PATH`.
    #[error(
        "the `.{extension}` interpreter `{}` was not found on PATH; {}",
        configured.display(),
        interpreter_fix(extension, configured)
    )]
    InterpreterNotFound {
        /// The extension it runs.
        extension: String,
        /// As configured.
        configured: PathBuf,
    },
    /// Every candidate for an interpreter was passed over.
    #[error(
        "the `.{extension}` interpreter `{}` cannot run in the sandbox ({}); {}",
        configured.display(),
        skipped.iter().map(|(c, why)| format!("{}: {why}", c.display())).collect::<Vec<_>>().join("; "),
        interpreter_fix(extension, configured)
    )]
    InterpreterUnusable {
        /// The extension it runs.
        extension: String,
        /// As configured.
        configured: PathBuf,
        /// Each candidate and why it was passed over.
        skipped: Vec<(PathBuf, EnvironmentError)>,
    },
    /// An interpreter did not say (or said something unusable) where its executable is.
    #[error("{} did not say where its executable is", candidate.display())]
    ExecutableNotSaid {
        /// The candidate asked.
        candidate: PathBuf,
    },
    /// Asking an interpreter where it is could not start it.
    #[error("could not run it to ask where it is: {0}")]
    ProbeStart(Shared<std::io::Error>),
    /// Asking an interpreter where it is did not finish in time.
    #[error("asking it where it is took over {} s", after.as_secs())]
    ProbeTimeout {
        /// How long it was given.
        after: Duration,
    },
    /// Asking an interpreter where it is failed; its stderr's head.
    #[error("asking it where it is failed ({status}): {stderr}")]
    ProbeFailed {
        /// How it exited.
        status: ExitStatus,
        /// The head of what it said on stderr.
        stderr: String,
    },
    /// An operating-system failure on a path the surrounding message names.
    #[error("{0}")]
    Os(Shared<std::io::Error>),
    /// A path that cannot be read (its metadata, its canonical form).
    #[error("{}: {source}", path.display())]
    Inaccessible {
        /// The path.
        path: PathBuf,
        /// Why.
        source: Shared<std::io::Error>,
    },
    /// A problem about `path` (the path, then why).
    #[error("{}: {why}", path.display())]
    At {
        /// What it is about.
        path: PathBuf,
        /// Why.
        why: Box<EnvironmentError>,
    },
    /// A Python interpreter's standard library the sandbox's uid cannot reach.
    #[error("its standard library {}: {why}", dir.display())]
    StandardLibrary {
        /// `sys.base_prefix`.
        dir: PathBuf,
        /// Why.
        why: Box<EnvironmentError>,
    },
    /// A program that is not an executable regular file.
    #[error("{} is not an executable file", program.display())]
    NotExecutable {
        /// The program.
        program: PathBuf,
    },
    /// A program the sandbox's uid may not execute.
    #[error(
        "{} is not executable by the sandbox's uid {uid} (mode {mode:o})",
        program.display()
    )]
    NotExecutableBy {
        /// The program.
        program: PathBuf,
        /// The sandbox's uid.
        uid: u32,
        /// The file's permission bits.
        mode: u32,
    },
    /// A directory on the way the sandbox's uid cannot search.
    #[error(
        "it is under {}, which the sandbox's uid {uid} cannot enter (mode {mode:o}: a private \
         home)",
        dir.display()
    )]
    Unreachable {
        /// The directory it cannot enter.
        dir: PathBuf,
        /// The sandbox's uid.
        uid: u32,
        /// The directory's permission bits.
        mode: u32,
    },
    /// A system tool's bare name matches nothing on `PATH`.
    #[error("`{}` was not found on PATH; install it or give its absolute path", configured.display())]
    ToolNotFound {
        /// As configured.
        configured: PathBuf,
    },
    /// The directory of links scripts find the offered tools in could not be made.
    #[error("could not link it for scripts: {0}")]
    ToolNotLinked(Box<EnvironmentError>),
    /// `[skills] uv` names a file that does not exist.
    #[error(
        "`[skills] uv = \"{}\"` does not exist; install uv (`pip install \
         uv=={TESTED_UV_VERSION}`) and point the setting at it",
        configured.display()
    )]
    UvMissing {
        /// The setting's value.
        configured: PathBuf,
    },
    /// No `[skills] uv` and no uv on `PATH` (where uv is required).
    #[error(
        "uv is not on PATH; install it (`pip install uv=={TESTED_UV_VERSION}`) or set \
         `[skills] uv = \"/path/to/uv\"`"
    )]
    UvNotOnPath,
    /// No npm beside node nor on `PATH`.
    #[error("npm is not installed beside node nor on PATH (Debian: `apt-get install npm`)")]
    NpmMissing,
    /// The cache directory the sandbox's uid cannot enter.
    #[error(
        "the environments directory {}: {why}; set `[skills] environments_dir` to a directory \
         outside a private home (e.g. /var/cache/skillet/envs)",
        root.display()
    )]
    RootUnreachable {
        /// The cache directory.
        root: PathBuf,
        /// Why (an [`EnvironmentError::Unreachable`]).
        why: Box<EnvironmentError>,
    },
    /// A declared requirement refused by the PEP 508 parser, with the source that declared it.
    #[error("{declared_in}: {entry:?}: {reason}")]
    Requirement {
        /// `requirements.txt`, `pyproject.toml`, `metadata.a2e-requirements`,
        /// `[skills.environments.NAME]`.
        declared_in: String,
        /// The entry as written.
        entry: String,
        /// Why it is refused.
        reason: RequirementError,
    },
    /// A declaration file that is not a regular file (a symlink could point anywhere).
    #[error("{file} is not a regular file")]
    NotRegularFile {
        /// `requirements.txt`, `package.json`, ...
        file: &'static str,
    },
    /// A declaration file over its size limit.
    #[error("{file} is over {} KiB", max / 1024)]
    TooLarge {
        /// The file's name.
        file: &'static str,
        /// The limit, in bytes.
        max: u64,
    },
    /// A declaration file that cannot be read.
    #[error("{file}: {source}")]
    Unreadable {
        /// The file's name.
        file: &'static str,
        /// Why.
        source: Shared<std::io::Error>,
    },
    /// `pyproject.toml` is not TOML.
    #[error("pyproject.toml: {0}")]
    Pyproject(toml::de::Error),
    /// `pyproject.toml`'s `[project] dependencies` is not an array of strings.
    #[error("pyproject.toml: [project] dependencies must be an array of strings")]
    PyprojectDependencies,
    /// `package.json` or `package-lock.json` refused (not registry-only, malformed).
    #[error("{file}: {reason}")]
    Manifest {
        /// `package.json` or `package-lock.json`.
        file: &'static str,
        /// Why.
        reason: ManifestError,
    },
    /// `package-lock.json` is not JSON.
    #[error("package-lock.json: {0}")]
    LockNotJson(Shared<serde_json::Error>),
    /// A step on the cache directory failed (creating, locking, writing, moving into place).
    #[error("cannot {step} {}: {source}", path.display())]
    Cache {
        /// What was being done.
        step: CacheStep,
        /// On what.
        path: PathBuf,
        /// Why.
        source: Shared<std::io::Error>,
    },
    /// The link directory that gives a skill its Node packages could not be made.
    #[error("cannot link the skill to its Node environment under {}: {source}", links.display())]
    NodeLink {
        /// `<root>/links`.
        links: PathBuf,
        /// Why.
        source: Shared<std::io::Error>,
    },
    /// A build tool (uv, pip, npm) could not be started.
    #[error("{what}: cannot start {}: {source}", program.display())]
    BuildToolStart {
        /// `uv venv`, `pip install`, `npm install`, ...
        what: &'static str,
        /// The program.
        program: PathBuf,
        /// Why.
        source: Shared<std::io::Error>,
    },
    /// Waiting for a build tool failed.
    #[error("{what}: {source}")]
    BuildToolWait {
        /// The step.
        what: &'static str,
        /// Why.
        source: Shared<std::io::Error>,
    },
    /// A build tool ran over the build timeout and was stopped.
    #[error("{what} ran over {} s and was stopped", after.as_secs())]
    BuildTimeout {
        /// The step.
        what: &'static str,
        /// The timeout.
        after: Duration,
    },
    /// A build tool failed: its exit status and the tail of its stderr (redacted).
    #[error("{what} failed ({status}): {output}")]
    BuildFailed {
        /// The step.
        what: &'static str,
        /// How it exited.
        status: ExitStatus,
        /// Its stderr, trimmed and cut, with secrets redacted.
        output: String,
    },
    /// `python -m venv` failed on a host without uv.
    #[error(
        "{0} (uv is not on PATH, so Skillet builds with the interpreter's venv and pip; on \
         Debian `apt-get install python3-venv`, or install uv: `pip install uv`)"
    )]
    VenvFailed(Box<EnvironmentError>),
    /// The installer found no wheel and wheels-only forbade building from source.
    #[error(
        "{failure} (source distributions are not built for this skill: `[skills] builds` is \
         \"wheels-only\"{}; set `[skills] builds = \"allow-sdist\"` to build them on the host, \
         outside the sandbox, or pin versions that have wheels)",
        if *host_list { "" } else { ", the default for requirements a skill folder declares" }
    )]
    SourceBuildRefused {
        /// The installer's failure.
        failure: Box<EnvironmentError>,
        /// The requirements are the host's `[skills.environments.NAME]` list.
        host_list: bool,
    },
    /// Work moved off the runtime's threads panicked.
    #[error("{what} panicked: {message}")]
    Panicked {
        /// `reading the requirements`, `the environment build`, ...
        what: &'static str,
        /// The panic, as the runtime reports it.
        message: String,
    },
    /// A Node environment's failure (the prefix says which kind).
    #[error("Node: {0}")]
    Node(Box<EnvironmentError>),
    /// A build that failed recently, remembered until it is tried again.
    #[error("{why} (tried again {} s after this failure)", wait.as_secs())]
    RetryLater {
        /// The build's failure.
        why: Box<EnvironmentError>,
        /// How long it is remembered (at most [`RETRY_MAX`](super::RETRY_MAX)).
        wait: Duration,
    },
}

impl EnvironmentError {
    /// The failure behind the wrappers that only add where or when (`Node:`, a retry's wait, a
    /// path): what a test or a caller matches on.
    pub fn root_cause(&self) -> &EnvironmentError {
        match self {
            EnvironmentError::Node(why)
            | EnvironmentError::RetryLater { why, .. }
            | EnvironmentError::At { why, .. } => why.root_cause(),
            other => other,
        }
    }
}

/// A step on the cache directory, for [`EnvironmentError::Cache`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheStep {
    /// Creating a directory.
    Create,
    /// Opening a key's lock file.
    Open,
    /// Locking a key's lock file.
    Lock,
    /// Writing a file.
    Write,
    /// Renaming a finished environment into place.
    MoveIntoPlace,
}

impl fmt::Display for CacheStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CacheStep::Create => "create",
            CacheStep::Open => "open",
            CacheStep::Lock => "lock",
            CacheStep::Write => "write",
            CacheStep::MoveIntoPlace => "move the environment into place at",
        })
    }
}

/// An underlying error (I/O, JSON) shared so the enclosing error can be cloned (a failed build
/// is remembered and reported to every caller); two are equal when they say the same.
#[derive(Debug)]
pub struct Shared<E>(pub Arc<E>);

impl<E> Clone for Shared<E> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<E> From<E> for Shared<E> {
    fn from(error: E) -> Self {
        Shared(Arc::new(error))
    }
}

impl<E: fmt::Display> fmt::Display for Shared<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<E: std::error::Error + 'static> std::error::Error for Shared<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

impl<E: fmt::Display> PartialEq for Shared<E> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.to_string() == other.0.to_string()
    }
}

impl<E: fmt::Display> Eq for Shared<E> {}

/// The setting that fixes an interpreter the sandbox cannot run.
fn interpreter_fix(extension: &str, configured: &std::path::Path) -> String {
    format!(
        "set `[skills.scripts] interpreters = {{ {extension} = \"/usr/bin/{}\" }}` (or another \
         absolute path outside a private home)",
        configured
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    )
}
