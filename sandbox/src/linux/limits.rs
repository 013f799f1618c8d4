//! The confinement a child applies to itself between `fork` and `exec` (`pre_exec`).
//!
//! Everything that allocates or decides is prepared in the parent ([`ChildSetup`] is plain,
//! pre-built data); [`ChildSetup::apply`] runs in the forked child of a multi-threaded engine and
//! therefore makes raw, async-signal-safe syscalls only: no allocation, no locks, no logging.
//!
//! Order matters and is fixed here:
//! 1. join the pids and memory cgroups (needs root's write access to `cgroup.procs`, and must
//!    precede any fork or allocation);
//! 2. enter a new network namespace (needs `CAP_SYS_ADMIN`, or a user namespace when not root);
//! 3. set rlimits;
//! 4. drop to the unprivileged uid/gid (after which 1–2 would be refused);
//! 5. ask for `SIGKILL` when the engine dies (`PR_SET_PDEATHSIG`; after the uid drop, which
//!    clears it), and exit if the engine already died before that;
//! 6. `PR_SET_NO_NEW_PRIVS`, then restrict itself with the prepared Landlock ruleset (late, so
//!    the steps above may still touch `/proc` and `/sys`);
//! 7. install the seccomp filter (`seccomp.rs`; after the steps that need `unshare`);
//! 8. mark every inherited descriptor above stderr close-on-exec.
//!
//! The process group is set by `Command::process_group(0)` before this runs.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;

use super::seccomp::SyscallFilter;
use crate::rlimits::{self, Rlimit};

/// How the child enters a network namespace.
#[derive(Debug)]
pub(crate) enum NetworkIsolation {
    /// Keep the engine's network.
    None,
    /// `unshare(CLONE_NEWNET)` (root).
    NetNamespace,
    /// `unshare(CLONE_NEWUSER | CLONE_NEWNET)` and map the engine's uid/gid to themselves, so
    /// files the child creates keep their owner (not root).
    UserAndNetNamespace { uid_map: Vec<u8>, gid_map: Vec<u8> },
}

/// Everything [`ChildSetup::apply`] needs, prepared in the parent.
#[derive(Debug)]
pub(crate) struct ChildSetup {
    /// The `cgroup.procs` files to join (one per cgroup hierarchy).
    pub(crate) cgroup_procs: Vec<CString>,
    pub(crate) network: NetworkIsolation,
    pub(crate) rlimits: Vec<Rlimit>,
    /// (uid, gid) to drop to.
    pub(crate) drop_to: Option<(u32, u32)>,
    /// A Landlock ruleset descriptor, kept open by the parent until the spawn returns.
    pub(crate) landlock_ruleset: Option<RawFd>,
    /// The engine's pid: the child is killed when the engine (precisely, the thread that spawned
    /// it) dies, and refuses to start if it already has.
    pub(crate) parent_death: Option<libc::pid_t>,
    /// The syscall filter to install last.
    pub(crate) syscall_filter: Option<&'static SyscallFilter>,
}

// Paths used by the user-namespace setup, as C strings built at compile time.
const PROC_SETGROUPS: &[u8] = b"/proc/self/setgroups\0";
const PROC_UID_MAP: &[u8] = b"/proc/self/uid_map\0";
const PROC_GID_MAP: &[u8] = b"/proc/self/gid_map\0";

impl ChildSetup {
    /// Applies the confinement to the calling process. Runs in the forked child only.
    ///
    /// # Safety
    /// Must only be called between `fork` and `exec` (it changes process-wide credentials and
    /// limits); it makes only async-signal-safe syscalls and reads only memory prepared before
    /// the fork.
    pub(crate) unsafe fn apply(&self) -> io::Result<()> {
        for procs in &self.cgroup_procs {
            // SAFETY: `procs` is a NUL-terminated path prepared in the parent.
            unsafe { write_file(procs.as_ptr(), b"0")? };
        }
        match &self.network {
            NetworkIsolation::None => {}
            NetworkIsolation::NetNamespace => {
                // SAFETY: plain syscall on the calling process.
                check(unsafe { libc::unshare(libc::CLONE_NEWNET) })?;
            }
            NetworkIsolation::UserAndNetNamespace { uid_map, gid_map } => {
                // SAFETY: plain syscall; the map files are written with prepared bytes only.
                unsafe {
                    check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET))?;
                    write_file(PROC_SETGROUPS.as_ptr().cast(), b"deny")?;
                    write_file(PROC_UID_MAP.as_ptr().cast(), uid_map)?;
                    write_file(PROC_GID_MAP.as_ptr().cast(), gid_map)?;
                }
            }
        }
        rlimits::apply(&self.rlimits)?;
        if let Some((uid, gid)) = self.drop_to {
            // SAFETY: plain credential syscalls; setgroups gets an empty list. setgid before
            // setuid, since an unprivileged uid may no longer change its gid.
            unsafe {
                check(libc::setgroups(0, std::ptr::null()))?;
                check(libc::setgid(gid))?;
                check(libc::setuid(uid))?;
            }
        }
        if let Some(engine) = self.parent_death {
            // SAFETY: prctl with integer arguments only; getppid cannot fail.
            unsafe {
                check(libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                ))?;
                // The engine died between fork and prctl: the signal will never come.
                if libc::getppid() != engine {
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
            }
        }
        // SAFETY: prctl with integer arguments only.
        check(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) })?;
        if let Some(fd) = self.landlock_ruleset {
            // SAFETY: landlock_restrict_self takes a descriptor and flags; `fd` is a ruleset the
            // parent holds open across the fork.
            let restricted = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) };
            if restricted != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        if let Some(filter) = self.syscall_filter {
            filter.install()?;
        }
        // Best effort: descriptors some library leaked without O_CLOEXEC must not reach the
        // child program. Kernels before 5.11 lack the flag; the std-created ones are CLOEXEC.
        // SAFETY: close_range with integer arguments only.
        unsafe {
            libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            )
        };
        Ok(())
    }
}

fn check(result: libc::c_int) -> io::Result<()> {
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Writes `bytes` to the existing file at `path` with raw syscalls.
///
/// # Safety
/// `path` must be a NUL-terminated string valid for the duration of the call.
unsafe fn write_file(path: *const libc::c_char, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated per the contract; `bytes` is a valid slice.
    unsafe {
        let fd = libc::open(path, libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if written != bytes.len() as isize {
            return Err(err);
        }
    }
    Ok(())
}

/// The `uid_map` / `gid_map` line mapping `id` to itself.
pub(crate) fn identity_map(id: u32) -> Vec<u8> {
    format!("{id} {id} 1\n").into_bytes()
}
