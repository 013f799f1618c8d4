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
//!
//! **Durable** (`[server] state_db`, [`TaskStore::durable`]): the same store, each change of a
//! task also marked for `persist`'s writer, which mirrors the entry into SQLite (or deletes its
//! row once it is evicted or expired). Mid-stream chunks of a streamed artifact are not marked
//! on their own: they reach the row with the task's next status update or the artifact's last
//! chunk. Tasks read back at start-up come in through [`TaskStore::restore`].

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::persist::{Persist, RowSnapshot};
use super::wire::{Message, StreamResponse, Task, TaskState};

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
    /// Tasks evicted or expired since the last change was handed to `persist`.
    removed: Vec<String>,
    /// Set when a graceful stop's grace ran out ([`TaskStore::keep_running_for_restart`]):
    /// the running tasks' ends are no longer recorded.
    kept_for_restart: bool,
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
        self.removed.push(id);
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
    /// The SQLite mirror, when the store is durable.
    persist: Option<Arc<Persist>>,
}

impl std::fmt::Debug for TaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskStore")
            .field("limits", &self.limits)
            .field("tasks", &self.len())
            .finish()
    }
}

impl Drop for TaskStore {
    fn drop(&mut self) {
        if let Some(persist) = &self.persist {
            persist.close();
        }
    }
}

impl TaskStore {
    /// An empty store with these bounds.
    pub fn new(limits: StoreLimits) -> TaskStore {
        TaskStore::with_persist(limits, None)
    }

    pub(crate) fn with_persist(limits: StoreLimits, persist: Option<Arc<Persist>>) -> TaskStore {
        TaskStore {
            limits: StoreLimits {
                max_tasks: limits.max_tasks.max(1),
                max_bytes: limits.max_bytes,
                ttl: limits.ttl,
            },
            inner: Mutex::new(Inner::default()),
            persist,
        }
    }

    /// Hands the change of `id` (if any) and every removal since the last one to the writer.
    fn changed(&self, inner: &mut Inner, id: Option<&str>) {
        let Some(persist) = &self.persist else {
            inner.removed.clear();
            return;
        };
        persist.mark(
            id.into_iter()
                .map(str::to_owned)
                .chain(inner.removed.drain(..)),
        );
    }

    /// Waits until every change made so far is written (at once for a store in memory only).
    pub async fn persisted(&self) {
        if let Some(persist) = &self.persist {
            persist.flushed().await;
        }
    }

    /// What `persist` writes for each of `ids` (`None`: the task is gone, delete its row).
    pub(crate) fn snapshots(&self, ids: &[String]) -> Vec<(String, Option<RowSnapshot>)> {
        let inner = self.lock();
        let (now, wall) = (Instant::now(), SystemTime::now());
        ids.iter()
            .map(|id| {
                let row = inner.tasks.get(id).map(|entry| RowSnapshot {
                    context_id: entry.task.context_id.clone(),
                    state: entry.task.status.state,
                    owner: entry.owner.clone(),
                    finished_at: entry.finished_at.map(|at| {
                        let ago = now.saturating_duration_since(at);
                        wall.checked_sub(ago)
                            .unwrap_or(wall)
                            .duration_since(UNIX_EPOCH)
                            .map_or(0.0, |d| d.as_secs_f64())
                    }),
                    task: serde_json::to_string(&entry.task).unwrap_or_default(),
                });
                (id.clone(), row)
            })
            .collect()
    }

    /// Puts back a task read from the database: a finished one with its finish time (seconds
    /// since the Unix epoch; already expired ones are dropped), a running one as running.
    /// Bounds apply as for a new task; the oldest finished ones give way.
    pub(crate) fn restore(&self, task: Task, owner: Option<String>, finished_at: Option<f64>) {
        let finished_at = match finished_at {
            None => None,
            Some(at) => {
                let wall = UNIX_EPOCH + Duration::from_secs_f64(at.max(0.0));
                let ago = SystemTime::now().duration_since(wall).unwrap_or_default();
                if ago >= self.limits.ttl {
                    let mut inner = self.lock();
                    inner.removed.push(task.id);
                    self.changed(&mut inner, None);
                    return;
                }
                Some(Instant::now().checked_sub(ago).unwrap_or_else(Instant::now))
            }
        };
        let bytes = task_bytes(&task);
        let mut inner = self.lock();
        while inner.tasks.len() >= self.limits.max_tasks
            || inner.bytes + bytes > self.limits.max_bytes
        {
            if !inner.evict_oldest_finished(None) {
                break;
            }
        }
        let id = task.id.clone();
        inner.order.push_back(id.clone());
        inner.bytes += bytes;
        inner.tasks.insert(
            id,
            Entry {
                task,
                cancel: CancellationToken::new(),
                cancel_requested: false,
                finished_at,
                subscribers: Vec::new(),
                bytes,
                owner,
            },
        );
        self.changed(&mut inner, None);
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
        let task_id_for_persist = id.clone();
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
        self.changed(&mut inner, Some(&task_id_for_persist));
        Ok(subscription)
    }

