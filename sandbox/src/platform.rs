//! What this platform can enforce, found by probing once per process, and its one-line report.
//!
//! Probes try the real thing rather than reading version numbers: the Landlock ABI comes from the
//! kernel, and namespace creation, the uid drop and the seccomp filter are attempted in a
//! short-lived forked child, because container runtimes and seccomp profiles deny them on kernels
//! that support them.
//! The policy decisions built on the report live in `process.rs`.
#![allow(unsafe_code)]

use std::fmt;
use std::sync::OnceLock;

use serde::Serialize;

use crate::cgroup::Cgroups;
use crate::policy::ChildIdentity;
use crate::seccomp::{SyscallFilter, syscall_filter};

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

/// What the Linux process backend enforces on this machine. Print it once at startup:
/// its `Display` is a single log line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlatformReport {
    /// Backend name.
    pub backend: &'static str,
    /// Whether the engine runs as root (then the uid drop or the cgroup bounds processes).
    pub running_as_root: bool,
    /// rlimits (address space, CPU, open files, processes, file size): always on Linux.
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
    /// Children get `SIGKILL` when the engine dies (`PR_SET_PDEATHSIG`): always on Linux.
    pub parent_death_signal: bool,
}

impl PlatformReport {
    /// True when a child cannot exceed its process limit: a pids cgroup, or `RLIMIT_NPROC` on a
    /// non-root uid (the engine's own when not root, or the dropped one).
    pub fn process_limit_enforced(&self) -> bool {
        self.cgroup_pids.is_available() || !self.running_as_root || self.uid_drop.is_available()
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
             cgroup_pids={} cgroup_memory={} seccomp={} pdeathsig={} process_limit={}",
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
        )
    }
}

/// The probed platform: the report plus the handles the backend needs.
#[derive(Debug)]
pub(crate) struct Platform {
    pub(crate) report: PlatformReport,
    pub(crate) cgroups: Cgroups,
    /// The syscall filter children install, when this platform accepts it.
    pub(crate) syscall_filter: Option<&'static SyscallFilter>,
}

/// Probes the platform once per process (the probes fork; the answer does not change).
pub(crate) fn platform() -> &'static Platform {
    static PLATFORM: OnceLock<Platform> = OnceLock::new();
    PLATFORM.get_or_init(probe)
}

/// What this platform enforces for the Linux process backend (probed once, then cached).
pub fn platform_report() -> &'static PlatformReport {
    &platform().report
}

fn probe() -> Platform {
    let running_as_root = rustix::process::geteuid().is_root();
    let network_namespace = match probe_in_child(if running_as_root {
        child_probe_netns_as_root
    } else {
        child_probe_netns_via_userns
    }) {
        Ok(()) if running_as_root => Capability::Available {
            detail: "unshare".into(),
        },
        Ok(()) => Capability::Available {
            detail: "user+net namespace".into(),
        },
        Err(reason) => Capability::Unavailable { reason },
    };
    let uid_drop = if running_as_root {
        match probe_in_child(child_probe_uid_drop) {
            Ok(()) => {
                let id = ChildIdentity::default();
                Capability::Available {
                    detail: format!("{}:{}", id.uid, id.gid),
                }
            }
            Err(reason) => Capability::Unavailable { reason },
        }
    } else {
        Capability::NotNeeded {
            reason: "not root".into(),
        }
    };
    let detection = Cgroups::detect();
    let as_capability = |found: Result<String, String>| match found {
        Ok(detail) => Capability::Available { detail },
        Err(reason) => Capability::Unavailable { reason },
    };
    let (seccomp, filter) = match syscall_filter() {
        Ok(filter) => match probe_in_child(child_probe_seccomp) {
            Ok(()) => (
                Capability::Available {
                    detail: format!("{} syscalls denied", filter.denied_count()),
                },
                Some(filter),
            ),
            Err(reason) => (Capability::Unavailable { reason }, None),
        },
        Err(reason) => (
            Capability::Unavailable {
                reason: reason.to_owned(),
            },
            None,
        ),
    };
    Platform {
        report: PlatformReport {
            backend: "linux-process",
            running_as_root,
            rlimits: true,
            landlock_abi: landlock_abi(),
            network_namespace,
            uid_drop,
            cgroup_pids: as_capability(detection.pids),
            cgroup_memory: as_capability(detection.memory),
            seccomp,
            parent_death_signal: true,
        },
        cgroups: detection.cgroups,
        syscall_filter: filter,
    }
}

