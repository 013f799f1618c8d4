//! What the REST and gRPC binding tests share: a `skillet serve --http` with the bundled skills
//! and two slow ones, and the official `a2a-sdk` client of one binding
//! (`tests/python/a2a_binding_client.py rest|grpc`) run against it to the end, every check it
//! prints required.

use std::path::Path;
use std::time::Duration;

use crate::cli_support::*;
use crate::serve_support::{HttpServer, ServeHttp};

/// `skillet serve --http` with the bundled skills, `slow-echo` (a valid answer after 1.5 s)
/// and `slow-loop` (1.5 s turns whose answers never validate).
pub(crate) async fn spawn_server() -> (HttpServer, tempfile::TempDir) {
    let skills = tempfile::tempdir().unwrap();
    write_marked_skill(
        skills.path(),
        "slow-echo",
        1500,
        "{json: {echo: \"hello\"}}",
    );
    write_marked_skill(skills.path(), "slow-loop", 1500, "{json: {wrong: 1}}");
    let server = ServeHttp::new(SKILLET)
        .skills_dir(bundled_skills())
        .skills_dir(skills.path())
        .spawn()
        .await;
    (server, skills)
}

/// Runs the SDK's client of `binding` (`rest` or `grpc`) with `python` against a fresh server
/// and requires every check: the card, send, get, stream, list, subscribe, cancel, and push
/// refused while off.
pub(crate) async fn every_check_passes(python: &Path, binding: &str) {
    let (server, _skills) = spawn_server().await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/a2a_binding_client.py");
    let run = tokio::process::Command::new(python)
        .arg(&script)
        .arg(binding)
        .arg(&server.base)
        .current_dir(std::env::temp_dir())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(180), run)
        .await
        .expect("the SDK script ends within 180 s")
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "a2a_binding_client.py {binding} failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    for check in [
        "card",
        "send_message",
        "get_task",
        "send_streaming_message",
        "list_tasks",
        "subscribe_to_task",
        "cancel_task",
        "push_refused",
    ] {
        assert!(
            stdout.lines().any(|l| l == format!("OK {check}")),
            "{binding}: check {check} did not pass:\n{stdout}"
        );
    }
}
