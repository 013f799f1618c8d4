//! Tests of the durable task store (`persist`, `reopen`): what a reopened database gives back.

use std::time::{Duration, Instant};

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use rusqlite::Connection;

use crate::a2a::persist::StoredCall;
use crate::a2a::wire::{
    Artifact, Message, Part, StreamResponse, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};

fn limits(max_tasks: usize) -> StoreLimits {
    StoreLimits {
        max_tasks,
        max_bytes: usize::MAX,
        ttl: Duration::from_secs(3600),
    }
}

fn task(id: &str) -> Task {
    Task {
        id: id.to_owned(),
        context_id: format!("ctx-{id}"),
        status: TaskStatus::now(TaskState::Working, None),
        artifacts: Vec::new(),
        history: vec![Message::agent_text(id, "ctx", "hello")],
        metadata: None,
    }
}

fn status(id: &str, state: TaskState) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: id.to_owned(),
        context_id: format!("ctx-{id}"),
        status: TaskStatus::now(state, Some(Message::agent_text(id, "ctx", "step"))),
        metadata: None,
    })
}

fn output(id: &str) -> StreamResponse {
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: id.to_owned(),
        context_id: format!("ctx-{id}"),
        artifact: Artifact {
            artifact_id: "output".into(),
            name: Some("s".into()),
            parts: vec![Part::data(json!({"x": 1}))],
            metadata: None,
        },
        append: false,
        last_chunk: true,
    })
}

fn call() -> StoredCall {
    StoredCall {
        skill: "s".into(),
        arguments: serde_json::Map::from_iter([("text".to_owned(), json!("hi"))]),
        caller: "alice".into(),
    }
}

#[tokio::test]
async fn a_reopened_database_gives_back_finished_tasks_and_hands_over_running_ones() {
    let dir = tempfile::tempdir().unwrap();
    let db = StateDb::open(&dir.path().join("state.db")).unwrap();
    {
        let (store, interrupted) = durable_store(limits(10), &db).unwrap();
        assert!(interrupted.is_empty());
        for id in ["done", "running"] {
            store
                .insert(task(id), CancellationToken::new(), false)
                .unwrap();
            store.set_owner(id, "alice");
            store.record_call(id, &call());
        }
        store.apply("done", output("done"));
        store.apply("done", status("done", TaskState::Completed));
        store.apply("running", status("running", TaskState::Working));
        store.persisted().await;
    }
    let (store, interrupted) = durable_store(limits(10), &db).unwrap();
    let done = store.get("done", None).expect("the finished task is back");
    assert_eq!(done.status.state, TaskState::Completed);
    assert_eq!(done.artifacts.len(), 1);
    assert_eq!(
        done.history.len(),
        2,
        "the terminal message joined its history"
    );
    assert!(store.visible_to("done", Some("alice")));
    assert!(!store.visible_to("done", Some("bob")), "its owner is kept");
    assert_eq!(interrupted.len(), 1);
    assert_eq!(interrupted[0].task_id, "running");
    assert_eq!(interrupted[0].context_id, "ctx-running");
    assert_eq!(interrupted[0].call, Ok(call()));
    assert_eq!(
        store.get("running", None).unwrap().status.state,
        TaskState::Working
    );
}

#[tokio::test]
async fn a_finished_row_without_a_finish_time_comes_back_finished_from_its_last_update() {
    let dir = tempfile::tempdir().unwrap();
    let db = StateDb::open(&dir.path().join("state.db")).unwrap();
    {
        let (store, _) = durable_store(limits(10), &db).unwrap();
        store
            .insert(task("done"), CancellationToken::new(), false)
            .unwrap();
        store.apply("done", status("done", TaskState::Completed));
        store.persisted().await;
    }
    let conn = db.connect().unwrap();
    conn.execute("UPDATE a2a_tasks SET finished_at = NULL", [])
        .unwrap();
    let (store, interrupted) = durable_store(limits(1), &db).unwrap();
    assert!(interrupted.is_empty(), "it is not taken for running");
    assert_eq!(
        store.get("done", None).map(|t| t.status.state),
        Some(TaskState::Completed),
        "it is not dropped"
    );
    // Finished, it gives way to a new task in a full store (a running one would not).
    store
        .insert(task("next"), CancellationToken::new(), false)
        .expect("the finished task is evictable");
    assert!(store.get("done", None).is_none());
}

#[tokio::test]
async fn an_evicted_task_leaves_the_database_and_a_finished_one_takes_its_checkpoint_along() {
    let dir = tempfile::tempdir().unwrap();
    let db = StateDb::open(&dir.path().join("state.db")).unwrap();
    let conn = db.connect().unwrap();
    let (store, _) = durable_store(limits(1), &db).unwrap();
    store
        .insert(task("a"), CancellationToken::new(), false)
        .unwrap();
    conn.execute(
        "INSERT INTO a2a_checkpoints (key, checkpoint, updated_at) VALUES ('a', x'00', 0)",
        [],
    )
    .unwrap();
    store.apply("a", status("a", TaskState::Failed));
    store
        .insert(task("b"), CancellationToken::new(), false)
        .unwrap();
    store.persisted().await;
    let ids: Vec<String> = conn
        .prepare("SELECT id FROM a2a_tasks")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(ids, vec!["b".to_owned()], "a was evicted to make room");
    let checkpoints: i64 = conn
        .query_row("SELECT COUNT(*) FROM a2a_checkpoints", [], |row| row.get(0))
        .unwrap();
    assert_eq!(checkpoints, 0);
}

#[test]
fn a_file_that_is_not_sqlite_or_has_foreign_tables_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    std::fs::write(&path, "x".repeat(8192)).unwrap();
    let error = StateDb::open(&path).unwrap_err().to_string();
    assert!(
        error.contains("state.db") && error.contains("not a usable SQLite database"),
        "{error}"
    );
    let foreign = dir.path().join("foreign.db");
    Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE a2a_tasks (something TEXT);")
        .unwrap();
    let error = StateDb::open(&foreign).unwrap_err().to_string();
    assert!(error.contains("another shape"), "{error}");
}

/// The cost of one state change written through (`cargo test -p skillet-host --lib
/// measure_write_through -- --ignored --nocapture`): each change marked, then waited for, so
/// nothing coalesces — the worst case. Prints microseconds per change and the file's size.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, not a test"]
async fn measure_write_through_cost() {
    let dir = tempfile::tempdir().unwrap();
    let db = StateDb::open(&dir.path().join("state.db")).unwrap();
    let (store, _) = durable_store(limits(1000), &db).unwrap();
    let changes = 2000;
    let started = Instant::now();
    for n in 0..changes / 10 {
        let id = format!("task-{n}");
        store
            .insert(task(&id), CancellationToken::new(), false)
            .unwrap();
        store.record_call(&id, &call());
        store.persisted().await;
        for _ in 0..8 {
            store.apply(&id, status(&id, TaskState::Working));
            store.persisted().await;
        }
        store.apply(&id, status(&id, TaskState::Completed));
        store.persisted().await;
    }
    let each = started.elapsed() / changes;
    let bytes: u64 = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    println!(
        "{changes} state changes written through one at a time: {each:?} each; {} tasks, {bytes} bytes on disk",
        changes / 10
    );
}
