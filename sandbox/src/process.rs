//! The process backend: a confined child process per command, in the mode this build (or the
//! caller) chose — the Linux sandbox or the reduced mode.
//!
//! What every mode shares lives here: [`ProcessBackend`] resolves the program and working
//! directory, builds the command (no shell, own process group, clean environment, working
//! directory), lets the mode add its confinement (`linux/mod.rs` or `reduced.rs`), and supervises
//! the run: stdin in, capped output out, wall clock, and the kill of the whole process group (and,
//! in the Linux sandbox, its cgroups) when the run ends, times out, overflows, or is dropped.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use async_trait::async_trait;
use secrecy::ExposeSecret;
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

use crate::backend::{InteractiveOptions, RunResult, SandboxBackend, SandboxCommand};
use crate::capture::{CapturedOutput, capture_head, capture_tail};
use crate::error::SandboxError;
use crate::interactive::{ExitReport, InteractiveChild};
use crate::outcome::{Outcome, Stream};
use crate::platform::{PlatformReport, SandboxMode};
use crate::policy::SandboxPolicy;

/// Runs children as confined processes. Cheap to construct and copy; the platform is probed once
/// per process.
///
/// [`ProcessBackend::new`] applies the strongest mode this build has ([`SandboxMode::compiled`]);
/// [`ProcessBackend::reduced`] the reduced mode on any platform (tests use it to prove the reduced
/// guarantees on Linux too).
#[derive(Debug, Clone, Copy)]
pub struct ProcessBackend {
    mode: Mode,
}

#[derive(Debug, Clone, Copy)]
enum Mode {
    #[cfg(all(target_os = "linux", feature = "linux-sandbox"))]
    Linux(&'static crate::linux::LinuxPlatform),
    Reduced,
}

impl Default for ProcessBackend {
    fn default() -> Self {
        Self::new()
    }
}

/// What [`ProcessBackend::new`] enforces here: the Linux sandbox's probed report when this
/// build has it, else the reduced mode's (probed once, then cached).
pub fn platform_report() -> &'static PlatformReport {
    #[cfg(all(target_os = "linux", feature = "linux-sandbox"))]
    {
        &crate::linux::platform().report
    }
    #[cfg(not(all(target_os = "linux", feature = "linux-sandbox")))]
    {
        crate::reduced::report()
    }
}

/// What must live beside a child and is killed with it: nothing in the reduced mode; in the
/// Linux sandbox its cgroups (and, until the spawn, its Landlock ruleset).
#[derive(Debug, Default)]
pub(crate) struct Held {
    #[cfg(all(target_os = "linux", feature = "linux-sandbox"))]
    linux: Option<crate::linux::Held>,
}

impl Held {
    fn spawned(&mut self) {
        #[cfg(all(target_os = "linux", feature = "linux-sandbox"))]
        if let Some(linux) = &mut self.linux {
            linux.spawned();
        }
    }

    fn kill_all(&self) {
        #[cfg(all(target_os = "linux", feature = "linux-sandbox"))]
        if let Some(linux) = &self.linux {
            linux.kill_all();
        }
    }

    fn oom_killed(&self) -> bool {
        #[cfg(all(target_os = "linux", feature = "linux-sandbox"))]
        if let Some(linux) = &self.linux {
            return linux.oom_killed();
        }
        false
    }
}

impl ProcessBackend {
    /// The backend in the strongest mode this build has, probing the platform on first use.
    pub fn new() -> Self {
        #[cfg(all(target_os = "linux", feature = "linux-sandbox"))]
        {
            Self {
                mode: Mode::Linux(crate::linux::platform()),
            }
        }
        #[cfg(not(all(target_os = "linux", feature = "linux-sandbox")))]
        {
            Self::reduced()
        }
    }

    /// The backend in the reduced mode, whatever this build has (see the crate doc for what it
    /// enforces and what it does not).
    pub fn reduced() -> Self {
        Self {
            mode: Mode::Reduced,
        }
    }

