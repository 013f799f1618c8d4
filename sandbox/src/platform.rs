//! What a sandbox mode enforces on this machine, as data, and its one-line report.
//!
//! Portable: the report has the same shape in every mode and on every platform, so callers read
//! one type. The Linux sandbox fills it by probing (`linux/probe.rs`); the reduced mode
//! (`reduced.rs`) states its fixed gaps. [`PlatformReport::not_enforced`] names, in plain words,
//! what the mode does *not* enforce here, and the one-line `Display` ends with that list.

use std::fmt;

use serde::Serialize;

/// Which confinement a [`crate::ProcessBackend`] applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxMode {
    /// The Linux sandbox: rlimits, Landlock, network namespace, uid drop, cgroups, seccomp,
    /// parent-death signal, as far as the machine allows (compiled only on Linux with the
    /// `linux-sandbox` feature).
    Linux,
    /// The reduced mode: no shell, own process group, clean environment, working directory,
    /// wall clock, output caps, kill of the group at the end, POSIX rlimits. Nothing else: see
    /// [`PlatformReport::not_enforced`].
    Reduced,
}

impl SandboxMode {
    /// The strongest mode this build has: [`SandboxMode::Linux`] on Linux with the
    /// `linux-sandbox` feature, else [`SandboxMode::Reduced`].
    pub const fn compiled() -> Self {
        if cfg!(all(target_os = "linux", feature = "linux-sandbox")) {
            SandboxMode::Linux
        } else {
            SandboxMode::Reduced
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SandboxMode::Linux => "linux",
            SandboxMode::Reduced => "reduced",
        })
    }
}

/// Whether one isolation feature works here, and why (not).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Capability {
    /// The feature works and is used.
    Available {
        /// Which variant is used (e.g. the cgroup version and path).
        detail: String,
    },
    /// The feature is not needed in this configuration (e.g. the uid drop when not root).
    NotNeeded {
        /// Why not.
        reason: String,
    },
    /// The feature does not work here; the sandbox runs without it.
    Unavailable {
        /// What failed.
        reason: String,
    },
}

impl Capability {
    /// True for [`Capability::Available`].
    pub fn is_available(&self) -> bool {
        matches!(self, Capability::Available { .. })
    }

    fn short(&self) -> String {
        match self {
            Capability::Available { detail } if detail.is_empty() => "yes".into(),
            Capability::Available { detail } => format!("yes({detail})"),
            Capability::NotNeeded { reason } => format!("not-needed({reason})"),
            Capability::Unavailable { reason } => format!("no({reason})"),
        }
    }
}

/// What a sandbox mode enforces on this machine. Print it once at startup: its `Display` is a
/// single log line, ending with what is not enforced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlatformReport {
    /// Backend name (`linux-process`, `reduced-process`).
    pub backend: &'static str,
    /// The mode this report describes.
    pub mode: SandboxMode,
    /// Whether the engine runs as root (then the uid drop or the cgroup bounds processes).
    pub running_as_root: bool,
    /// rlimits (address space, CPU, open files, processes, file size): on every unix.
    pub rlimits: bool,
    /// The Landlock ABI version the kernel offers, `None` when Landlock is unavailable.
    pub landlock_abi: Option<u32>,
    /// A fresh network namespace (no network) for children that are denied the network.
    pub network_namespace: Capability,
    /// Children of a root engine run as an unprivileged uid/gid.
    pub uid_drop: Capability,
    /// Each child gets its own pids cgroup (hard process limit, and leftovers are found and
    /// killed even when they left the process group).
    pub cgroup_pids: Capability,
    /// Each child gets its own memory cgroup: a limit on the resident memory of the child and
    /// all its descendants, and an exact out-of-memory verdict (the kernel's OOM-kill counter).
    /// Without it, out-of-memory is recognised from stderr (see [`crate::Outcome`]).
    pub cgroup_memory: Capability,
    /// The seccomp filter denying syscalls a tool never needs (ptrace, mount, kexec, bpf, keyring,
    /// new user namespaces, ...).
    pub seccomp: Capability,
    /// Children get `SIGKILL` when the engine dies (`PR_SET_PDEATHSIG`): the Linux sandbox only.
    pub parent_death_signal: bool,
}

impl PlatformReport {
    /// True when a child cannot exceed its process limit: a pids cgroup, or `RLIMIT_NPROC` on a
    /// non-root uid (the engine's own when not root, or the dropped one).
    pub fn process_limit_enforced(&self) -> bool {
        self.cgroup_pids.is_available() || !self.running_as_root || self.uid_drop.is_available()
    }

    /// What is *not* enforced here, in plain words (empty when everything is). The reduced mode
    /// always lists the filesystem, network, syscall filter, memory limit and parent-death kill.
    pub fn not_enforced(&self) -> Vec<&'static str> {
        let mut gaps = Vec::new();
        let mut gap = |missing: bool, what| {
            if missing {
                gaps.push(what);
            }
        };
        gap(!self.rlimits, "rlimits");
        gap(self.landlock_abi.is_none(), "filesystem confinement");
        gap(!self.network_namespace.is_available(), "network isolation");
        gap(!self.seccomp.is_available(), "syscall filter");
        gap(
            self.running_as_root && !self.uid_drop.is_available(),
            "unprivileged uid",
        );
        gap(!self.process_limit_enforced(), "process limit");
        gap(!self.cgroup_memory.is_available(), "memory cgroup");
        gap(!self.parent_death_signal, "kill on engine death");
        gaps
    }
}

impl fmt::Display for PlatformReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let landlock = match self.landlock_abi {
            Some(abi) => format!("abi{abi}"),
            None => "no".into(),
        };
        write!(
            f,
            "sandbox platform: backend={} root={} rlimits={} landlock={} netns={} uid_drop={} \
             cgroup_pids={} cgroup_memory={} seccomp={} pdeathsig={} process_limit={} \
             not_enforced={}",
            self.backend,
            if self.running_as_root { "yes" } else { "no" },
            if self.rlimits { "yes" } else { "no" },
            landlock,
            self.network_namespace.short(),
            self.uid_drop.short(),
            self.cgroup_pids.short(),
            self.cgroup_memory.short(),
            self.seccomp.short(),
            if self.parent_death_signal {
                "yes"
            } else {
                "no"
            },
            if self.process_limit_enforced() {
                "enforced"
            } else {
                "NOT-ENFORCED"
            },
            match self.not_enforced() {
                gaps if gaps.is_empty() => "none".to_owned(),
                gaps => format!("[{}]", gaps.join(", ")),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::process::platform_report;

    #[test]
    fn report_is_one_line_naming_every_feature() {
        let line = platform_report().to_string();
        assert!(!line.contains('\n'), "{line}");
        for key in [
            "landlock=",
            "netns=",
            "uid_drop=",
            "cgroup_pids=",
            "cgroup_memory=",
            "seccomp=",
            "pdeathsig=",
            "process_limit=",
            "not_enforced=",
        ] {
            assert!(line.contains(key), "{key} missing in {line}");
        }
    }
}
