//! What the Linux sandbox can enforce on this machine, found by probing once per process.
//!
//! Probes try the real thing rather than reading version numbers: the Landlock ABI comes from the
//! kernel, and namespace creation, the uid drop and the seccomp filter are attempted in a
//! short-lived forked child, because container runtimes and seccomp profiles deny them on kernels
//! that support them. The report's type and its one-line form are portable (`platform.rs`); the
//! policy decisions built on it live in `linux/mod.rs`.
#![allow(unsafe_code)]

use std::sync::OnceLock;

use super::cgroup::Cgroups;
use super::seccomp::{SyscallFilter, syscall_filter};
use crate::platform::{Capability, PlatformReport, SandboxMode};
use crate::policy::ChildIdentity;

/// The probed Linux platform: the report plus the handles the backend needs.
#[derive(Debug)]
pub(crate) struct LinuxPlatform {
    pub(crate) report: PlatformReport,
    pub(crate) cgroups: Cgroups,
    /// The syscall filter children install, when this platform accepts it.
    pub(crate) syscall_filter: Option<&'static SyscallFilter>,
}

/// Probes the platform once per process (the probes fork; the answer does not change).
pub(crate) fn platform() -> &'static LinuxPlatform {
    static PLATFORM: OnceLock<LinuxPlatform> = OnceLock::new();
    PLATFORM.get_or_init(probe)
}

fn probe() -> LinuxPlatform {
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
    LinuxPlatform {
        report: PlatformReport {
            backend: "linux-process",
            mode: SandboxMode::Linux,
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