    /// The mode this backend applies.
    pub fn mode(&self) -> SandboxMode {
        match self.mode {
            #[cfg(all(target_os = "linux", feature = "linux-sandbox"))]
            Mode::Linux(_) => SandboxMode::Linux,
            Mode::Reduced => SandboxMode::Reduced,
        }
    }

    fn spawn(
        &self,
        request: &SandboxCommand,
        policy: &SandboxPolicy,
    ) -> Result<(Child, ProcessGroupGuard), SandboxError> {
        let program = resolve_program(&request.program)?;
        let workdir = resolve_workdir(&request.workdir)?;
        let mut command = Command::new(&program);
        if let Some(arg0) = &request.arg0 {
            command.arg0(arg0);
        }
        command
            .args(&request.args)
            .env_clear()
            .envs(child_environment(policy, &workdir))
            .current_dir(&workdir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut held = match self.mode {
            #[cfg(all(target_os = "linux", feature = "linux-sandbox"))]
            Mode::Linux(platform) => Held {
                linux: Some(crate::linux::confine(
                    platform,
                    &mut command,
                    policy,
                    &program,
                    &workdir,
                )?),
            },
            Mode::Reduced => {
                crate::reduced::confine(&mut command, policy)?;
                Held::default()
            }
        };
        let spawned = command.spawn().map_err(SandboxError::Spawn);
        held.spawned();
        let child = spawned?;
        let guard = ProcessGroupGuard {
            pgid: child.id(),
            held,
        };
        Ok((child, guard))
    }
}

#[async_trait]
impl SandboxBackend for ProcessBackend {
    fn platform_report(&self) -> &PlatformReport {
        match self.mode {
            #[cfg(all(target_os = "linux", feature = "linux-sandbox"))]
            Mode::Linux(platform) => &platform.report,
            Mode::Reduced => crate::reduced::report(),
        }
    }

    async fn run(
        &self,
        command: &SandboxCommand,
        policy: &SandboxPolicy,
        stdin: Vec<u8>,
    ) -> RunResult {
        let started = Instant::now();
        let (mut child, guard) = match self.spawn(command, policy) {
            Ok(spawned) => spawned,
            Err(e) => return RunResult::spawn_failed(&e),
        };
        let pid = child.id();
        let mut stdout = CapturedOutput::default();
        let mut stderr = CapturedOutput::default();
        let ended =
            supervise_run(&mut child, &guard, policy, stdin, &mut stdout, &mut stderr).await;
        guard.kill();
        // Reap the leader (it is dead or was just sent SIGKILL) so no zombie outlives the run.
        let status = match ended {
            RunEnd::Exited(status) => Some(status),
            _ => child.wait().await.ok(),
        };
        let oom_killed = guard.oom_killed();
        drop(guard);
        let outcome = match ended {
            // The kernel's verdict is exact; it wins over how the death looked from outside.
            _ if oom_killed => Outcome::OutOfMemory,
            RunEnd::TimedOut => Outcome::TimedOut,
            RunEnd::OverLimit(stream) => Outcome::OutputLimitExceeded { stream },
            RunEnd::Exited(_) | RunEnd::WaitFailed => match status {
                Some(status) => Outcome::classify(status, &stderr.bytes),
                None => Outcome::Signaled { signal: 0 },
            },
        };
        RunResult {
            outcome,
            stdout,
            stderr,
            elapsed: started.elapsed(),
            pid,
        }
    }

    async fn spawn_interactive(
        &self,
        command: &SandboxCommand,
        policy: &SandboxPolicy,
        options: InteractiveOptions,
    ) -> Result<InteractiveChild, SandboxError> {
        let (mut child, guard) = self.spawn(command, policy)?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(SandboxError::Spawn(std::io::Error::other(
                "child pipes missing",
            )));
        };
        let pid = child.id();
        let (kill_tx, kill_rx) = oneshot::channel();
        let (exit_tx, exit_rx) = oneshot::channel();
        let stderr_limit = policy.stderr_limit_bytes;
        tokio::spawn(async move {
            let stderr_task = tokio::spawn(capture_tail(stderr, stderr_limit));
            let report = supervise_interactive(child, guard, kill_rx, options, stderr_task).await;
            let _ = exit_tx.send(report);
        });
        Ok(InteractiveChild::from_parts(
            Box::new(stdin),
            Box::new(stdout),
            pid,
            kill_tx,
            exit_rx,
        ))
    }
}

