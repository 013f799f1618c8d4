//! The Linux process backend: a confined child process per command, on kernel primitives only.
//!
//! Here the policy meets the platform report: [`LinuxProcessBackend`] resolves the program and
//! working directory, decides which isolation to apply (and refuses a strict policy it cannot
//! honour), prepares everything the child needs (`limits.rs`, `landlock.rs`, `cgroup.rs`) and
//! supervises the run: stdin in, capped output out, wall clock, and the kill of the whole process
//! group (and cgroup) when the run ends, times out, overflows, or is dropped.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
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
use crate::cgroup::{CgroupLimits, ChildCgroups};
use crate::error::SandboxError;
use crate::interactive::{ExitReport, InteractiveChild};
use crate::landlock::FilesystemRules;
use crate::limits::{ChildSetup, NetworkIsolation, identity_map, rlimits_for};
use crate::outcome::{Outcome, Stream};
use crate::platform::{Platform, PlatformReport, platform};
use crate::policy::{Enforcement, NetworkAccess, SandboxPolicy};

/// Runs children as confined Linux processes. Cheap to construct and clone; the platform is
/// probed once per process.
#[derive(Debug, Clone, Copy)]
pub struct LinuxProcessBackend {
    platform: &'static Platform,
}

impl Default for LinuxProcessBackend {
    fn default() -> Self {
        Self::new()
    }
}

/// A command ready to spawn, and what must live until it has.
struct Prepared {
    command: Command,
    cgroups: Option<ChildCgroups>,
    /// The Landlock ruleset descriptor the child restricts itself with; closed after spawn.
    _ruleset: Option<OwnedFd>,
}

impl LinuxProcessBackend {
    /// The backend, probing the platform on first use.
    pub fn new() -> Self {
        Self {
            platform: platform(),
        }
    }

    fn prepare(
        &self,
        request: &SandboxCommand,
        policy: &SandboxPolicy,
    ) -> Result<Prepared, SandboxError> {
        let report = &self.platform.report;
        let program = resolve_program(&request.program)?;
        let workdir = resolve_workdir(&request.workdir)?;
        let deny_network = policy.network == NetworkAccess::Deny;
        if policy.enforcement == Enforcement::Strict {
            check_strict(report, deny_network)?;
        }

        let drop_to = (report.running_as_root && report.uid_drop.is_available())
            .then_some((policy.identity.uid, policy.identity.gid));
        if let Some((uid, gid)) = drop_to {
            std::os::unix::fs::chown(&workdir, Some(uid), Some(gid)).map_err(|e| {
                SandboxError::Workdir {
                    path: workdir.clone(),
                    detail: format!("chown: {e}"),
                }
            })?;
        }

        let ruleset = match report.landlock_abi {
            Some(_) => FilesystemRules::resolve(&policy.filesystem, &workdir, &program)?
                .create_ruleset(deny_network)?,
            None => None,
        };

        let network = match (deny_network, report.network_namespace.is_available()) {
            (false, _) | (true, false) => NetworkIsolation::None,
            (true, true) if report.running_as_root => NetworkIsolation::NetNamespace,
            (true, true) => NetworkIsolation::UserAndNetNamespace {
                uid_map: identity_map(rustix::process::getuid().as_raw()),
                gid_map: identity_map(rustix::process::getgid().as_raw()),
            },
        };

        let cgroups = if self.platform.cgroups.is_empty() {
            None
        } else {
            let limits = CgroupLimits {
                max_pids: policy.limits.processes,
                max_memory_bytes: policy.limits.memory_bytes,
            };
            match self.platform.cgroups.create_child(limits) {
                Ok(cgroups) => Some(cgroups),
                Err(e) if policy.enforcement == Enforcement::Strict => {
                    return Err(SandboxError::Cgroup {
                        detail: e.to_string(),
                    });
                }
                Err(e) => {
                    tracing::warn!(error = %e, "sandbox child runs without its cgroups");
                    None
                }
            }
        };

        let setup = ChildSetup {
            cgroup_procs: cgroups
                .as_ref()
                .map(ChildCgroups::procs_files)
                .unwrap_or_default(),
            network,
            // The pids cgroup replaces RLIMIT_NPROC only where the child cannot leave it: under
            // the dropped uid it cannot write root's `cgroup.procs` files.
            rlimits: rlimits_for(
                &policy.limits,
                drop_to.is_some() && cgroups.as_ref().is_some_and(ChildCgroups::limits_pids),
            ),
            drop_to,
            landlock_ruleset: ruleset.as_ref().map(AsRawFd::as_raw_fd),
            parent_death: Some(std::process::id() as libc::pid_t),
            syscall_filter: self.platform.syscall_filter,
        };

        let mut command = Command::new(&program);
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
        // SAFETY: `ChildSetup::apply` runs between fork and exec and makes only async-signal-safe
        // syscalls on data prepared above (see limits.rs).
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(move || setup.apply());
        }
        Ok(Prepared {
            command,
            cgroups,
            _ruleset: ruleset,
        })
    }

    fn spawn(
        &self,
        request: &SandboxCommand,
        policy: &SandboxPolicy,
    ) -> Result<(Child, ProcessGroupGuard), SandboxError> {
        let Prepared {
            mut command,
            cgroups,
            _ruleset,
        } = self.prepare(request, policy)?;
        let child = command.spawn().map_err(SandboxError::Spawn)?;
        let guard = ProcessGroupGuard {
            pgid: child.id(),
            cgroups,
        };
        Ok((child, guard))
    }
}

