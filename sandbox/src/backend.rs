//! The backend trait every sandbox implements, and the request/result types it speaks.
//!
//! A backend turns a [`SandboxCommand`] plus a [`SandboxPolicy`] into a confined child. The Linux
//! process backend (`process.rs`) is the only one today; a container backend implements the same
//! trait and builds [`InteractiveChild`] with [`InteractiveChild::from_parts`].

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;

use crate::capture::CapturedOutput;
use crate::error::SandboxError;
use crate::interactive::InteractiveChild;
use crate::outcome::Outcome;
use crate::platform::PlatformReport;
use crate::policy::SandboxPolicy;

/// What to run: a program and its arguments (never through a shell), in a working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxCommand {
    /// An absolute or relative path, or a bare name looked up on the engine's `PATH`.
    pub program: PathBuf,
    /// Arguments, passed as-is.
    pub args: Vec<OsString>,
    /// The directory the child runs in and may write to; it must exist. When the child runs as
    /// an unprivileged uid, the backend gives that uid ownership of this directory (not of its
    /// contents).
    pub workdir: PathBuf,
    /// The child's `argv[0]` when it must differ from the resolved program (which is always
    /// the canonical path). A Python virtual environment needs it: its `bin/python` is a symlink
    /// to the base interpreter, and Python finds the environment only from `argv[0]`.
    pub arg0: Option<OsString>,
}

impl SandboxCommand {
    /// A command with no arguments.
    pub fn new(program: impl Into<PathBuf>, workdir: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            workdir: workdir.into(),
            arg0: None,
        }
    }

    /// Sets the child's `argv[0]` (see [`SandboxCommand::arg0`]).
    pub fn arg0(mut self, arg0: impl Into<OsString>) -> Self {
        self.arg0 = Some(arg0.into());
        self
    }

    /// Appends one argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Appends arguments.
    pub fn args<I, A>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = A>,
        A: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }
}

/// The result of a one-shot [`SandboxBackend::run`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunResult {
    /// How the child ended.
    pub outcome: Outcome,
    /// Its stdout, at most `stdout_limit_bytes`.
    pub stdout: CapturedOutput,
    /// Its stderr, at most `stderr_limit_bytes`.
    pub stderr: CapturedOutput,
    /// Wall-clock time from spawn to the end of the run.
    pub elapsed: Duration,
    /// The child's pid (also its process group id), `None` when it never started.
    pub pid: Option<u32>,
}

impl RunResult {
    /// A result for a child that could not be started.
    pub fn spawn_failed(error: &SandboxError) -> Self {
        Self {
            outcome: Outcome::SpawnFailed {
                reason: error.to_string(),
            },
            stdout: CapturedOutput::default(),
            stderr: CapturedOutput::default(),
            elapsed: Duration::ZERO,
            pid: None,
        }
    }
}

/// Options for a long-lived interactive child.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InteractiveOptions {
    /// Kill the child after this long ([`Outcome::TimedOut`]); `None` lets it live until killed
    /// or dropped. Per-call deadlines are the caller's job: an interactive child serves many.
    pub max_lifetime: Option<Duration>,
}

/// A way to run confined children. Implementations never let a child take the engine down: every
/// failure of the child is an [`Outcome`], and dropping a future or handle kills the child.
#[async_trait]
pub trait SandboxBackend: Send + Sync + std::fmt::Debug {
    /// What this backend enforces here (print once at startup).
    fn platform_report(&self) -> &PlatformReport;

    /// Runs `command` to completion under `policy`, feeding it `stdin` and capturing its output.
    ///
    /// Never fails: a child that cannot start yields [`Outcome::SpawnFailed`]. Dropping the
    /// returned future kills the child's whole process group (cancellation).
    async fn run(
        &self,
        command: &SandboxCommand,
        policy: &SandboxPolicy,
        stdin: Vec<u8>,
    ) -> RunResult;

    /// Starts `command` under `policy` with piped stdin/stdout (e.g. a plugin speaking JSON lines)
    /// and returns its handles. The child's stderr is kept as a tail of `stderr_limit_bytes`.
    async fn spawn_interactive(
        &self,
        command: &SandboxCommand,
        policy: &SandboxPolicy,
        options: InteractiveOptions,
    ) -> Result<InteractiveChild, SandboxError>;
}
