//! [`TaskStore`]: the bounded in-memory store of A2A tasks — each task's current state, its
//! cancellation handle and the live streams subscribed to it.
//!
//! Bounds: at most `max_tasks` tasks and about `max_bytes` bytes of tasks (each task's encoded
//! size, measured when it is stored and when it finishes: its input, history and artifacts); a
//! finished task (terminal state) is kept for `ttl` after it finished, then forgotten
//! (`GetTask` → `TaskNotFound`). Running tasks never expire.
//!
//! **When full** (by count or by bytes), expired tasks are dropped first, then the *oldest
//! finished* tasks are evicted to make room — also when a task finishing takes the store over
//! `max_bytes` (the task that just finished stays, so its client can read it). Running tasks
//! are never evicted and never refused for bytes (each is bounded by the request body limit and
//! their number by the host's concurrency). If every stored task is still running, the new task is refused
//! ([`StoreFull`], answered as a retryable `-32603`) — a running task is never evicted, so its
//! client can always read its outcome. With the defaults (1000 tasks, concurrent calls capped at
//! 64 by the host core) the refusal only happens when `max_tasks` is configured below the
//! concurrency limit.
//!
//! Every update of a task and its delivery to the task's subscribers happen under one lock, so a
//! subscriber sees the snapshot it was given followed by every later update, in order, and its
//! stream ends right after the terminal status. What an update *means* for a skill run is decided
//! by `projection`; this module only stores and fans out.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::wire::{Message, Part, PartContent, StreamResponse, Task, TaskState};

/// Bounds of the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreLimits {
    /// Most tasks kept (at least one).
    pub max_tasks: usize,
    /// Most bytes of tasks kept (their encoded size); finished tasks are evicted beyond it.
    pub max_bytes: usize,
    /// How long a finished task stays readable.
    pub ttl: Duration,
}

/// Every stored task is still running and the store is at `max_tasks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreFull {
    /// The store's capacity in tasks ([`StoreLimits::max_tasks`]), all of them running.
    pub max_tasks: usize,
}

/// Why a task cannot be cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CancelRefusal {
    /// No such task (never existed, expired or evicted).
    NotFound,
    /// It already finished in this state.
    Finished(TaskState),
}

/// A live stream of a task's updates; it ends after the terminal status.
pub(crate) type Subscription = mpsc::UnboundedReceiver<StreamResponse>;

struct Entry {
    task: Task,
    cancel: CancellationToken,
    cancel_requested: bool,
    finished_at: Option<Instant>,
    subscribers: Vec<mpsc::UnboundedSender<StreamResponse>>,
    /// The task's encoded size when last measured.
    bytes: usize,
    /// The identity that started it (`None`: no identity, visible to every caller).
    owner: Option<String>,
}

#[derive(Default)]
struct Inner {
    tasks: HashMap<String, Entry>,
    /// Task ids, oldest first.
    order: VecDeque<String>,
    /// Sum of the entries' `bytes`.
    bytes: usize,
}

impl Inner {
    /// Evicts the oldest finished task other than `keep`; false when there is none.
    fn evict_oldest_finished(&mut self, keep: Option<&str>) -> bool {
        let Inner { tasks, order, .. } = self;
        let index = order.iter().position(|id| {
            Some(id.as_str()) != keep && tasks.get(id).is_some_and(|e| e.finished_at.is_some())
        });
        let Some(id) = index.and_then(|index| order.remove(index)) else {
            return false;
        };
        if let Some(entry) = tasks.remove(&id) {
            self.bytes = self.bytes.saturating_sub(entry.bytes);
        }
        true
    }
}

/// A task's encoded size (what keeping it costs, roughly).
fn task_bytes(task: &Task) -> usize {
    serde_json::to_vec(task).map_or(0, |bytes| bytes.len())
}

/// The store. Share it in an `Arc`.
pub struct TaskStore {
    limits: StoreLimits,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for TaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskStore")
            .field("limits", &self.limits)
            .field("tasks", &self.len())
            .finish()
    }
}

