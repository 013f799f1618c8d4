//! The syscall filter every sandboxed child installs before `exec`: a deny list of what a tool
//! never needs.
//!
//! A tool reads stdin, computes, writes stdout and files in its directory. It never needs to debug
//! other processes, load kernel code or modules, mount filesystems, create user namespaces (the
//! usual first step of a kernel exploit), touch the kernel keyring, or set the clock. Those calls
//! fail with `EPERM` ([`DENIED_SYSCALLS`], plus `clone`/`unshare` with `CLONE_NEWUSER`);
//! everything else is allowed, so ordinary programs and runtimes keep working.
//!
//! Two programs are installed, built here with `seccompiler` and by hand:
//! - the deny list (`seccompiler` also kills a process that calls in with a foreign architecture,
//!   e.g. 32-bit `int 0x80` syscalls on x86_64, whose numbers differ);
//! - a guard answering `ENOSYS` to `clone3` (its flags sit behind a pointer a filter cannot read,
//!   so libc falls back to `clone`, whose flags are checked) and, on x86_64, to every x32-ABI
//!   syscall (same architecture tag, numbers offset by `0x4000_0000`, not in the deny list).
//!
//! Not here: when the filter is installed (`limits.rs`, last step before `exec`) and whether this
//! platform supports it (`platform.rs` probes it in a forked child).
#![allow(unsafe_code)]

use std::collections::BTreeMap;
use std::io;
use std::sync::OnceLock;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

/// Syscalls denied outright, by name (for the report and docs) and number.
pub(crate) const DENIED_SYSCALLS: &[(&str, libc::c_long)] = &[
    // other processes' memory and control
    ("ptrace", libc::SYS_ptrace),
    ("process_vm_readv", libc::SYS_process_vm_readv),
    ("process_vm_writev", libc::SYS_process_vm_writev),
    // kernel code, modules, power
    ("kexec_load", libc::SYS_kexec_load),
    ("kexec_file_load", libc::SYS_kexec_file_load),
    ("init_module", libc::SYS_init_module),
    ("finit_module", libc::SYS_finit_module),
    ("delete_module", libc::SYS_delete_module),
    ("reboot", libc::SYS_reboot),
    ("bpf", libc::SYS_bpf),
    ("perf_event_open", libc::SYS_perf_event_open),
    ("userfaultfd", libc::SYS_userfaultfd),
    // filesystems and namespaces
    ("mount", libc::SYS_mount),
    ("umount2", libc::SYS_umount2),
    ("pivot_root", libc::SYS_pivot_root),
    ("chroot", libc::SYS_chroot),
    ("setns", libc::SYS_setns),
    ("fsopen", libc::SYS_fsopen),
    ("fsconfig", libc::SYS_fsconfig),
    ("fsmount", libc::SYS_fsmount),
    ("fspick", libc::SYS_fspick),
    ("move_mount", libc::SYS_move_mount),
    ("open_tree", libc::SYS_open_tree),
    ("open_by_handle_at", libc::SYS_open_by_handle_at),
    ("swapon", libc::SYS_swapon),
    ("swapoff", libc::SYS_swapoff),
    ("quotactl", libc::SYS_quotactl),
    ("acct", libc::SYS_acct),
    // kernel keyring
    ("keyctl", libc::SYS_keyctl),
    ("add_key", libc::SYS_add_key),
    ("request_key", libc::SYS_request_key),
    // system-wide state
    ("settimeofday", libc::SYS_settimeofday),
    ("clock_settime", libc::SYS_clock_settime),
    ("clock_adjtime", libc::SYS_clock_adjtime),
    ("adjtimex", libc::SYS_adjtimex),
    ("sethostname", libc::SYS_sethostname),
    ("setdomainname", libc::SYS_setdomainname),
    ("syslog", libc::SYS_syslog),
    ("vhangup", libc::SYS_vhangup),
    #[cfg(target_arch = "x86_64")]
    ("iopl", libc::SYS_iopl),
    #[cfg(target_arch = "x86_64")]
    ("ioperm", libc::SYS_ioperm),
    #[cfg(target_arch = "x86_64")]
    ("uselib", libc::SYS_uselib),
];

/// Syscalls denied only when their flags (argument 0) ask for a new user namespace.
const DENIED_WITH_NEW_USER_NAMESPACE: &[(&str, libc::c_long)] =
    &[("clone", libc::SYS_clone), ("unshare", libc::SYS_unshare)];

/// The compiled filter programs, built once in the parent so the child only installs them.
#[derive(Debug)]
pub(crate) struct SyscallFilter {
    deny_list: BpfProgram,
    guard: BpfProgram,
}

/// The filter for this architecture, built on first use; the error says why there is none.
pub(crate) fn syscall_filter() -> Result<&'static SyscallFilter, &'static str> {
    static FILTER: OnceLock<Result<SyscallFilter, String>> = OnceLock::new();
    FILTER
        .get_or_init(SyscallFilter::build)
        .as_ref()
        .map_err(String::as_str)
}

