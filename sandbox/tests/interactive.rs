//! Long-lived interactive children (the shape of an out-of-process skill speaking JSON lines):
//! ordered round trips, crashes mid-conversation, kill, lifetime, and kill on drop.

use std::time::Duration;

use skillet_sandbox::{
    Failure, InteractiveChild, InteractiveOptions, Outcome, ProcessBackend, SandboxBackend,
    SandboxCommand, SandboxPolicy,
};
use tokio::io::AsyncWriteExt;

const CHILD: &str = env!("CARGO_BIN_EXE_sandbox-test-child");

async fn spawn(
    args: &[&str],
    options: InteractiveOptions,
) -> (InteractiveChild, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let command = SandboxCommand::new(CHILD, dir.path()).args(args);
    let child = ProcessBackend::new()
        .spawn_interactive(&command, &SandboxPolicy::default(), options)
        .await
        .expect("spawn");
    (child, dir)
}

#[tokio::test]
async fn json_lines_round_trip_in_order_and_exit_cleanly() {
    let (mut child, _dir) = spawn(&["json-lines"], InteractiveOptions::default()).await;
    let mut stdin = child.take_stdin().expect("stdin");
    let mut lines = child.take_stdout_lines().expect("stdout");
    for text in ["alpha", "beta", "gamma"] {
        stdin
            .write_all(format!("{text}\n").as_bytes())
            .await
            .expect("write");
    }
    stdin.flush().await.expect("flush");
    for (n, text) in ["alpha", "beta", "gamma"].iter().enumerate() {
        let line = lines.next_line().await.expect("read").expect("a reply");
        let reply: serde_json::Value = serde_json::from_str(&line).expect("json");
        assert_eq!(reply, serde_json::json!({ "line": n, "text": text }));
    }
    drop(stdin); // EOF ends the child's loop
    let report = child.wait().await;
    assert_eq!(report.outcome, Outcome::Exited { code: 0 });
    assert_eq!(child.wait().await, report, "wait is repeatable");
}

#[tokio::test]
async fn crash_mid_conversation_reports_the_signal_and_stderr_tail() {
    let (mut child, _dir) = spawn(&["json-lines"], InteractiveOptions::default()).await;
    let mut stdin = child.take_stdin().expect("stdin");
    let mut lines = child.take_stdout_lines().expect("stdout");
    stdin.write_all(b"hello\ncrash\n").await.expect("write");
    assert!(
        lines.next_line().await.expect("read").is_some(),
        "first reply arrives"
    );
    assert_eq!(
        lines.next_line().await.expect("read"),
        None,
        "stdout closes on crash"
    );
    let report = child.wait().await;
    assert_eq!(
        report.outcome,
        Outcome::Signaled {
            signal: libc::SIGABRT
        }
    );
    assert_eq!(report.outcome.failure(), Some(Failure::Crashed));
    assert!(
        report
            .stderr_tail
            .to_text_lossy()
            .contains("crashing on request")
    );
}

#[tokio::test]
async fn kill_ends_the_child_with_sigkill() {
    let (mut child, _dir) = spawn(&["sleep", "60000"], InteractiveOptions::default()).await;
    assert!(child.try_wait().is_none(), "still running");
    child.kill();
    let report = child.wait().await;
    assert_eq!(
        report.outcome,
        Outcome::Signaled {
            signal: libc::SIGKILL
        }
    );
}

#[tokio::test]
async fn lifetime_limit_times_the_child_out() {
    let options = InteractiveOptions {
        max_lifetime: Some(Duration::from_millis(200)),
    };
    let (mut child, _dir) = spawn(&["sleep", "60000"], options).await;
    assert_eq!(child.wait().await.outcome, Outcome::TimedOut);
}

#[tokio::test]
async fn dropping_the_handle_kills_the_child() {
    let (child, _dir) = spawn(&["sleep", "60000"], InteractiveOptions::default()).await;
    let pid = child.id().expect("pid") as i32;
    assert!(alive(pid));
    drop(child);
    // The supervisor reacts asynchronously; poll (bounded) rather than assume a timing.
    for _ in 0..200 {
        if !alive(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("child {pid} still alive 5 s after its handle was dropped");
}

fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}
