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
//! In memory, or durable ([`McpTasks::durable`], `[server] state_db`): each task's creation,
//! end and forgetting is written through to the state database (`tasks_persist`), and a
//! restart reads the rows back — a finished task answers `tasks/get` again (same owner, for
//! the rest of its TTL counted from when it finished); a task whose call was running when the
//! server stopped is `failed` with a JSON-RPC error saying so (an MCP task's call is not
//! resumed); expired rows are deleted, and the same bound holds (the oldest finished beyond
//! [`MAX_TASKS`] are deleted). Times are wall-clock seconds, so they survive the restart.
//!
//! Not here: starting a call as a task and its event sink (`tasks_run`), the rows and their
//! writer (`tasks_persist`), the methods' dispatch (`handler`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::{DetailedTask, ErrorData, JsonObject, Task, TaskPayload, TaskStatus};
use tokio_util::sync::CancellationToken;

use super::tasks_persist::{TaskRow, TasksWriter, load};
use crate::a2a::{StateDb, StateDbError};

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

/// The tasks of one server (shared by all its MCP sessions): in memory
/// ([`Default`]), or durable in the state database ([`McpTasks::durable`]).
#[derive(Clone, Debug)]
pub struct McpTasks(Arc<Mutex<Inner>>);

/// What [`McpTasks::durable`] found in the state database.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TasksReadBack {
    /// Tasks read back (every one of them finished).
    pub kept: usize,
    /// Of those, tasks that were running when the server stopped, now `failed`.
    pub failed: usize,
}

#[derive(Debug)]
struct Inner {
    tasks: HashMap<String, Entry>,
    max_tasks: usize,
    ttl: Duration,
    writer: Option<Arc<TasksWriter>>,
}

#[derive(Debug)]
struct Entry {
    owner: Option<String>,
    skill: String,
    /// Seconds since the Unix epoch.
    created: f64,
    created_at: String,
    updated_at: String,
    message: Option<String>,
    payload: TaskPayload,
    cancel: CancellationToken,
    /// Seconds since the Unix epoch.
    finished: Option<f64>,
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
            writer: None,
        })))
    }

    /// The durable store over `db` (`[server] state_db`): its rows read back (see the module
    /// doc), its writer started. A table of another shape is an error naming the file.
    pub fn durable(db: &StateDb) -> Result<(McpTasks, TasksReadBack), StateDbError> {
        McpTasks::durable_with_limits(db, MAX_TASKS, FINISHED_TTL)
    }

    pub(crate) fn durable_with_limits(
        db: &StateDb,
        max_tasks: usize,
        ttl: Duration,
    ) -> Result<(McpTasks, TasksReadBack), StateDbError> {
        let (conn, rows) = load(db)?;
        let writer = Arc::new(TasksWriter::spawn(db, conn)?);
        let tasks = McpTasks::with_limits(max_tasks, ttl);
        let mut read_back = TasksReadBack::default();
        {
            let mut inner = tasks.inner();
            let now = unix_now();
            for row in rows {
                let id = row.id.clone();
                match Entry::from_row(row, now) {
                    Ok((entry, interrupted)) => {
                        if interrupted {
                            read_back.failed += 1;
                            writer.upsert(entry.row(&id));
                        }
                        inner.tasks.insert(id, entry);
                    }
                    Err(why) => {
                        tracing::warn!(task_id = %id, "state database: a stored MCP task {why}; dropped");
                        writer.delete(id);
                    }
                }
            }
            inner.writer = Some(Arc::clone(&writer));
            inner.forget_expired();
            let max_tasks = inner.max_tasks;
            inner.evict_beyond(max_tasks);
            read_back.kept = inner.tasks.len();
            read_back.failed = read_back.failed.min(read_back.kept);
        }
        Ok((tasks, read_back))
    }

    /// Waits until every change so far is in the state database (at once when in memory).
    pub async fn persisted(&self) {
        let writer = self.inner().writer.clone();
        if let Some(writer) = writer {
            writer.flushed().await;
        }
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new `working` task owned by `owner`, calling `skill`, whose run `cancel` stops; its
    /// seed state.
    pub(crate) fn create(
        &self,
        owner: Option<&str>,
        skill: &str,
        cancel: CancellationToken,
    ) -> Result<Task, TasksFull> {
        let mut inner = self.inner();
        inner.forget_expired();
        let room = inner.max_tasks - 1;
        if !inner.evict_beyond(room) {
            return Err(TasksFull {
                max_tasks: inner.max_tasks,
            });
        }
        let id = skillet_protocol::new_id();
        let now = now_rfc3339();
        let entry = Entry {
            owner: owner.map(str::to_owned),
            skill: skill.to_owned(),
            created: unix_now(),
            created_at: now.clone(),
            updated_at: now,
            message: None,
            payload: TaskPayload::Working,
            cancel,
            finished: None,
        };
        let task = entry.task(&id, inner.ttl);
        inner.write(&id, &entry);
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
        entry.finished = Some(unix_now());
        entry.updated_at = now_rfc3339();
        let entry = &inner.tasks[id];
        inner.write(id, entry);
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
            entry.finished = Some(unix_now());
            entry.updated_at = now_rfc3339();
            let entry = &inner.tasks[id];
            inner.write(id, entry);
        }
        Ok(())
    }
}