/// Why a `run` stopped supervising.
enum RunEnd {
    Exited(std::process::ExitStatus),
    WaitFailed,
    TimedOut,
    OverLimit(Stream),
}

/// Feeds stdin, captures output and waits for the leader, until all of that is done or the wall
/// clock or an output limit ends the run.
async fn supervise_run(
    child: &mut Child,
    guard: &ProcessGroupGuard,
    policy: &SandboxPolicy,
    input: Vec<u8>,
    stdout: &mut CapturedOutput,
    stderr: &mut CapturedOutput,
) -> RunEnd {
    let stdin_pipe = child.stdin.take();
    let stdout_pipe = child.stdout.take();
    let stderr_pipe = child.stderr.take();
    let feed = async move {
        if let Some(mut pipe) = stdin_pipe {
            // A child that exits without reading its input is not an error here (EPIPE).
            let _ = pipe.write_all(&input).await;
        }
    };
    let (out_limit, err_limit) = (policy.stdout_limit_bytes, policy.stderr_limit_bytes);
    let io = async {
        let out = async {
            match stdout_pipe {
                Some(pipe) => capture_head(pipe, out_limit, stdout)
                    .await
                    .map_err(|_| Stream::Stdout),
                None => Ok(()),
            }
        };
        let err = async {
            match stderr_pipe {
                Some(pipe) => capture_head(pipe, err_limit, stderr)
                    .await
                    .map_err(|_| Stream::Stderr),
                None => Ok(()),
            }
        };
        let ((), out, err) = tokio::join!(feed, out, err);
        out.and(err)
    };
    let mut io = std::pin::pin!(io);
    let deadline = tokio::time::sleep(policy.timeout());
    let mut deadline = std::pin::pin!(deadline);
    let mut io_done = false;
    let mut exited: Option<RunEnd> = None;
    loop {
        tokio::select! {
            result = &mut io, if !io_done => {
                if let Err(stream) = result {
                    return RunEnd::OverLimit(stream);
                }
                io_done = true;
            }
            status = child.wait(), if exited.is_none() => {
                exited = Some(status.map_or(RunEnd::WaitFailed, RunEnd::Exited));
                // Descendants that still hold the pipes would keep the capture open: the run
                // is over when the leader exits.
                guard.kill();
            }
            () = &mut deadline => return RunEnd::TimedOut,
        }
        if io_done && let Some(end) = exited.take() {
            return end;
        }
    }
}

/// Waits for an interactive child to exit, be killed, or outlive its lifetime; then kills what
/// is left of its group and reports.
async fn supervise_interactive(
    mut child: Child,
    guard: ProcessGroupGuard,
    mut kill_rx: oneshot::Receiver<()>,
    options: InteractiveOptions,
    stderr_task: tokio::task::JoinHandle<CapturedOutput>,
) -> ExitReport {
    let lifetime = async {
        match options.max_lifetime {
            Some(limit) => tokio::time::sleep(limit).await,
            None => std::future::pending().await,
        }
    };
    enum End {
        Exited(std::io::Result<std::process::ExitStatus>),
        Killed,
        TimedOut,
    }
    let end = tokio::select! {
        status = child.wait() => End::Exited(status),
        _ = &mut kill_rx => End::Killed,
        () = lifetime => End::TimedOut,
    };
    guard.kill();
    let timed_out = matches!(end, End::TimedOut);
    let status = match end {
        End::Exited(status) => status,
        End::Killed | End::TimedOut => child.wait().await,
    };
    let oom_killed = guard.oom_killed();
    drop(guard);
    let stderr_tail = stderr_task.await.unwrap_or_default();
    let outcome = match status {
        _ if oom_killed => Outcome::OutOfMemory,
        _ if timed_out => Outcome::TimedOut,
        Ok(status) => Outcome::classify(status, &stderr_tail.bytes),
        Err(_) => Outcome::Signaled {
            signal: libc::SIGKILL,
        },
    };
    ExitReport {
        outcome,
        stderr_tail,
    }
}

