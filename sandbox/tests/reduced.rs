//! The reduced mode's guarantees, proven with real children on every platform and in every build
//! (`ProcessBackend::reduced()` chooses the mode at run time, so a normal Linux test run exercises
//! it too): wall clock, output cap, the group killed at the end, the clean environment, the
//! rlimits, a strict policy refused, and a report that names what is not enforced.

use std::time::Duration;

use skillet_sandbox::{
    Enforcement, Failure, InteractiveOptions, Outcome, ProcessBackend, RunResult, SandboxBackend,
    SandboxCommand, SandboxMode, SandboxPolicy, Stream,
};

const CHILD: &str = env!("CARGO_BIN_EXE_sandbox-test-child");

fn policy() -> SandboxPolicy {
    let mut policy = SandboxPolicy {
        timeout_ms: 20_000,
        ..SandboxPolicy::default()
    };
    policy.limits.address_space_bytes = Some(512 << 20);
    policy.limits.cpu_seconds = Some(20);
    policy
}

async fn run_with(policy: &SandboxPolicy, args: &[&str]) -> RunResult {
    let dir = tempfile::tempdir().expect("tempdir");
    let command = SandboxCommand::new(CHILD, dir.path()).args(args);
    ProcessBackend::reduced()
        .run(&command, policy, Vec::new())
        .await
}

fn stdout(result: &RunResult) -> String {
    result.stdout.to_text_lossy()
}

/// Whether `pid` is a live process: `kill(pid, 0)` succeeds, and on Linux it is not a zombie.
fn process_alive(pid: i32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    if rustix::process::test_kill_process(pid).is_err() {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero())) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        // No /proc here (or gone already): kill(0) said it exists.
        Err(_) => cfg!(not(target_os = "linux")),
    }
}

#[test]
fn the_reduced_backend_reports_its_mode_and_every_gap() {
    let backend = ProcessBackend::reduced();
    assert_eq!(backend.mode(), SandboxMode::Reduced);
    let report = backend.platform_report();
    assert_eq!(report.mode, SandboxMode::Reduced);
    assert!(report.rlimits);
    assert!(!report.parent_death_signal);
    let line = report.to_string();
    for gap in [
        "filesystem confinement",
        "network isolation",
        "syscall filter",
        "memory cgroup",
        "kill on engine death",
    ] {
        assert!(line.contains(gap), "{gap} missing in {line}");
    }
}

#[tokio::test]
async fn a_well_behaved_child_runs_and_echoes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let command = SandboxCommand::new(CHILD, dir.path()).arg("echo-json");
    let result = ProcessBackend::reduced()
        .run(&command, &policy(), br#"{"a":1}"#.to_vec())
        .await;
    assert_eq!(result.outcome, Outcome::Exited { code: 0 });
    assert_eq!(stdout(&result).trim(), r#"{"echo":{"a":1}}"#);
}

#[tokio::test]
async fn endless_loop_hits_the_wall_clock_and_the_child_is_gone() {
    let mut policy = policy();
    policy.timeout_ms = 300;
    let result = run_with(&policy, &["loop-forever"]).await;
    assert_eq!(result.outcome, Outcome::TimedOut);
    assert_eq!(result.outcome.failure(), Some(Failure::TimedOut));
    let pid = result.pid.expect("child started") as i32;
    assert!(!process_alive(pid), "child {pid} outlived its timeout");
}

#[tokio::test]
async fn megabytes_of_output_stop_at_the_stdout_cap() {
    let mut policy = policy();
    policy.stdout_limit_bytes = 64 * 1024;
    let result = run_with(&policy, &["print-huge-output", "8388608"]).await;
    assert_eq!(
        result.outcome,
        Outcome::OutputLimitExceeded {
            stream: Stream::Stdout
        }
    );
    assert_eq!(result.stdout.bytes.len(), 64 * 1024);
    assert_eq!(result.outcome.failure(), Some(Failure::OutputTooLarge));
}

#[tokio::test]
async fn the_group_is_killed_when_the_leader_exits() {
    let result = run_with(&policy(), &["spawn-grandchild"]).await;
    assert_eq!(
        result.outcome,
        Outcome::Exited { code: 0 },
        "{}",
        stdout(&result)
    );
    let grandchild: i32 = stdout(&result)
        .trim()
        .strip_prefix("grandchild ")
        .and_then(|p| p.parse().ok())
        .expect("grandchild pid");
    // The kill is sent before `run` returns; reaping by init may take a moment.
    let gone = (0..50).any(|_| {
        let alive = process_alive(grandchild);
        if alive {
            std::thread::sleep(Duration::from_millis(20));
        }
        !alive
    });
    assert!(gone, "grandchild {grandchild} survived the run");
}

#[tokio::test]
async fn the_environment_is_only_the_allow_list() {
    let mut policy = policy();
    policy.env.inherit = vec!["PATH".into()];
    policy
        .env
        .set
        .insert("GREETING".into(), "hello".to_owned().into());
    let result = run_with(&policy, &["print-env"]).await;
    assert!(result.outcome.is_success(), "{:?}", result.outcome);
    let env = stdout(&result);
    assert!(env.contains("GREETING=hello\n"), "{env}");
    let allowed = ["PATH", "HOME", "TMPDIR", "GREETING"];
    for line in env.lines() {
        let name = line.split_once('=').map_or(line, |(k, _)| k);
        assert!(
            allowed.contains(&name),
            "{name} leaked into the child: {env}"
        );
    }
}

#[tokio::test]
async fn rlimits_still_hold_the_file_size_and_cpu_time() {
    let mut policy = policy();
    policy.limits.file_size_bytes = Some(1 << 20);
    let result = run_with(&policy, &["write-big-file", "8388608"]).await;
    assert_eq!(
        result.outcome,
        Outcome::Signaled {
            signal: libc::SIGXFSZ
        },
        "{}",
        stdout(&result)
    );
    let mut policy = self::policy();
    policy.limits.cpu_seconds = Some(1);
    let result = run_with(&policy, &["loop-forever"]).await;
    assert_eq!(result.outcome.failure(), Some(Failure::TimedOut));
}

#[tokio::test]
async fn a_strict_policy_is_refused_naming_what_is_missing() {
    let mut policy = policy();
    policy.enforcement = Enforcement::Strict;
    let result = run_with(&policy, &["exit-code", "0"]).await;
    match &result.outcome {
        Outcome::SpawnFailed { reason } => {
            assert!(reason.contains("reduced mode"), "{reason}");
            assert!(reason.contains("filesystem confinement"), "{reason}");
        }
        other => panic!("expected SpawnFailed, got {other:?}"),
    }
    assert_eq!(result.pid, None);
}

#[tokio::test]
async fn an_interactive_child_is_killed_with_its_handle() {
    let dir = tempfile::tempdir().expect("tempdir");
    let command = SandboxCommand::new(CHILD, dir.path()).args(["sleep", "60000"]);
    let options = InteractiveOptions {
        max_lifetime: Some(Duration::from_millis(300)),
    };
    let mut child = ProcessBackend::reduced()
        .spawn_interactive(&command, &policy(), options)
        .await
        .expect("spawn");
    let pid = child.id().expect("pid") as i32;
    let report = child.wait().await;
    assert_eq!(report.outcome, Outcome::TimedOut);
    assert!(!process_alive(pid), "child {pid} outlived its lifetime");
}
