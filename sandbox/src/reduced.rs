//! The reduced mode: what the sandbox still guarantees where the Linux sandbox is not compiled in
//! (other unixes, or the `linux-sandbox` feature off), and on Linux when chosen with
//! [`crate::ProcessBackend::reduced`] (how the tests exercise it on every CI run).
//!
//! Kept, from the shared supervisor (`process.rs`): no shell (the resolved program is `exec`ed),
//! an own process group killed when the run ends, times out, overflows or is dropped, a clean
//! environment from the allow-list, the working directory, the wall clock and output caps. Added
//! here: the POSIX rlimits (`rlimits.rs`), set by the child on itself before `exec`.
//!
//! Not enforced, and said so in [`report`]: filesystem confinement, network isolation, the
//! syscall filter, the uid drop, cgroups (so `memory_bytes` is ignored, the process limit is
//! `RLIMIT_NPROC` only — per uid, and ignored for root — and descendants that leave the process
//! group survive it), and the kill on engine death. A strict policy is refused: it asks for
//! exactly what this mode lacks.

use std::sync::OnceLock;

use tokio::process::Command;

use crate::error::SandboxError;
use crate::platform::{Capability, PlatformReport, SandboxMode};
use crate::policy::{Enforcement, SandboxPolicy};
use crate::rlimits::{self, rlimits_for};

/// The reduced mode's report (its gaps are fixed; only `running_as_root` is read from the OS).
pub(crate) fn report() -> &'static PlatformReport {
    static REPORT: OnceLock<PlatformReport> = OnceLock::new();
    REPORT.get_or_init(|| {
        let running_as_root = rustix::process::geteuid().is_root();
        let absent = || Capability::Unavailable {
            reason: "reduced mode".into(),
        };
        PlatformReport {
            backend: "reduced-process",
            mode: SandboxMode::Reduced,
            running_as_root,
            rlimits: true,
            landlock_abi: None,
            network_namespace: absent(),
            uid_drop: if running_as_root {
                absent()
            } else {
                Capability::NotNeeded {
                    reason: "not root".into(),
                }
            },
            cgroup_pids: absent(),
            cgroup_memory: absent(),
            seccomp: absent(),
            parent_death_signal: false,
        }
    })
}

/// Adds the reduced mode's confinement (the rlimits) to `command`, or refuses a strict policy.
pub(crate) fn confine(command: &mut Command, policy: &SandboxPolicy) -> Result<(), SandboxError> {
    if policy.enforcement == Enforcement::Strict {
        return Err(SandboxError::NotEnforceable {
            detail: format!("reduced mode: {}", report().not_enforced().join(", ")),
        });
    }
    let limits = rlimits_for(&policy.limits, false);
    // SAFETY: `rlimits::apply` runs between fork and exec and makes one setrlimit syscall per
    // entry on the list prepared above; it allocates nothing and takes no lock.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || rlimits::apply(&limits));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reduced_report_names_every_gap_plainly() {
        let report = report();
        assert_eq!(report.mode, SandboxMode::Reduced);
        let gaps = report.not_enforced();
        for gap in [
            "filesystem confinement",
            "network isolation",
            "syscall filter",
            "memory cgroup",
            "kill on engine death",
        ] {
            assert!(gaps.contains(&gap), "{gap} missing in {gaps:?}");
        }
        assert!(!gaps.contains(&"rlimits"), "{gaps:?}");
        let line = report.to_string();
        assert!(line.contains("backend=reduced-process"), "{line}");
        assert!(line.contains("filesystem confinement"), "{line}");
    }
}