impl Inner {
    fn forget_expired(&mut self) {
        let ttl = self.ttl.as_secs_f64();
        let now = unix_now();
        let expired: Vec<String> = self
            .tasks
            .iter()
            .filter(|(_, entry)| entry.finished.is_some_and(|at| now - at >= ttl))
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            self.forget(id);
        }
    }

    /// Forgets the oldest finished tasks until at most `keep` remain; `false` when only
    /// running tasks are left and there are still more than `keep`.
    fn evict_beyond(&mut self, keep: usize) -> bool {
        while self.tasks.len() > keep {
            let oldest = self
                .tasks
                .iter()
                .filter_map(|(id, entry)| entry.finished.map(|at| (at, id)))
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, id)| id.clone());
            let Some(id) = oldest else {
                return false;
            };
            self.forget(id);
        }
        true
    }

    fn forget(&mut self, id: String) {
        self.tasks.remove(&id);
        if let Some(writer) = &self.writer {
            writer.delete(id);
        }
    }

    /// Writes `entry` through to the state database, when durable.
    fn write(&self, id: &str, entry: &Entry) {
        if let Some(writer) = &self.writer {
            writer.upsert(entry.row(id));
        }
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
            let lived = Duration::try_from_secs_f64(finished - self.created).unwrap_or_default();
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

impl Entry {
    /// The row of the task `id`.
    fn row(&self, id: &str) -> TaskRow {
        let outcome = match &self.payload {
            TaskPayload::Completed { result } => serde_json::to_string(result).ok(),
            TaskPayload::Failed { error } => serde_json::to_string(error).ok(),
            _ => None,
        };
        TaskRow {
            id: id.to_owned(),
            owner: self.owner.clone(),
            skill: self.skill.clone(),
            status: status_name(self.payload.status()),
            outcome,
            message: self.message.clone(),
            created_at: self.created_at.clone(),
            updated_at: self.updated_at.clone(),
            created_unix: self.created,
            finished_unix: self.finished,
        }
    }

    /// The task a row keeps, and whether it was running when the server stopped (it is
    /// `failed` now, at `now`); why not when the row does not decode.
    fn from_row(row: TaskRow, now: f64) -> Result<(Entry, bool), String> {
        let object = |outcome: Option<String>| -> Result<JsonObject, String> {
            serde_json::from_str(outcome.as_deref().unwrap_or_default())
                .map_err(|e| format!("has an outcome that does not decode ({e})"))
        };
        let mut entry = Entry {
            owner: row.owner,
            skill: row.skill,
            created: row.created_unix,
            created_at: row.created_at,
            updated_at: row.updated_at,
            message: row.message,
            payload: TaskPayload::Cancelled,
            cancel: CancellationToken::new(),
            finished: row.finished_unix,
        };
        let interrupted = match row.status.as_str() {
            "completed" => {
                entry.payload = TaskPayload::Completed {
                    result: object(row.outcome)?,
                };
                false
            }
            "failed" => {
                entry.payload = TaskPayload::Failed {
                    error: object(row.outcome)?,
                };
                false
            }
            "cancelled" => false,
            _ => {
                entry.payload = TaskPayload::Failed {
                    error: interrupted_error(&row.id, &entry.skill),
                };
                entry.message = None;
                entry.finished = None;
                true
            }
        };
        if entry.finished.is_none() {
            entry.finished = Some(now);
            entry.updated_at = now_rfc3339();
        }
        Ok((entry, interrupted))
    }
}

/// The error of a task whose call was running when the server stopped.
fn interrupted_error(id: &str, skill: &str) -> JsonObject {
    let error = ErrorData::internal_error(
        format!(
            "task {id} did not finish: the server stopped while its call of {skill:?} was              running, and an MCP task's call is not resumed after a restart; call the tool again"
        ),
        Some(serde_json::json!({ "taskId": id, "reason": "server restarted" })),
    );
    match serde_json::to_value(&error) {
        Ok(serde_json::Value::Object(object)) => object,
        _ => JsonObject::new(),
    }
}

/// `status` as the wire spells it (`working`, `completed`, …).
fn status_name(status: TaskStatus) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
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
        let task = tasks
            .create(None, "echo", CancellationToken::new())
            .unwrap();
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
        let task = tasks.create(None, "echo", cancel.clone()).unwrap();
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
            .create(Some("alice"), "echo", CancellationToken::new())
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
        let first = tasks
            .create(None, "echo", CancellationToken::new())
            .unwrap();
        let second = tasks
            .create(None, "echo", CancellationToken::new())
            .unwrap();
        assert_eq!(
            tasks.create(None, "echo", CancellationToken::new()),
            Err(TasksFull { max_tasks: 2 })
        );
        tasks.finish(&first.task_id, Ok(result()));
        let third = tasks
            .create(None, "echo", CancellationToken::new())
            .unwrap();
        assert!(tasks.get(&first.task_id, None).is_err());
        assert!(tasks.get(&second.task_id, None).is_ok());
        assert!(tasks.get(&third.task_id, None).is_ok());
    }

    #[test]
    fn a_finished_task_is_forgotten_after_its_ttl() {
        let tasks = McpTasks::with_limits(10, Duration::ZERO);
        let task = tasks
            .create(None, "echo", CancellationToken::new())
            .unwrap();
        tasks.finish(&task.task_id, Ok(result()));
        assert!(tasks.get(&task.task_id, None).is_err());
    }
}