impl TaskStore {
    /// An empty store with these bounds.
    pub fn new(limits: StoreLimits) -> TaskStore {
        TaskStore {
            limits: StoreLimits {
                max_tasks: limits.max_tasks.max(1),
                max_bytes: limits.max_bytes,
                ttl: limits.ttl,
            },
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Tasks stored now (expired ones included until the next insert purges them).
    pub fn len(&self) -> usize {
        self.lock().tasks.len()
    }

    /// Whether no task is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stores a new running task, making room as described in the module docs. With
    /// `subscribe`, also returns a subscription that sees every update after `task`.
    pub fn insert(
        &self,
        task: Task,
        cancel: CancellationToken,
        subscribe: bool,
    ) -> Result<Option<Subscription>, StoreFull> {
        let bytes = task_bytes(&task);
        let mut inner = self.lock();
        self.purge_expired(&mut inner);
        while inner.tasks.len() >= self.limits.max_tasks
            || inner.bytes + bytes > self.limits.max_bytes
        {
            if !inner.evict_oldest_finished(None) {
                break;
            }
        }
        if inner.tasks.len() >= self.limits.max_tasks {
            return Err(StoreFull {
                max_tasks: self.limits.max_tasks,
            });
        }
        let (subscribers, subscription) = if subscribe {
            let (tx, rx) = mpsc::unbounded_channel();
            (vec![tx], Some(rx))
        } else {
            (Vec::new(), None)
        };
        let id = task.id.clone();
        inner.order.push_back(id.clone());
        inner.bytes += bytes;
        inner.tasks.insert(
            id,
            Entry {
                task,
                cancel,
                cancel_requested: false,
                finished_at: None,
                subscribers,
                bytes,
                owner: None,
            },
        );
        Ok(subscription)
    }

    fn purge_expired(&self, inner: &mut Inner) {
        let now = Instant::now();
        let ttl = self.limits.ttl;
        let Inner {
            tasks,
            order,
            bytes,
        } = inner;
        order.retain(|id| {
            let expired = tasks
                .get(id)
                .and_then(|e| e.finished_at)
                .is_some_and(|at| now.duration_since(at) >= ttl);
            if expired && let Some(entry) = tasks.remove(id) {
                *bytes = bytes.saturating_sub(entry.bytes);
            }
            !expired && tasks.contains_key(id)
        });
    }

    fn live<'a>(&self, inner: &'a mut Inner, id: &str) -> Option<&'a mut Entry> {
        let ttl = self.limits.ttl;
        inner.tasks.get_mut(id).filter(|e| {
            e.finished_at
                .is_none_or(|at| Instant::now().duration_since(at) < ttl)
        })
    }

    /// The task with at most `history_length` of its newest history messages (`None`: all).
    pub fn get(&self, id: &str, history_length: Option<usize>) -> Option<Task> {
        let mut inner = self.lock();
        let entry = self.live(&mut inner, id)?;
        let mut task = entry.task.clone();
        if let Some(keep) = history_length {
            let skip = task.history.len().saturating_sub(keep);
            task.history.drain(..skip);
        }
        Some(task)
    }

    /// Records that the identity `owner` started the task `id`: from then on only callers
    /// `visible_to` it see it.
    pub(crate) fn set_owner(&self, id: &str, owner: &str) {
        if let Some(entry) = self.lock().tasks.get_mut(id) {
            entry.owner = Some(owner.to_owned());
        }
    }

    /// Whether the task `id` is there for a caller that is the identity `owner` (`None`: a
    /// caller without one, who sees every task as before `[auth]`). A task another identity
    /// started is not: to its caller it does not exist.
    pub(crate) fn visible_to(&self, id: &str, owner: Option<&str>) -> bool {
        let inner = self.lock();
        inner.tasks.get(id).is_some_and(|entry| owns(entry, owner))
    }

    /// Every live task `keep` accepts that is there for `owner` (see
    /// [`TaskStore::visible_to`]), as stored (for `ListTasks`).
    pub(crate) fn matching(&self, owner: Option<&str>, keep: impl Fn(&Task) -> bool) -> Vec<Task> {
        let mut inner = self.lock();
        self.purge_expired(&mut inner);
        inner
            .tasks
            .values()
            .filter(|entry| owns(entry, owner) && keep(&entry.task))
            .map(|entry| entry.task.clone())
            .collect()
    }

    /// The task with at most `history_length` history messages, even if its TTL has passed
    /// (as long as it was not purged yet): for answering the request that ran or cancelled it.
    pub(crate) fn final_snapshot(&self, id: &str, history_length: Option<usize>) -> Option<Task> {
        let inner = self.lock();
        let mut task = inner.tasks.get(id)?.task.clone();
        if let Some(keep) = history_length {
            let skip = task.history.len().saturating_sub(keep);
            task.history.drain(..skip);
        }
        Some(task)
    }

    /// The task now and, while it runs, a subscription to its later updates (`None` once it
    /// finished).
    pub fn subscribe(&self, id: &str) -> Option<(Task, Option<Subscription>)> {
        let mut inner = self.lock();
        let entry = self.live(&mut inner, id)?;
        if entry.finished_at.is_some() {
            return Some((entry.task.clone(), None));
        }
        let (tx, rx) = mpsc::unbounded_channel();
        entry.subscribers.push(tx);
        Some((entry.task.clone(), Some(rx)))
    }

    /// Marks the task cancelled by its client and cancels its run. The run still finishes
    /// (and reports `canceled` through `projection`).
    pub(crate) fn request_cancel(&self, id: &str) -> Result<(), CancelRefusal> {
        let mut inner = self.lock();
        let entry = self.live(&mut inner, id).ok_or(CancelRefusal::NotFound)?;
        if entry.finished_at.is_some() {
            return Err(CancelRefusal::Finished(entry.task.status.state));
        }
        entry.cancel_requested = true;
        entry.cancel.cancel();
        Ok(())
    }

