//! Handles to a long-lived sandboxed child: its stdin/stdout, and its exit.
//!
//! Backend-neutral: the streams are boxed, and a backend's supervisor task reports the exit through
//! a oneshot channel. Dropping the [`InteractiveChild`] (or calling [`InteractiveChild::kill`])
//! tells the supervisor to kill the child's whole process group.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader, Lines};
use tokio::sync::oneshot;

use crate::capture::CapturedOutput;
use crate::outcome::Outcome;

/// The child's stdin, as handed to the caller.
pub type ChildWriter = Box<dyn AsyncWrite + Send + Unpin>;
/// The child's stdout, as handed to the caller.
pub type ChildReader = Box<dyn AsyncRead + Send + Unpin>;

/// How an interactive child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitReport {
    /// How it ended. A child killed through [`InteractiveChild::kill`] or drop reports
    /// `Signaled { signal: SIGKILL }`.
    pub outcome: Outcome,
    /// The newest bytes of its stderr (up to the policy's `stderr_limit_bytes`).
    pub stderr_tail: CapturedOutput,
}

/// A running interactive child. Dropping it kills the child.
pub struct InteractiveChild {
    stdin: Option<ChildWriter>,
    stdout: Option<ChildReader>,
    pid: Option<u32>,
    kill: Option<oneshot::Sender<()>>,
    exit: Option<oneshot::Receiver<ExitReport>>,
    report: Option<ExitReport>,
}

impl std::fmt::Debug for InteractiveChild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InteractiveChild")
            .field("pid", &self.pid)
            .field("stdin_taken", &self.stdin.is_none())
            .field("stdout_taken", &self.stdout.is_none())
            .field("report", &self.report)
            .finish()
    }
}

impl InteractiveChild {
    /// Assembles a handle from a backend's parts: the streams, the child's id, a sender the
    /// backend's supervisor treats as "kill now" (also when dropped), and the receiver on which
    /// it delivers the exit report.
    pub fn from_parts(
        stdin: ChildWriter,
        stdout: ChildReader,
        pid: Option<u32>,
        kill: oneshot::Sender<()>,
        exit: oneshot::Receiver<ExitReport>,
    ) -> Self {
        Self {
            stdin: Some(stdin),
            stdout: Some(stdout),
            pid,
            kill: Some(kill),
            exit: Some(exit),
            report: None,
        }
    }

    /// The child's pid (also its process group id), when the backend has one.
    pub fn id(&self) -> Option<u32> {
        self.pid
    }

    /// Takes the child's stdin (once). Dropping it closes the child's stdin.
    pub fn take_stdin(&mut self) -> Option<ChildWriter> {
        self.stdin.take()
    }

    /// Takes the child's stdout (once).
    pub fn take_stdout(&mut self) -> Option<ChildReader> {
        self.stdout.take()
    }

    /// Takes the child's stdout (once) as a stream of lines, for JSON-lines protocols.
    /// Callers bound line length themselves if they read untrusted children (e.g. with
    /// `tokio_util::codec::LinesCodec::new_with_max_length`).
    pub fn take_stdout_lines(&mut self) -> Option<Lines<BufReader<ChildReader>>> {
        self.stdout.take().map(|out| BufReader::new(out).lines())
    }

    /// Asks the backend to kill the child's whole process group now; [`Self::wait`] then
    /// returns its report.
    pub fn kill(&mut self) {
        if let Some(kill) = self.kill.take() {
            let _ = kill.send(());
        }
    }

    /// Waits for the child to end and returns how (cached: later calls return the same report).
    pub async fn wait(&mut self) -> ExitReport {
        if let Some(report) = &self.report {
            return report.clone();
        }
        let report = match self.exit.take() {
            Some(exit) => exit.await.unwrap_or_else(|_| supervisor_gone()),
            None => supervisor_gone(),
        };
        self.report = Some(report.clone());
        report
    }

    /// The exit report if the child has already ended, without waiting.
    pub fn try_wait(&mut self) -> Option<ExitReport> {
        if self.report.is_none() {
            let exit = self.exit.as_mut()?;
            match exit.try_recv() {
                Ok(report) => self.report = Some(report),
                Err(oneshot::error::TryRecvError::Empty) => return None,
                Err(oneshot::error::TryRecvError::Closed) => self.report = Some(supervisor_gone()),
            }
            self.exit = None;
        }
        self.report.clone()
    }
}

/// The supervisor vanished without a report (its runtime shut down); its drop killed the child.
fn supervisor_gone() -> ExitReport {
    ExitReport {
        outcome: Outcome::Signaled {
            signal: libc::SIGKILL,
        },
        stderr_tail: CapturedOutput::default(),
    }
}
