//! [`McpTasks`]: the bounded in-memory store of the MCP Tasks extension's tasks
//! (`io.modelcontextprotocol/tasks`, SEP-2663) — each skill call started as a task, its state,
//! its latest progress line, its outcome and the cancellation token of its run.
//!
//! Bounds, as the A2A task store's: at most [`MAX_TASKS`] tasks; a finished task (completed,
//! failed or cancelled) stays readable for [`FINISHED_TTL`] after it finished, then is
//! forgotten (`tasks/get` → `-32602`). Running tasks never expire and are never evicted: when
//! the store is full, expired tasks go first, then the oldest finished ones; if every task is
//! still running the new call is refused ([`TasksFull`]). A task's `ttlMs` (counted from its
//! creation) is `null` while it runs and, once it finished, the time until it is forgotten.
//!
//! Owner-scoped: a task started by an identity under `[auth]` is only that identity's; for any
//! other caller it is not found, exactly like a task id that never existed.
//!
//! In memory only: a restart forgets every MCP task (`[server] state_db` keeps A2A tasks only).
//!
//! Not here: starting a call as a task and its event sink (`tasks_run`), the methods' dispatch
//! (`handler`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::model::{DetailedTask, ErrorData, JsonObject, Task, TaskPayload, TaskStatus};
use tokio_util::sync::CancellationToken;

/// Most tasks kept at once.
pub(crate) const MAX_TASKS: usize = 1000;
/// How long a finished task stays readable.
pub(crate) const FINISHED_TTL: Duration = Duration::from_secs(3600);
/// The polling interval suggested to clients.
pub(crate) const POLL_INTERVAL_MS: u64 = 500;

/// Every stored task is still running and the store holds [`MAX_TASKS`] of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "too many MCP tasks are running ({max_tasks}); wait for one to finish or cancel one, then \
     call again"
)]
pub(crate) struct TasksFull {
    /// The store's capacity.
    pub(crate) max_tasks: usize,
}

/// The tasks of one server (shared by all its MCP sessions).
#[derive(Clone, Debug)]
pub(crate) struct McpTasks(Arc<Mutex<Inner>>);

#[derive(Debug)]
struct Inner {
    tasks: HashMap<String, Entry>,
    max_tasks: usize,
    ttl: Duration,
}

#[derive(Debug)]
struct Entry {
    owner: Option<String>,
    created: Instant,
    created_at: String,
    updated_at: String,
    message: Option<String>,
    payload: TaskPayload,
    cancel: CancellationToken,
    finished: Option<Instant>,
}

impl Default for McpTasks {
    fn default() -> Self {
        McpTasks::with_limits(MAX_TASKS, FINISHED_TTL)
    }
}

impl McpTasks {
    /// A store of at most `max_tasks` tasks (at least one), finished ones kept for `ttl`.
    pub(crate) fn with_limits(max_tasks: usize, ttl: Duration) -> Self {
        McpTasks(Arc::new(Mutex::new(Inner {
            tasks: HashMap::new(),
            max_tasks: max_tasks.max(1),
            ttl,
        })))
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new `working` task owned by `owner`, whose run `cancel` stops; its seed state.
    pub(crate) fn create(
        &self,
        owner: Option<&str>,
        cancel: CancellationToken,
    ) -> Result<Task, TasksFull> {
        let mut inner = self.inner();
        inner.forget_expired();
        while inner.tasks.len() >= inner.max_tasks {
            let oldest = inner
                .tasks
                .iter()
                .filter_map(|(id, entry)| entry.finished.map(|at| (at, id.clone())))
                .min();
            let Some((_, id)) = oldest else {
                return Err(TasksFull {
                    max_tasks: inner.max_tasks,
                });
            };
            inner.tasks.remove(&id);
        }
        let id = skillet_protocol::new_id();
        let now = now_rfc3339();
        let entry = Entry {
            owner: owner.map(str::to_owned),
            created: Instant::now(),
            created_at: now.clone(),
            updated_at: now,
            message: None,
            payload: TaskPayload::Working,
            cancel,
            finished: None,
        };
        let task = entry.task(&id, inner.ttl);
        inner.tasks.insert(id, entry);
        Ok(task)
    }

    /// Notes what the running task `id` is doing now (shown as its `statusMessage`).
    pub(crate) fn progress(&self, id: &str, message: String) {
        if let Some(entry) = self.inner().tasks.get_mut(id)
            && entry.finished.is_none()
        {
            entry.message = Some(message);
            entry.updated_at = now_rfc3339();
        }
    }

    /// Records the outcome of the task `id`'s run: its result, or the JSON-RPC error it ended
    /// with. A task already cancelled stays cancelled.
    pub(crate) fn finish(&self, id: &str, outcome: Result<JsonObject, ErrorData>) {
        let mut inner = self.inner();
        let Some(entry) = inner.tasks.get_mut(id) else {
            return;
        };
        if entry.finished.is_some() {
            return;
        }
        entry.payload = match outcome {
            Ok(result) => TaskPayload::Completed { result },
            Err(error) => TaskPayload::Failed {
                error: match serde_json::to_value(&error) {
                    Ok(serde_json::Value::Object(object)) => object,
                    _ => JsonObject::new(),
                },
            },
        };
        entry.message = None;
        entry.finished = Some(Instant::now());
        entry.updated_at = now_rfc3339();
    }

    /// The task `id` as `owner` may see it, or `-32602` (unknown, expired, or another
    /// identity's).
    pub(crate) fn get(&self, id: &str, owner: Option<&str>) -> Result<DetailedTask, ErrorData> {
        let mut inner = self.inner();
        inner.forget_expired();
        let ttl = inner.ttl;
        let entry = inner.visible(id, owner)?;
        Ok(DetailedTask::new(
            entry.task(id, ttl),
            entry.payload.clone(),
        ))
    }

    /// Cancels the task `id`'s run and marks it `cancelled`; a task already finished is left as
    /// it is (the ack is the same). `-32602` as for [`McpTasks::get`].
    pub(crate) fn cancel(&self, id: &str, owner: Option<&str>) -> Result<(), ErrorData> {
        let mut inner = self.inner();
        inner.forget_expired();
        let entry = inner.visible(id, owner)?;
        if entry.finished.is_none() {
            entry.cancel.cancel();
            entry.payload = TaskPayload::Cancelled;
            entry.message = Some("cancelled by the client".to_owned());
            entry.finished = Some(Instant::now());
            entry.updated_at = now_rfc3339();
        }
        Ok(())
    }
}

impl Inner {
    fn forget_expired(&mut self) {
        let ttl = self.ttl;
        self.tasks
            .retain(|_, entry| entry.finished.is_none_or(|at| at.elapsed() < ttl));
    }

