//! Real misbehaving children under the Linux process backend: each ends with its documented
//! outcome, and the test process (standing in for the engine) stays up and keeps serving.

use std::time::Duration;

use skillet_sandbox::{
    Failure, Outcome, ProcessBackend, RunResult, SandboxBackend, SandboxCommand, SandboxPolicy,
    Stream,
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

async fn run_with(
    policy: &SandboxPolicy,
    args: &[&str],
    stdin: &[u8],
) -> (RunResult, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let command = SandboxCommand::new(CHILD, dir.path()).args(args);
    let result = ProcessBackend::new()
        .run(&command, policy, stdin.to_vec())
        .await;
    (result, dir)
}

async fn run(args: &[&str]) -> RunResult {
    run_with(&policy(), args, b"").await.0
}

fn stdout(result: &RunResult) -> String {
    result.stdout.to_text_lossy()
}

#[tokio::test]
async fn well_behaved_child_echoes_json_from_stdin() {
    let (result, _dir) = run_with(&policy(), &["echo-json"], br#"{"a":[1,2]}"#).await;
    assert_eq!(
        result.outcome,
        Outcome::Exited { code: 0 },
        "stderr: {}",
        result.stderr.to_text_lossy()
    );
    assert_eq!(stdout(&result).trim(), r#"{"echo":{"a":[1,2]}}"#);
    assert_eq!(result.outcome.failure(), None);
}

#[tokio::test]
async fn non_zero_exit_is_reported_with_its_code() {
    let result = run(&["exit-code", "7"]).await;
    assert_eq!(result.outcome, Outcome::Exited { code: 7 });
    assert_eq!(result.outcome.failure(), Some(Failure::Crashed));
}

#[tokio::test]
async fn unbounded_allocation_is_out_of_memory() {
    let result = run(&["allocate-unbounded"]).await;
    assert_eq!(
        result.outcome,
        Outcome::OutOfMemory,
        "stdout: {} stderr: {}",
        stdout(&result),
        result.stderr.to_text_lossy()
    );
    assert_eq!(result.outcome.failure(), Some(Failure::OutOfMemory));
}

#[tokio::test]
async fn segfault_is_a_signal_crash() {
    let result = run(&["segfault"]).await;
    assert_eq!(
        result.outcome,
        Outcome::Signaled {
            signal: libc::SIGSEGV
        }
    );
    assert_eq!(result.outcome.failure(), Some(Failure::Crashed));
}

#[tokio::test]
async fn endless_loop_hits_the_wall_clock() {
    let mut policy = policy();
    policy.timeout_ms = 300;
    let (result, _dir) = run_with(&policy, &["loop-forever"], b"").await;
    assert_eq!(result.outcome, Outcome::TimedOut);
    assert_eq!(result.outcome.failure(), Some(Failure::TimedOut));
    assert_group_is_gone(&result);
}

#[tokio::test]
async fn endless_loop_hits_the_cpu_limit_as_sigxcpu() {
    let mut policy = policy();
    policy.limits.cpu_seconds = Some(1);
    let (result, _dir) = run_with(&policy, &["loop-forever"], b"").await;
    assert_eq!(
        result.outcome,
        Outcome::Signaled {
            signal: libc::SIGXCPU
        }
    );
    assert_eq!(result.outcome.failure(), Some(Failure::TimedOut));
}

#[tokio::test]
async fn megabytes_of_output_exceed_the_stdout_limit() {
    let mut policy = policy();
    policy.stdout_limit_bytes = 64 * 1024;
    let (result, _dir) = run_with(&policy, &["print-huge-output", "8388608"], b"").await;
    assert_eq!(
        result.outcome,
        Outcome::OutputLimitExceeded {
            stream: Stream::Stdout
        }
    );
    assert_eq!(result.stdout.bytes.len(), 64 * 1024);
    assert!(result.stdout.truncated);
    assert_eq!(result.outcome.failure(), Some(Failure::OutputTooLarge));
}

#[tokio::test]
async fn file_size_limit_stops_a_big_write() {
    let mut policy = policy();
    policy.limits.file_size_bytes = Some(1 << 20);
    let (result, _dir) = run_with(&policy, &["write-big-file", "8388608"], b"").await;
    // SIGXFSZ kills by default; a program ignoring it gets EFBIG instead.
    assert_eq!(
        result.outcome,
        Outcome::Signaled {
            signal: libc::SIGXFSZ
        },
        "{}",
        stdout(&result)
    );
}

#[tokio::test]
async fn missing_program_is_spawn_failed_not_a_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let command = SandboxCommand::new("/nonexistent/program", dir.path());
    let result = ProcessBackend::new()
        .run(&command, &policy(), Vec::new())
        .await;
    match &result.outcome {
        Outcome::SpawnFailed { reason } => {
            assert!(reason.contains("/nonexistent/program"), "{reason}")
        }
        other => panic!("expected SpawnFailed, got {other:?}"),
    }
    assert_eq!(result.pid, None);
}

#[tokio::test]
async fn missing_workdir_is_spawn_failed() {
    let command = SandboxCommand::new(CHILD, "/nonexistent/workdir")
        .arg("exit-code")
        .arg("0");
    let result = ProcessBackend::new()
        .run(&command, &policy(), Vec::new())
        .await;
    assert!(
        matches!(result.outcome, Outcome::SpawnFailed { .. }),
        "{:?}",
        result.outcome
    );
}

#[tokio::test]
async fn leader_exit_kills_grandchildren_holding_the_pipes() {
    let result = run(&["spawn-grandchild"]).await;
    assert_eq!(
        result.outcome,
        Outcome::Exited { code: 0 },
        "{}",
        stdout(&result)
    );
    let grandchild = grandchild_pid(&result);
    assert!(
        !process_alive(grandchild),
        "grandchild {grandchild} survived the run"
    );
}

/// Issue 30: what a script leaves behind must be dead when the run answers, not a moment later.
/// A grandchild in a process group of its own escapes the group kill; the child's pids cgroup
/// finds it. Without cgroups that is a documented gap of the platform (`not_enforced`).
#[tokio::test]
async fn a_grandchild_that_left_the_group_is_dead_when_the_run_returns() {
    let report = ProcessBackend::new().platform_report().clone();
    if !report.cgroup_pids.is_available() {
        eprintln!("skipped: no pids cgroup here ({:?})", report.cgroup_pids);
        return;
    }
    let result = run(&["spawn-detached"]).await;
    assert_eq!(
        result.outcome,
        Outcome::Exited { code: 0 },
        "{}",
        stdout(&result)
    );
    let grandchild = grandchild_pid(&result);
    assert!(
        !process_alive(grandchild),
        "grandchild {grandchild} outlived the run that started it"
    );
}

#[tokio::test]
async fn dropping_the_run_future_kills_the_child() {
    let dir = tempfile::tempdir().expect("tempdir");
    let command = SandboxCommand::new(CHILD, dir.path()).args(["sleep", "60000"]);
    let backend = ProcessBackend::new();
    let policy = policy();
    let run = backend.run(&command, &policy, Vec::new());
    // Give it time to spawn, then cancel by dropping.
    let timed_out = tokio::time::timeout(Duration::from_millis(300), run).await;
    assert!(timed_out.is_err(), "sleep 60s finished early");
    // The group guard killed it on drop: nothing of ours sleeps in that directory any more.
    // (We cannot know the pid from outside the future; the grandchild test covers group kill.)
    let result = backend
        .run(
            &SandboxCommand::new(CHILD, dir.path()).args(["exit-code", "0"]),
            &policy,
            Vec::new(),
        )
        .await;
    assert!(
        result.outcome.is_success(),
        "engine keeps serving after a cancelled run"
    );
}

#[tokio::test]
async fn engine_keeps_serving_while_a_child_misbehaves() {
    let backend = ProcessBackend::new();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut slow_policy = policy();
    slow_policy.timeout_ms = 1500;
    let bad = SandboxCommand::new(CHILD, dir.path()).arg("loop-forever");
    let good_dir = tempfile::tempdir().expect("tempdir");
    let good = SandboxCommand::new(CHILD, good_dir.path()).arg("echo-json");
    let policy = policy();
    let bad_run = backend.run(&bad, &slow_policy, Vec::new());
    let good_runs = async {
        let mut results = Vec::new();
        for i in 0..3 {
            results.push(
                backend
                    .run(&good, &policy, format!("{i}").into_bytes())
                    .await,
            );
        }
        results
    };
    let (bad, good) = tokio::join!(bad_run, good_runs);
    assert_eq!(bad.outcome, Outcome::TimedOut);
    for (i, result) in good.iter().enumerate() {
        assert!(result.outcome.is_success(), "{:?}", result.outcome);
        assert_eq!(stdout(result).trim(), format!(r#"{{"echo":{i}}}"#));
    }
}

/// The pid the test child's `spawn-grandchild` / `spawn-detached` modes print.
fn grandchild_pid(result: &RunResult) -> i32 {
    stdout(result)
        .trim()
        .strip_prefix("grandchild ")
        .and_then(|p| p.parse().ok())
        .expect("grandchild pid")
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

fn assert_group_is_gone(result: &RunResult) {
    let pid = result.pid.expect("child started") as i32;
    assert!(
        !process_alive(pid),
        "child {pid} still running after the run"
    );
}
