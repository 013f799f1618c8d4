//! The Linux sandbox: the confinement a child gets on top of the reduced mode's, on kernel
//! primitives only. Compiled only on Linux with the `linux-sandbox` feature.
//!
//! Here the policy meets the probed platform (`probe.rs`): [`confine`] decides which isolation to
//! apply (and refuses a strict policy it cannot honour), prepares everything the child needs
//! (`limits.rs` for the steps between fork and exec, `landlock.rs`, `cgroup.rs`, `seccomp.rs`)
//! and hands back what must live beside the child ([`Held`]: its cgroups and Landlock ruleset).
//! Running and supervising the child is shared with the reduced mode (`process.rs`).

mod cgroup;
mod landlock;
mod limits;
mod probe;
mod seccomp;

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

use tokio::process::Command;

use self::cgroup::{CgroupLimits, ChildCgroups};
use self::landlock::FilesystemRules;
use self::limits::{ChildSetup, NetworkIsolation, identity_map};
pub(crate) use self::probe::{LinuxPlatform, platform};
use crate::error::SandboxError;
use crate::platform::PlatformReport;
use crate::policy::{Enforcement, NetworkAccess, SandboxPolicy};
use crate::rlimits::rlimits_for;

/// What lives beside a child of the Linux sandbox: its cgroups (killed and removed with it, and
/// asked for OOM kills) and the Landlock ruleset descriptor (needed only until the spawn).
#[derive(Debug)]
pub(crate) struct Held {
    cgroups: Option<ChildCgroups>,
    ruleset: Option<OwnedFd>,
}

impl Held {
    /// Closes what the child needed only to start (its Landlock ruleset descriptor).
    pub(crate) fn spawned(&mut self) {
        self.ruleset = None;
    }

    /// Kills every process left in the child's cgroups (also those that left its group).
    pub(crate) fn kill_all(&self) {
        if let Some(cgroups) = &self.cgroups {
            cgroups.kill_all();
        }
    }

    /// True when the memory cgroup saw the kernel OOM-kill one of the child's processes.
    pub(crate) fn oom_killed(&self) -> bool {
        self.cgroups.as_ref().is_some_and(ChildCgroups::oom_killed)
    }
}

/// Adds the Linux confinement for `policy` to `command` (whose program and working directory are
/// the resolved `program` and `workdir`): uid drop, Landlock, network namespace, cgroups,
/// rlimits, parent-death signal and seccomp, each where `platform` has it.
pub(crate) fn confine(
    platform: &'static LinuxPlatform,
    command: &mut Command,
    policy: &SandboxPolicy,
    program: &Path,
    workdir: &Path,
) -> Result<Held, SandboxError> {
    let report = &platform.report;
    let deny_network = policy.network == NetworkAccess::Deny;
    if policy.enforcement == Enforcement::Strict {
        check_strict(report, deny_network)?;
    }

    let drop_to = (report.running_as_root && report.uid_drop.is_available())
        .then_some((policy.identity.uid, policy.identity.gid));
    if let Some((uid, gid)) = drop_to {
        std::os::unix::fs::chown(workdir, Some(uid), Some(gid)).map_err(|e| {
            SandboxError::Workdir {
                path: workdir.to_path_buf(),
                detail: format!("chown: {e}"),
            }
        })?;
    }

    let ruleset = match report.landlock_abi {
        Some(_) => FilesystemRules::resolve(&policy.filesystem, workdir, program)?
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

    let cgroups = if platform.cgroups.is_empty() {
        None
    } else {
        let limits = CgroupLimits {
            max_pids: policy.limits.processes,
            max_memory_bytes: policy.limits.memory_bytes,
        };
        match platform.cgroups.create_child(limits) {
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
        syscall_filter: platform.syscall_filter,
    };
    // SAFETY: `ChildSetup::apply` runs between fork and exec and makes only async-signal-safe
    // syscalls on data prepared above (see limits.rs).
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || setup.apply());
    }
    Ok(Held { cgroups, ruleset })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::{Capability, SandboxMode};

    #[test]
    fn strict_policy_names_every_missing_feature() {
        let report = PlatformReport {
            backend: "linux-process",
            mode: SandboxMode::Linux,
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
}