    fn visible(&mut self, id: &str, owner: Option<&str>) -> Result<&mut Entry, ErrorData> {
        match self.tasks.get_mut(id) {
            Some(entry) if entry.owner.is_none() || entry.owner.as_deref() == owner => Ok(entry),
            _ => Err(ErrorData::invalid_params(
                format!(
                    "no task {id}: it never existed, was forgotten {} s after it finished, or \
                     belongs to another identity; start the call again",
                    self.ttl.as_secs()
                ),
                Some(serde_json::json!({ "taskId": id })),
            )),
        }
    }
}

impl Entry {
    fn task(&self, id: &str, ttl: Duration) -> Task {
        let mut task = Task::new(
            id,
            self.payload.status(),
            self.created_at.clone(),
            self.updated_at.clone(),
        )
        .with_poll_interval_ms(POLL_INTERVAL_MS);
        if let Some(finished) = self.finished {
            let lived = finished.saturating_duration_since(self.created);
            task = task.with_ttl_ms(u64::try_from((lived + ttl).as_millis()).unwrap_or(u64::MAX));
        }
        if let Some(message) = &self.message {
            task = task.with_status_message(message.clone());
        }
        if task.status == TaskStatus::Working {
            task.ttl_ms = None;
        }
        task
    }
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result() -> JsonObject {
        serde_json::from_value(serde_json::json!({"content": [], "isError": false})).unwrap()
    }

    #[test]
    fn a_task_runs_then_completes_with_its_result_inlined() {
        let tasks = McpTasks::default();
        let task = tasks.create(None, CancellationToken::new()).unwrap();
        assert_eq!(task.status, TaskStatus::Working);
        assert_eq!(task.ttl_ms, None);
        tasks.progress(&task.task_id, "50% halfway".into());
        let now = tasks.get(&task.task_id, None).unwrap();
        assert_eq!(now.task.status_message.as_deref(), Some("50% halfway"));
        tasks.finish(&task.task_id, Ok(result()));
        let done = tasks.get(&task.task_id, None).unwrap();
        assert_eq!(done.payload, TaskPayload::Completed { result: result() });
        assert!(done.task.ttl_ms.unwrap() >= FINISHED_TTL.as_millis() as u64);
    }

    #[test]
    fn cancelling_stops_the_run_and_the_task_stays_cancelled() {
        let tasks = McpTasks::default();
        let cancel = CancellationToken::new();
        let task = tasks.create(None, cancel.clone()).unwrap();
        tasks.cancel(&task.task_id, None).unwrap();
        assert!(cancel.is_cancelled());
        tasks.finish(&task.task_id, Ok(result()));
        assert_eq!(
            tasks.get(&task.task_id, None).unwrap().status(),
            TaskStatus::Cancelled
        );
        // Idempotent on a finished task.
        tasks.cancel(&task.task_id, None).unwrap();
    }

    #[test]
    fn another_identitys_task_is_not_found() {
        let tasks = McpTasks::default();
        let task = tasks
            .create(Some("alice"), CancellationToken::new())
            .unwrap();
        assert!(tasks.get(&task.task_id, Some("alice")).is_ok());
        let error = tasks.get(&task.task_id, Some("bob")).unwrap_err();
        assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(tasks.cancel(&task.task_id, Some("bob")).is_err());
        assert!(tasks.get(&task.task_id, None).is_err());
        assert!(tasks.get("nope", None).is_err());
    }

    #[test]
    fn a_full_store_evicts_the_oldest_finished_task_and_refuses_when_all_run() {
        let tasks = McpTasks::with_limits(2, FINISHED_TTL);
        let first = tasks.create(None, CancellationToken::new()).unwrap();
        let second = tasks.create(None, CancellationToken::new()).unwrap();
        assert_eq!(
            tasks.create(None, CancellationToken::new()),
            Err(TasksFull { max_tasks: 2 })
        );
        tasks.finish(&first.task_id, Ok(result()));
        let third = tasks.create(None, CancellationToken::new()).unwrap();
        assert!(tasks.get(&first.task_id, None).is_err());
        assert!(tasks.get(&second.task_id, None).is_ok());
        assert!(tasks.get(&third.task_id, None).is_ok());
    }

    #[test]
    fn a_finished_task_is_forgotten_after_its_ttl() {
        let tasks = McpTasks::with_limits(10, Duration::ZERO);
        let task = tasks.create(None, CancellationToken::new()).unwrap();
        tasks.finish(&task.task_id, Ok(result()));
        assert!(tasks.get(&task.task_id, None).is_err());
    }
}
