//! Tests of the in-memory task store (`store`).
use super::*;
use crate::a2a::wire::{Artifact, Part, PartContent, TaskStatus, TaskStatusUpdateEvent};

fn task(id: &str) -> Task {
    Task {
        id: id.to_owned(),
        context_id: "c".to_owned(),
        status: TaskStatus::now(TaskState::Working, None),
        artifacts: Vec::new(),
        history: Vec::new(),
        metadata: None,
    }
}

fn finish(store: &TaskStore, id: &str) {
    store.apply(
        id,
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: id.to_owned(),
            context_id: "c".to_owned(),
            status: TaskStatus::now(TaskState::Completed, None),
            metadata: None,
        }),
    );
}

fn store(max_tasks: usize, ttl: Duration) -> TaskStore {
    TaskStore::new(StoreLimits {
        max_tasks,
        max_bytes: usize::MAX,
        ttl,
    })
}

fn task_with_input(id: &str, bytes: usize) -> Task {
    let mut task = task(id);
    task.metadata = Some(serde_json::Map::from_iter([(
        "input".to_owned(),
        Value::String("i".repeat(bytes)),
    )]));
    task
}

/// Issue 30: 250 finished tasks with 1 MB inputs were all kept for the TTL (+287 MiB); here
/// the same shape scaled down (64 KiB inputs, a 320 KiB bound).
#[test]
fn finished_tasks_are_evicted_oldest_first_to_stay_within_max_bytes() {
    let store = TaskStore::new(StoreLimits {
        max_tasks: 1000,
        max_bytes: 5 << 16,
        ttl: Duration::from_secs(3600),
    });
    for n in 0..250 {
        let id = format!("t{n}");
        store
            .insert(
                task_with_input(&id, 1 << 16),
                CancellationToken::new(),
                false,
            )
            .unwrap();
        finish(&store, &id);
    }
    assert!(store.len() <= 5, "{} tasks kept", store.len());
    let kept = store.lock().bytes;
    assert!(
        kept <= 5 << 16,
        "{kept} bytes kept in {} tasks",
        store.len()
    );
    assert!(store.get("t249", None).is_some(), "the newest stays");
    assert!(store.get("t0", None).is_none(), "the oldest went first");
    // Running tasks are never evicted for bytes.
    for n in 0..8 {
        store
            .insert(
                task_with_input(&format!("r{n}"), 1 << 16),
                CancellationToken::new(),
                false,
            )
            .unwrap();
    }
    assert!((0..8).all(|n| store.get(&format!("r{n}"), None).is_some()));
}

#[test]
fn when_full_the_oldest_finished_task_is_evicted_and_running_ones_never() {
    let store = store(2, Duration::from_secs(3600));
    let token = CancellationToken::new;
    store.insert(task("a"), token(), false).unwrap();
    store.insert(task("b"), token(), false).unwrap();
    assert_eq!(
        store.insert(task("c"), token(), false).unwrap_err(),
        StoreFull { max_tasks: 2 }
    );
    finish(&store, "b");
    store.insert(task("c"), token(), false).unwrap();
    assert!(
        store.get("b", None).is_none(),
        "the finished task made room"
    );
    assert!(store.get("a", None).is_some(), "the running task stays");
    assert!(store.get("c", None).is_some());
}

#[test]
fn finished_tasks_expire_after_the_ttl_and_running_ones_do_not() {
    let store = store(10, Duration::ZERO);
    store
        .insert(task("run"), CancellationToken::new(), false)
        .unwrap();
    store
        .insert(task("done"), CancellationToken::new(), false)
        .unwrap();
    finish(&store, "done");
    assert!(store.get("done", None).is_none());
    assert!(store.get("run", None).is_some());
    assert!(
        store.final_snapshot("done", None).is_some(),
        "the request that ran it still gets its answer"
    );
}

#[test]
fn a_subscriber_sees_updates_until_the_terminal_status_then_its_stream_ends() {
    let store = store(10, Duration::from_secs(60));
    let mut rx = store
        .insert(task("t"), CancellationToken::new(), true)
        .unwrap()
        .unwrap();
    finish(&store, "t");
    finish(&store, "t");
    assert!(matches!(rx.try_recv(), Ok(StreamResponse::StatusUpdate(_))));
    assert!(matches!(
        rx.try_recv(),
        Err(mpsc::error::TryRecvError::Disconnected)
    ));
    assert_eq!(
        store.request_cancel("t"),
        Err(CancelRefusal::Finished(TaskState::Completed))
    );
    assert_eq!(store.request_cancel("nope"), Err(CancelRefusal::NotFound));
}

#[test]
fn a_produced_files_chunks_join_into_one_part_per_file_text_and_raw_alike() {
    let mut artifact = Artifact {
        artifact_id: "files".into(),
        name: None,
        parts: Vec::new(),
        metadata: None,
    };
    for (chunk, name, mime) in [
        ("iVBO", "a.png", "image/png;base64"),
        ("Rw==", "a.png", "image/png;base64"),
        ("# T", "b.md", "text/markdown"),
        ("itle", "b.md", "text/markdown"),
    ] {
        artifact.append_chunk(&Part::file_chunk(chunk, name, mime));
    }
    let parts = &artifact.parts;
    assert_eq!(parts.len(), 2, "{parts:?}");
    assert_eq!(parts[0].content, PartContent::Raw("iVBORw==".into()));
    assert_eq!(parts[0].media_type.as_deref(), Some("image/png"));
    assert_eq!(parts[0].filename.as_deref(), Some("a.png"));
    assert_eq!(parts[1].content, PartContent::Text("# Title".into()));
}