#[async_trait]
impl SandboxBackend for LinuxProcessBackend {
    fn platform_report(&self) -> &PlatformReport {
        &self.platform.report
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

/// Owns the child's process group (and cgroups): kills all of it on [`Self::kill`] and on drop,
/// so cancellation (dropping a `run` future) leaves nothing running.
#[derive(Debug)]
struct ProcessGroupGuard {
    pgid: Option<u32>,
    cgroups: Option<ChildCgroups>,
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
        if let Some(cgroups) = &self.cgroups {
            cgroups.kill_all();
        }
    }

    /// True when the memory cgroup saw the kernel OOM-kill one of the child's processes.
    fn oom_killed(&self) -> bool {
        self.cgroups.as_ref().is_some_and(ChildCgroups::oom_killed)
    }
}

impl Drop for ProcessGroupGuard {
    fn drop(&mut self) {
        self.kill();
        // The cgroup's own drop then kills stragglers until it can remove the directory.
    }
}

/// Refuses a strict policy this platform cannot enforce, naming every gap.
fn check_strict(report: &PlatformReport, deny_network: bool) -> Result<(), SandboxError> {
    let mut gaps = Vec::new();
    if !report.process_limit_enforced() {
        gaps.push("process limit (root without uid drop or pids cgroup)");
    }
    if report.landlock_abi.is_none() {
        gaps.push("landlock");
    }
    if deny_network && !report.network_namespace.is_available() {
        gaps.push("network namespace");
    }
    if !report.seccomp.is_available() {
        gaps.push("seccomp");
    }
    if gaps.is_empty() {
        Ok(())
    } else {
        Err(SandboxError::NotEnforceable {
            detail: gaps.join(", "),
        })
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
    use crate::platform::Capability;

    #[test]
    fn strict_policy_names_every_missing_feature() {
        let report = PlatformReport {
            backend: "linux-process",
            running_as_root: true,
            rlimits: true,
            landlock_abi: None,
            network_namespace: Capability::Unavailable {
                reason: "EPERM".into(),
            },
            uid_drop: Capability::Unavailable {
                reason: "EPERM".into(),
            },
            cgroup_pids: Capability::Unavailable {
                reason: "read-only".into(),
            },
            cgroup_memory: Capability::Unavailable {
                reason: "read-only".into(),
            },
            seccomp: Capability::Unavailable {
                reason: "EINVAL".into(),
            },
            parent_death_signal: true,
        };
        let err = check_strict(&report, true).unwrap_err().to_string();
        for gap in ["process limit", "landlock", "network namespace", "seccomp"] {
            assert!(err.contains(gap), "{gap} missing from: {err}");
        }
    }

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