    fn purge_expired(&self, inner: &mut Inner) {
        let now = Instant::now();
        let ttl = self.limits.ttl;
        let Inner {
            tasks,
            order,
            bytes,
            removed,
            ..
        } = inner;
        order.retain(|id| {
            let expired = tasks
                .get(id)
                .and_then(|e| e.finished_at)
                .is_some_and(|at| now.duration_since(at) >= ttl);
            if expired && let Some(entry) = tasks.remove(id) {
                *bytes = bytes.saturating_sub(entry.bytes);
                removed.push(id.clone());
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
        let mut inner = self.lock();
        if let Some(entry) = inner.tasks.get_mut(id) {
            entry.owner = Some(owner.to_owned());
            self.changed(&mut inner, Some(id));
        }
    }

    /// Whether the task `id` is there for a caller that is the identity `owner` (`None`: a
    /// caller without one, who sees every task as before `[auth]`). A task another identity
    /// started is not: to its caller it does not exist.
    pub(crate) fn visible_to(&self, id: &str, owner: Option<&str>) -> bool {
        let inner = self.lock();
        inner.tasks.get(id).is_some_and(|entry| owns(entry, owner))
    }

    /// Every stored task's owner, the id of its first message and its id: which message
    /// started which task, remembered again after a restart (`repeats`).
    pub(crate) fn first_messages(&self) -> Vec<(Option<String>, String, String)> {
        let inner = self.lock();
        inner
            .tasks
            .iter()
            .filter_map(|(id, entry)| {
                let first = entry.task.history.first()?;
                Some((entry.owner.clone(), first.message_id.clone(), id.clone()))
            })
            .collect()
    }

    /// Every live task `keep` accepts that is there for `owner` (see
    /// [`TaskStore::visible_to`]), as stored (for `ListTasks`).
    pub(crate) fn matching(&self, owner: Option<&str>, keep: impl Fn(&Task) -> bool) -> Vec<Task> {
        let mut inner = self.lock();
        self.purge_expired(&mut inner);
        self.changed(&mut inner, None);
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

    /// Keeps `call` with the new task `id`, for a restart to resume it (durable stores only).
    pub(crate) fn record_call(&self, id: &str, call: &super::persist::StoredCall) {
        if let Some(persist) = &self.persist {
            persist.record_call(id, call);
        }
    }

    /// Whether this store writes its tasks through to a database.
    pub(crate) fn is_durable(&self) -> bool {
        self.persist.is_some()
    }

    /// Gives the running task `id` the cancellation handle of the run that now carries it.
    pub(crate) fn rebind_cancel(&self, id: &str, cancel: CancellationToken) {
        if let Some(entry) = self.lock().tasks.get_mut(id) {
            entry.cancel = cancel;
        }
    }

    /// Whether the task's client asked to cancel it.
    pub(crate) fn cancel_requested(&self, id: &str) -> bool {
        self.lock()
            .tasks
            .get(id)
            .is_some_and(|e| e.cancel_requested)
    }

    /// A graceful stop whose grace ran out, on a durable store: the tasks still running stay as
    /// they are — in memory and in the database, with their checkpoints — instead of ending
    /// cancelled, so the next start resumes them as it resumes a crashed server's. Their
    /// streams end here without a terminal status (the client subscribes again after the
    /// restart); a task its client asked to cancel still ends. Returns how many were kept (0,
    /// changing nothing, on a store that is not durable).
    pub(crate) fn keep_running_for_restart(&self) -> usize {
        if self.persist.is_none() {
            return 0;
        }
        let mut inner = self.lock();
        inner.kept_for_restart = true;
        let mut kept = 0;
        for entry in inner.tasks.values_mut() {
            if entry.finished_at.is_none() && !entry.cancel_requested {
                entry.subscribers.clear();
                kept += 1;
            }
        }
        kept
    }

    /// Applies one update to the task and sends it to the task's subscribers. Updates after the
    /// terminal status (and of unknown tasks) are dropped.
    pub fn apply(&self, id: &str, update: StreamResponse) {
        let mut inner = self.lock();
        let kept = inner.kept_for_restart;
        let Some(entry) = inner.tasks.get_mut(id) else {
            return;
        };
        if entry.finished_at.is_some() || (kept && !entry.cancel_requested) {
            return;
        }
        let mut finished = false;
        // A streamed artifact's middle chunks ride along with the task's next write.
        let worth_writing = !matches!(
            &update,
            StreamResponse::ArtifactUpdate(event) if event.append && !event.last_chunk
        );
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
                            existing.append_chunk(part);
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
        if worth_writing || finished {
            self.changed(&mut inner, Some(id));
        }
    }

    /// Appends `message` to a running task's history (a client's reply that continues it).
    pub(crate) fn push_history(&self, id: &str, message: Message) {
        let bytes = serde_json::to_vec(&message).map_or(0, |b| b.len());
        let mut guard = self.lock();
        let inner = &mut *guard;
        if let Some(entry) = inner.tasks.get_mut(id)
            && entry.finished_at.is_none()
            && !inner.kept_for_restart
        {
            entry.bytes += bytes;
            inner.bytes += bytes;
            entry.task.history.push(message);
            self.changed(inner, Some(id));
        }
    }

    /// Changes task `id`'s metadata with `change` (finished tasks too: a push delivery can fail
    /// after the end).
    pub(crate) fn update_metadata(
        &self,
        id: &str,
        change: impl FnOnce(&mut serde_json::Map<String, Value>),
    ) {
        let mut guard = self.lock();
        if let Some(entry) = guard.tasks.get_mut(id) {
            change(entry.task.metadata.get_or_insert_with(Default::default));
            self.changed(&mut guard, Some(id));
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

/// Whether `entry` is there for a caller that is the identity `owner` (`None`: sees all).
fn owns(entry: &Entry, owner: Option<&str>) -> bool {
    match (owner, entry.owner.as_deref()) {
        (None, _) => true,
        (Some(caller), Some(started_by)) => caller == started_by,
        (Some(_), None) => false,
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