impl SyscallFilter {
    fn build() -> Result<Self, String> {
        let arch = TargetArch::try_from(std::env::consts::ARCH)
            .map_err(|e| format!("no seccomp filter for this architecture: {e}"))?;
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = DENIED_SYSCALLS
            .iter()
            .map(|&(_, nr)| (nr, Vec::new()))
            .collect();
        let new_user_namespace = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(libc::CLONE_NEWUSER as u64),
            libc::CLONE_NEWUSER as u64,
        )
        .and_then(|condition| SeccompRule::new(vec![condition]))
        .map_err(|e| format!("seccomp rule: {e}"))?;
        for &(_, nr) in DENIED_WITH_NEW_USER_NAMESPACE {
            rules.insert(nr, vec![new_user_namespace.clone()]);
        }
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM as u32),
            arch,
        )
        .map_err(|e| format!("seccomp filter: {e}"))?;
        let deny_list = BpfProgram::try_from(filter).map_err(|e| format!("seccomp bpf: {e}"))?;
        Ok(Self {
            deny_list,
            guard: guard_program(),
        })
    }

    /// How many syscalls are denied (outright or with `CLONE_NEWUSER`), for the report.
    pub(crate) fn denied_count(&self) -> usize {
        DENIED_SYSCALLS.len() + DENIED_WITH_NEW_USER_NAMESPACE.len()
    }

    /// Installs both programs on the calling thread (and so on the program it `exec`s).
    /// Sets `PR_SET_NO_NEW_PRIVS`, which an unprivileged process needs for seccomp.
    ///
    /// Async-signal-safe: no allocation (the programs are pre-built; `seccompiler::apply_filter`
    /// makes two raw syscalls with a stack-allocated descriptor), so it may run in `pre_exec`.
    pub(crate) fn install(&self) -> io::Result<()> {
        for program in [&self.guard, &self.deny_list] {
            seccompiler::apply_filter(program).map_err(|e| match e {
                seccompiler::Error::Prctl(e) | seccompiler::Error::Seccomp(e) => e,
                _ => io::Error::from_raw_os_error(libc::EINVAL),
            })?;
        }
        Ok(())
    }
}

// Classic BPF opcodes and seccomp_data offsets (linux/filter.h, linux/seccomp.h).
/// `BPF_LD | BPF_W | BPF_ABS` (the first two are 0).
const BPF_LD_W_ABS: u16 = 0x20;
/// `BPF_JMP | BPF_JEQ | BPF_K`.
const BPF_JMP_JEQ_K: u16 = 0x15;
/// `BPF_JMP | BPF_JGE | BPF_K`.
#[cfg(target_arch = "x86_64")]
const BPF_JMP_JGE_K: u16 = 0x35;
const BPF_RET_K: u16 = 0x06;
const SECCOMP_DATA_NR: u32 = 0;

fn statement(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// `ENOSYS` for `clone3` and (x86_64) x32-ABI syscalls; everything else passes to the deny list.
/// Foreign architectures are left to the deny list, which kills them.
fn guard_program() -> BpfProgram {
    let enosys = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
    let mut program = vec![statement(BPF_LD_W_ABS, SECCOMP_DATA_NR)];
    #[cfg(target_arch = "x86_64")]
    {
        const X32_SYSCALL_BIT: u32 = 0x4000_0000;
        // nr >= X32 bit → skip 0 → return ENOSYS (two instructions below: the clone3 check
        // jumps there too).
        program.push(jump(BPF_JMP_JGE_K, X32_SYSCALL_BIT, 1, 0));
    }
    program.extend([
        jump(BPF_JMP_JEQ_K, libc::SYS_clone3 as u32, 0, 1),
        statement(BPF_RET_K, enosys),
        statement(BPF_RET_K, libc::SECCOMP_RET_ALLOW),
    ]);
    program
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_builds_for_this_architecture() {
        let filter = syscall_filter().expect("filter builds");
        assert!(filter.denied_count() >= 30);
        assert!(!filter.deny_list.is_empty());
    }

    #[test]
    fn guard_jumps_stay_inside_the_program() {
        let program = guard_program();
        for (i, instruction) in program.iter().enumerate() {
            if instruction.code & 0x07 != 0x05 {
                continue; // not a jump
            }
            let end = i + 1 + usize::from(instruction.jt.max(instruction.jf));
            assert!(end < program.len(), "instruction {i} jumps past the end");
        }
        assert_eq!(program.last().map(|i| i.code), Some(BPF_RET_K));
    }

    #[test]
    fn no_syscall_is_listed_twice() {
        let mut numbers: Vec<_> = DENIED_SYSCALLS
            .iter()
            .chain(DENIED_WITH_NEW_USER_NAMESPACE)
            .map(|&(_, nr)| nr)
            .collect();
        numbers.sort_unstable();
        let before = numbers.len();
        numbers.dedup();
        assert_eq!(before, numbers.len());
    }
}