/// Owns the child's process group (and what its mode holds beside it, e.g. cgroups): kills all of
/// it on [`Self::kill`] and on drop, so cancellation (dropping a `run` future) leaves nothing
/// running.
#[derive(Debug)]
struct ProcessGroupGuard {
    pgid: Option<u32>,
    held: Held,
}

impl ProcessGroupGuard {
    fn kill(&self) {
        if let Some(pgid) = self
            .pgid
            .and_then(|p| rustix::process::Pid::from_raw(p as i32))
        {
            // ESRCH (group already empty) is the normal case after a clean exit.
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
        self.held.kill_all();
    }

    /// True when the child's memory cgroup saw the kernel OOM-kill one of its processes.
    fn oom_killed(&self) -> bool {
        self.held.oom_killed()
    }
}

impl Drop for ProcessGroupGuard {
    fn drop(&mut self) {
        self.kill();
        // The cgroup's own drop then kills stragglers until it can remove the directory.
    }
}

/// The program as an absolute, canonical path to an executable file. Bare names are looked up on
/// the engine's `PATH` (the child's environment is not consulted: the host declared the name).
fn resolve_program(program: &Path) -> Result<PathBuf, SandboxError> {
    let err = |detail: String| SandboxError::Program {
        program: program.to_path_buf(),
        detail,
    };
    let candidate = if program.components().count() > 1 || program.is_absolute() {
        program.to_path_buf()
    } else {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())
            .ok_or_else(|| err("not found on PATH".into()))?
    };
    let resolved = candidate.canonicalize().map_err(|e| err(e.to_string()))?;
    let meta = resolved.metadata().map_err(|e| err(e.to_string()))?;
    if !meta.is_file() {
        return Err(err("not a regular file".into()));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(err("not executable".into()));
    }
    Ok(resolved)
}

fn resolve_workdir(workdir: &Path) -> Result<PathBuf, SandboxError> {
    let err = |detail: String| SandboxError::Workdir {
        path: workdir.to_path_buf(),
        detail,
    };
    let resolved = workdir.canonicalize().map_err(|e| err(e.to_string()))?;
    if !resolved.is_dir() {
        return Err(err("not a directory".into()));
    }
    Ok(resolved)
}

/// The child's environment: allow-listed engine variables, then explicit ones, then `HOME` and
/// `TMPDIR` pointing at the working directory unless already set.
fn child_environment(policy: &SandboxPolicy, workdir: &Path) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = policy
        .env
        .inherit
        .iter()
        .filter_map(|name| std::env::var_os(name).map(|value| (name.into(), value)))
        .collect();
    for (name, value) in &policy.env.set {
        env.retain(|(n, _)| n != name.as_str());
        env.push((name.into(), value.expose_secret().into()));
    }
    if policy.env.home_is_workdir {
        for name in ["HOME", "TMPDIR"] {
            if !env.iter().any(|(n, _)| n == name) {
                env.push((name.into(), workdir.as_os_str().to_owned()));
            }
        }
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_program_name_is_found_on_path() {
        let resolved = resolve_program(Path::new("sh")).expect("sh on PATH");
        assert!(resolved.is_absolute());
    }

    #[test]
    fn missing_program_is_a_clear_error() {
        let err = resolve_program(Path::new("/nonexistent/prog")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/prog"), "{err}");
    }

    #[test]
    fn explicit_env_wins_over_inherited_and_home_defaults_to_workdir() {
        let mut policy = SandboxPolicy::default();
        policy.env.inherit = vec!["PATH".into()];
        policy
            .env
            .set
            .insert("PATH".into(), "/only/this".to_owned().into());
        let env = child_environment(&policy, Path::new("/w"));
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(get("PATH"), Some("/only/this".into()));
        assert_eq!(get("HOME"), Some("/w".into()));
        assert_eq!(env.iter().filter(|(n, _)| n == "PATH").count(), 1);
    }
}
