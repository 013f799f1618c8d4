//! The POSIX resource limits (`setrlimit(2)`) a child sets on itself before `exec`: the one
//! confinement every unix has, shared by the Linux sandbox and the reduced mode.
//!
//! The list is built in the parent ([`rlimits_for`]); [`apply`] runs in the forked child and
//! makes one `setrlimit` syscall per entry on that prepared data (no allocation, no locks).
//! Resources a platform lacks (`RLIMIT_AS` on OpenBSD, `RLIMIT_NPROC` on illumos/Solaris) are
//! left out there.

use std::io;

use rustix::process::{Resource, Rlimit as Values, setrlimit};

use crate::policy::ResourceLimits;

/// One rlimit to set: the resource and its (soft, hard) values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rlimit {
    pub(crate) resource: Resource,
    pub(crate) soft: u64,
    pub(crate) hard: u64,
}

/// The rlimits for `limits`, plus `RLIMIT_CORE = 0`.
///
/// `pids_cgroup`: the child's own pids cgroup caps its processes, and the child cannot leave it
/// (it runs as the dropped uid). `RLIMIT_NPROC` is then left out: it counts every process of the
/// uid, and every sandboxed child shares the dropped uid, so one child at its limit (a fork bomb)
/// would make its neighbours' `execve` fail with `EAGAIN`.
pub(crate) fn rlimits_for(limits: &ResourceLimits, pids_cgroup: bool) -> Vec<Rlimit> {
    let mut out = Vec::new();
    let mut push = |resource, value: Option<u64>, extra_hard: u64| {
        if let Some(v) = value {
            out.push(Rlimit {
                resource,
                soft: v,
                hard: v.saturating_add(extra_hard),
            });
        }
    };
    #[cfg(not(target_os = "openbsd"))]
    push(Resource::As, limits.address_space_bytes, 0);
    push(Resource::Cpu, limits.cpu_seconds, 1);
    push(Resource::Nofile, limits.open_files, 0);
    #[cfg(not(any(target_os = "solaris", target_os = "illumos")))]
    if !pids_cgroup {
        push(Resource::Nproc, limits.processes, 0);
    }
    #[cfg(any(target_os = "solaris", target_os = "illumos"))]
    let _ = pids_cgroup;
    push(Resource::Fsize, limits.file_size_bytes, 0);
    // No core dumps: they would land in the working directory and take time and space.
    push(Resource::Core, Some(0), 0);
    out
}

/// Sets every limit on the calling process. Async-signal-safe: one syscall per entry, on data
/// prepared before the fork, so it may run between `fork` and `exec`.
pub(crate) fn apply(rlimits: &[Rlimit]) -> io::Result<()> {
    for limit in rlimits {
        let values = Values {
            current: Some(limit.soft),
            maximum: Some(limit.hard),
        };
        setrlimit(limit.resource, values)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(limits: &[Rlimit], resource: Resource) -> bool {
        limits.iter().any(|l| l.resource == resource)
    }

    #[test]
    fn the_process_rlimit_is_left_to_a_pids_cgroup_when_the_child_has_one() {
        let limits = ResourceLimits {
            processes: Some(8),
            ..ResourceLimits::default()
        };
        assert!(has(&rlimits_for(&limits, false), Resource::Nproc));
        assert!(!has(&rlimits_for(&limits, true), Resource::Nproc));
        let core = |l: &[Rlimit]| {
            l.iter()
                .any(|l| l.resource == Resource::Core && l.hard == 0)
        };
        assert!(core(&rlimits_for(&limits, true)) && core(&rlimits_for(&limits, false)));
    }

    #[test]
    fn cpu_time_gets_one_second_of_grace_before_the_hard_limit() {
        let limits = ResourceLimits {
            cpu_seconds: Some(5),
            ..ResourceLimits::default()
        };
        let cpu = rlimits_for(&limits, false)
            .into_iter()
            .find(|l| l.resource == Resource::Cpu)
            .expect("cpu limit");
        assert_eq!((cpu.soft, cpu.hard), (5, 6));
    }
}