/// The kernel's Landlock ABI version, or `None` (not built in, disabled at boot, or filtered).
fn landlock_abi() -> Option<u32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: landlock_create_ruleset with a null attribute, size 0 and the VERSION flag only
    // returns a number; it reads no memory.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(version).ok().filter(|v| *v > 0)
}

/// Runs `check` in a forked child; `Ok` when it returns 0, else the errno it returned.
fn probe_in_child(check: fn() -> libc::c_int) -> Result<(), String> {
    // SAFETY: the forked child of a possibly multi-threaded process may only make
    // async-signal-safe calls; `check` makes raw syscalls only and the child leaves by `_exit`,
    // without running destructors or touching locks held by other threads.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        let errno = check();
        // SAFETY: `_exit` is async-signal-safe and never returns.
        unsafe { libc::_exit(errno.clamp(0, 255)) };
    }
    let mut status = 0;
    loop {
        // SAFETY: waiting for our own child; `status` is a valid out-pointer.
        let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
        if waited == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("waitpid: {err}"));
        }
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        Ok(())
    } else if libc::WIFEXITED(status) {
        Err(std::io::Error::from_raw_os_error(libc::WEXITSTATUS(status)).to_string())
    } else {
        Err(format!("probe child died with wait status {status}"))
    }
}

fn last_errno() -> libc::c_int {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EINVAL)
}

fn child_probe_netns_as_root() -> libc::c_int {
    // SAFETY: a plain syscall on the calling (forked, single-threaded) process.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } == 0 {
        0
    } else {
        last_errno()
    }
}

fn child_probe_netns_via_userns() -> libc::c_int {
    // SAFETY: a plain syscall on the calling (forked, single-threaded) process.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) } == 0 {
        0
    } else {
        last_errno()
    }
}

/// Installs the filter (built in the parent before the fork) and checks a denied call fails.
fn child_probe_seccomp() -> libc::c_int {
    const KEYCTL_GET_KEYRING_ID: libc::c_long = 0;
    const KEY_SPEC_SESSION_KEYRING: libc::c_long = -3;
    let Ok(filter) = syscall_filter() else {
        return libc::ENOSYS;
    };
    if let Err(e) = filter.install() {
        return e.raw_os_error().unwrap_or(libc::EINVAL);
    }
    // SAFETY: keyctl with integer arguments only; the filter must answer EPERM.
    let result = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            KEYCTL_GET_KEYRING_ID,
            KEY_SPEC_SESSION_KEYRING,
            0,
        )
    };
    if result == -1 && last_errno() == libc::EPERM {
        0
    } else {
        libc::ENOTRECOVERABLE
    }
}

fn child_probe_uid_drop() -> libc::c_int {
    let id = ChildIdentity::default();
    // SAFETY: plain syscalls on the calling (forked, single-threaded) process; setgroups gets an
    // empty list.
    unsafe {
        if libc::setgroups(0, std::ptr::null()) != 0
            || libc::setgid(id.gid) != 0
            || libc::setuid(id.uid) != 0
        {
            return last_errno();
        }
        // Root must not be able to come back: that is what makes the drop a boundary.
        if libc::setuid(0) == 0 {
            return libc::EPERM;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

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
        ] {
            assert!(line.contains(key), "{key} missing in {line}");
        }
    }
}
