//! The sandbox's last lines of defence, each proven with a real child: the seccomp filter, the
//! memory cgroup's exact out-of-memory verdict, and children dying with a crashed engine.
//! Where this platform lacks a feature, the test checks that the platform report says so and
//! prints a notice instead of passing silently.

#![cfg(all(target_os = "linux", feature = "linux-sandbox"))]

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use skillet_sandbox::{
    Capability, Outcome, ProcessBackend, RunResult, SandboxBackend, SandboxCommand, SandboxPolicy,
    platform_report,
};

const CHILD: &str = env!("CARGO_BIN_EXE_sandbox-test-child");
const PARENT: &str = env!("CARGO_BIN_EXE_sandbox-test-parent");

async fn run(policy: &SandboxPolicy, args: &[&str], stdin: &[u8]) -> RunResult {
    let dir = tempfile::tempdir().expect("tempdir");
    let command = SandboxCommand::new(CHILD, dir.path()).args(args);
    ProcessBackend::new()
        .run(&command, policy, stdin.to_vec())
        .await
}

fn unavailable_notice(feature: &str, capability: &Capability) -> bool {
    match capability {
        Capability::Available { .. } => false,
        other => {
            assert!(
                !platform_report()
                    .to_string()
                    .contains(&format!("{feature}=yes")),
                "report claims {feature} while it is {other:?}"
            );
            eprintln!("NOTICE: {feature} unavailable here ({other:?}); test skipped");
            true
        }
    }
}

#[tokio::test]
async fn seccomp_denies_syscalls_a_tool_never_needs_while_the_engine_keeps_running() {
    if unavailable_notice("seccomp", &platform_report().seccomp) {
        return;
    }
    for syscall in ["ptrace", "keyctl", "unshare-user"] {
        // Control: unconfined, the same call succeeds, so a denial below is the filter's doing.
        let unconfined = Command::new(CHILD)
            .args(["try-syscall", syscall])
            .output()
            .expect("run child unconfined");
        if unconfined.status.code() != Some(0) {
            eprintln!(
                "NOTICE: {syscall} fails even unconfined here: {}",
                String::from_utf8_lossy(&unconfined.stdout).trim()
            );
        }
        let result = run(&SandboxPolicy::default(), &["try-syscall", syscall], b"").await;
        let stdout = result.stdout.to_text_lossy();
        assert_eq!(
            result.outcome,
            Outcome::Exited { code: 3 },
            "{syscall} was not denied: {stdout}"
        );
        assert!(
            stdout.contains("Operation not permitted"),
            "{syscall} denied with the wrong errno: {stdout}"
        );
    }
    // The engine (this process) is unaffected and still runs well-behaved children.
    let ok = run(&SandboxPolicy::default(), &["echo-json"], b"[1]").await;
    assert!(ok.outcome.is_success(), "{:?}", ok.outcome);
    assert_eq!(ok.stdout.to_text_lossy().trim(), r#"{"echo":[1]}"#);
}

#[tokio::test]
async fn memory_cgroup_oom_is_out_of_memory_without_the_stderr_heuristic() {
    if unavailable_notice("cgroup_memory", &platform_report().cgroup_memory) {
        return;
    }
    let mut policy = SandboxPolicy {
        timeout_ms: 30_000,
        ..SandboxPolicy::default()
    };
    // No address-space limit: only the cgroup can stop the child, and it does so with SIGKILL.
    policy.limits.address_space_bytes = None;
    policy.limits.memory_bytes = Some(64 << 20);
    let result = run(&policy, &["touch-memory", "1024"], b"").await;
    assert_eq!(
        result.outcome,
        Outcome::OutOfMemory,
        "stdout: {}",
        result.stdout.to_text_lossy()
    );
    // Nothing on stderr: the heuristic alone would have called this a plain SIGKILL.
    assert!(
        result.stderr.bytes.is_empty(),
        "{}",
        result.stderr.to_text_lossy()
    );
    assert_eq!(
        Outcome::classify(ExitStatus::from_raw(libc::SIGKILL), &result.stderr.bytes),
        Outcome::Signaled {
            signal: libc::SIGKILL
        }
    );
    // Under the limit the same child succeeds: the verdict is about the limit, not the program.
    policy.limits.memory_bytes = Some(256 << 20);
    let fits = run(&policy, &["touch-memory", "32"], b"").await;
    assert!(fits.outcome.is_success(), "{:?}", fits.outcome);
}

#[test]
fn killing_the_engine_with_sigkill_leaves_no_sandboxed_child_running() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut parent = Command::new(PARENT)
        .arg(CHILD)
        .arg(dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start stand-in engine");
    let stdout = parent.stdout.take().expect("stdout piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("stand-in engine reports its child");
    let child: i32 = line
        .trim()
        .strip_prefix("child ")
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("unexpected line {line:?}"));
    assert!(
        child > 0 && process_alive(child),
        "child {child} not running"
    );

    parent.kill().expect("SIGKILL the stand-in engine");
    let status = parent.wait().expect("reap the stand-in engine");
    assert_eq!(status.signal(), Some(libc::SIGKILL));

    let deadline = Instant::now() + Duration::from_secs(10);
    while process_alive(child) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let survived = process_alive(child);
    if survived {
        // Do not leave it behind for the next test run.
        if let Some(pid) = rustix::process::Pid::from_raw(child) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
    assert!(!survived, "sandboxed child {child} outlived its engine");
}

fn process_alive(pid: i32) -> bool {
    // A zombie still answers kill(0); check /proc state so a dead, unreaped process counts as gone.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}