    /// Whether the task's client asked to cancel it.
    pub(crate) fn cancel_requested(&self, id: &str) -> bool {
        self.lock()
            .tasks
            .get(id)
            .is_some_and(|e| e.cancel_requested)
    }

    /// Applies one update to the task and sends it to the task's subscribers. Updates after the
    /// terminal status (and of unknown tasks) are dropped.
    pub fn apply(&self, id: &str, update: StreamResponse) {
        let mut inner = self.lock();
        let Some(entry) = inner.tasks.get_mut(id) else {
            return;
        };
        if entry.finished_at.is_some() {
            return;
        }
        let mut finished = false;
        match &update {
            StreamResponse::StatusUpdate(event) => {
                entry.task.status = event.status.clone();
                if event.status.state.is_terminal() {
                    finished = true;
                    if let Some(message) = &event.status.message {
                        entry.task.history.push(message.clone());
                    }
                    if let Some(metadata) = &event.metadata {
                        let task_metadata =
                            entry.task.metadata.get_or_insert_with(Default::default);
                        for (k, v) in metadata {
                            task_metadata.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
            StreamResponse::ArtifactUpdate(event) => {
                let artifacts = &mut entry.task.artifacts;
                match artifacts
                    .iter_mut()
                    .find(|a| a.artifact_id == event.artifact.artifact_id)
                {
                    Some(existing) if event.append => {
                        for part in &event.artifact.parts {
                            append_part(&mut existing.parts, part);
                        }
                    }
                    Some(existing) => *existing = event.artifact.clone(),
                    None => artifacts.push(event.artifact.clone()),
                }
            }
            StreamResponse::Task(_) | StreamResponse::Message(_) => {}
        }
        entry
            .subscribers
            .retain(|subscriber| subscriber.send(update.clone()).is_ok());
        if finished {
            entry.finished_at = Some(Instant::now());
            // Dropping the senders ends every subscribed stream after the terminal status.
            entry.subscribers.clear();
            // What is kept for the TTL: the finished task, artifacts and all.
            let (before, after) = (entry.bytes, task_bytes(&entry.task));
            entry.bytes = after;
            inner.bytes = (inner.bytes + after).saturating_sub(before);
            while inner.bytes > self.limits.max_bytes {
                if !inner.evict_oldest_finished(Some(id)) {
                    break;
                }
            }
        }
    }

    /// Appends `message` to a running task's history (a client's reply that continues it).
    pub(crate) fn push_history(&self, id: &str, message: Message) {
        let bytes = serde_json::to_vec(&message).map_or(0, |b| b.len());
        let mut guard = self.lock();
        let inner = &mut *guard;
        if let Some(entry) = inner.tasks.get_mut(id)
            && entry.finished_at.is_none()
        {
            entry.bytes += bytes;
            inner.bytes += bytes;
            entry.task.history.push(message);
        }
    }

    /// The metadata value `key` of a task (for tests and diagnostics).
    pub fn metadata(&self, id: &str, key: &str) -> Option<Value> {
        self.lock()
            .tasks
            .get(id)
            .and_then(|e| e.task.metadata.as_ref())
            .and_then(|m| m.get(key).cloned())
    }
}

/// Appends `part`, joining it to the last part when both are text of the same media type, so a
/// stored streamed artifact is one text part rather than one part per chunk.
/// Whether `entry` is there for a caller that is the identity `owner` (`None`: sees all).
fn owns(entry: &Entry, owner: Option<&str>) -> bool {
    match (owner, entry.owner.as_deref()) {
        (None, _) => true,
        (Some(caller), Some(started_by)) => caller == started_by,
        (Some(_), None) => false,
    }
}

fn append_part(parts: &mut Vec<Part>, part: &Part) {
    // A file's chunks join into one part: text to text, base64 to base64 (whole quanta each).
    if let Some(last) = parts.last_mut()
        && last.media_type == part.media_type
        && last.filename == part.filename
        && let (PartContent::Text(joined), PartContent::Text(text))
        | (PartContent::Raw(joined), PartContent::Raw(text)) = (&mut last.content, &part.content)
    {
        joined.push_str(text);
        return;
    }
    parts.push(part.clone());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::wire::{TaskStatus, TaskStatusUpdateEvent};

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
        let mut parts = Vec::new();
        for (chunk, name, mime) in [
            ("iVBO", "a.png", "image/png;base64"),
            ("Rw==", "a.png", "image/png;base64"),
            ("# T", "b.md", "text/markdown"),
            ("itle", "b.md", "text/markdown"),
        ] {
            append_part(&mut parts, &Part::file_chunk(chunk, name, mime));
        }
        assert_eq!(parts.len(), 2, "{parts:?}");
        assert_eq!(parts[0].content, PartContent::Raw("iVBORw==".into()));
        assert_eq!(parts[0].media_type.as_deref(), Some("image/png"));
        assert_eq!(parts[0].filename.as_deref(), Some("a.png"));
        assert_eq!(parts[1].content, PartContent::Text("# Title".into()));
    }
}
