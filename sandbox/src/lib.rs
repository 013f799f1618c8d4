//! Skillet's sandbox: runs untrusted child processes isolated and bounded, and says how they ended.
//!
//! Used by the engine for command tools (one child per call, JSON on stdin/stdout) and for
//! out-of-process skills (a long-lived child speaking JSON lines over stdio). This crate knows
//! nothing about skills or the A2E protocol: it runs programs ([`SandboxBackend`]), reports what
//! happened as data ([`Outcome`]) and, when a child failed, which kind of failure it was
//! ([`Failure`], from [`Outcome::failure`]); the engine maps that to its protocol's error codes.
//!
//! # Two modes
//! [`ProcessBackend`] confines each child in one of two [`SandboxMode`]s. [`ProcessBackend::new`]
//! takes the strongest this build has: the Linux sandbox on Linux with the `linux-sandbox` cargo
//! feature (on by default), the reduced mode everywhere else (other unixes, or the feature off).
//! [`ProcessBackend::reduced`] chooses the reduced mode on any platform. `docs/PORTABILITY.md`
//! has the table of what each mode enforces.
//!
//! ## What every mode enforces (the reduced mode is exactly this)
//! Each child runs without a shell (the resolved program is `exec`ed), in its own process group,
//! with a clean environment from an allow-list, in a working directory it may write, under POSIX
//! rlimits (address space, CPU seconds, open files, processes, file size, no core dumps — those
//! the platform has), a wall-clock timeout and stdout/stderr caps; the whole group is killed when
//! the run ends, times out, overflows, or the caller drops the future or handle.
//!
//! The reduced mode does **not** enforce: filesystem confinement, network isolation, a syscall
//! filter, an unprivileged uid, cgroups (no memory limit beyond `RLIMIT_AS`; the process limit is
//! `RLIMIT_NPROC` only, which root ignores; descendants that leave the process group survive it),
//! or the kill on engine death. Its [`PlatformReport`] lists exactly that
//! ([`PlatformReport::not_enforced`]), and it refuses [`Enforcement::Strict`].
//!
//! ## What the Linux sandbox adds
//! - Landlock filesystem rules (read+exec on system paths, read-write on its directory), TCP
//!   denied and signals/abstract sockets scoped, as far as the kernel's Landlock ABI allows;
//! - a network namespace with no network when the policy denies the network;
//! - when the engine is root: an unprivileged uid/gid (root ignores `RLIMIT_NPROC`), and pids and
//!   memory cgroups per child where cgroups are writable (a hard process limit that also finds
//!   descendants that left the process group; a memory limit whose OOM kills are reported
//!   exactly as [`Outcome::OutOfMemory`]);
//! - a seccomp filter denying syscalls a tool never needs (ptrace, mount, kexec, bpf, modules,
//!   the keyring, new user namespaces, ...);
//! - `PR_SET_PDEATHSIG`: the child gets `SIGKILL` when the engine dies.
//!
//! What is enforced on *this* machine is probed once: log [`platform_report`] at startup (its
//! line ends with `not_enforced=[...]`).
//!
//! The process limit is the child's own pids cgroup where one is available and the child runs
//! under the dropped uid (so it cannot leave the cgroup); otherwise `RLIMIT_NPROC` is set too.
//! `RLIMIT_NPROC` counts every process of a uid, so children sharing the dropped uid (default
//! 65534) would share that budget, and one child at its limit (a fork bomb) would make a
//! neighbour's `execve` fail with `EAGAIN`.
//!
//! # Example
//! ```no_run
//! use skillet_sandbox::{ProcessBackend, SandboxBackend, SandboxCommand, SandboxPolicy};
//! # async fn demo() {
//! let backend = ProcessBackend::new();
//! tracing::info!("{}", backend.platform_report());
//! let command = SandboxCommand::new("/usr/bin/jq", "/tmp/work").arg(".");
//! let result = backend.run(&command, &SandboxPolicy::default(), br#"{"a":1}"#.to_vec()).await;
//! if let Some(failure) = result.outcome.failure() {
//!     eprintln!("{} ({failure:?})", result.outcome);
//! }
//! # }
//! ```

#[cfg(not(unix))]
compile_error!("skillet-sandbox needs a unix platform (process groups, POSIX rlimits)");

mod backend;
mod capture;
mod error;
mod interactive;
#[cfg(all(target_os = "linux", feature = "linux-sandbox"))]
mod linux;
mod outcome;
mod platform;
mod policy;
mod process;
mod reduced;
mod rlimits;

pub use backend::{InteractiveOptions, RunResult, SandboxBackend, SandboxCommand};
pub use capture::CapturedOutput;
pub use error::SandboxError;
pub use interactive::{ChildReader, ChildWriter, ExitReport, InteractiveChild};
pub use outcome::{Failure, Outcome, Stream};
pub use platform::{Capability, PlatformReport, SandboxMode};
pub use policy::{
    ChildIdentity, Enforcement, EnvPolicy, FilesystemPolicy, NetworkAccess, ResourceLimits,
    SandboxPolicy,
};
pub use process::ProcessBackend;
pub use process::platform_report;
