//! Durable A2A tasks (`[server] state_db`): the SQLite file that keeps every task of the
//! [`TaskStore`](super::TaskStore) — state, history, artifacts, owner, context — so that `GetTask`, `ListTasks`
//! and `SubscribeToTask` answer after `serve --http` restarts, and the checkpoints of their
//! runs beside them (`checkpoints`).
//!
//! - **Tables** (beside the console's `console_runs` when both share the file): `a2a_tasks`, one
//!   row per stored task (the task as its A2A JSON, its state, owner, finish time, and the call
//!   a restart resumes: skill, arguments, caller), and `a2a_checkpoints` (`checkpoints`).
//! - **Written through**: every change the store makes to a task marks it for one writer
//!   thread, which reads the entry as it is then and upserts its row (or deletes it once the
//!   task was evicted or expired), one transaction per batch. Marks of one task coalesce, so
//!   the queue is bounded by the store's own bounds, never drops a change and never blocks a
//!   call. A task's row is deleted together with its checkpoint when it ends, so a crash
//!   between the two never leaves a finished task to resume. [`TaskStore::persisted`](super::TaskStore::persisted) waits
//!   until what was marked is written (a new task is on disk before its id is answered).
//! - **Read back** at start-up (`reopen`'s [`durable_store`](super::durable_store)): finished tasks keep their TTL from their
//!   finish time; tasks that were running are handed back as [`Interrupted`] for `resume`.
//! - **Never written**: a credential. The task's JSON and the call pass through the process's
//!   redaction set first; a call whose arguments held a configured secret is kept without them
//!   and is not resumable (its task fails after a restart, saying why).
//! - The file is created readable by its owner only (`private_file`): push configs keep
//!   their webhook tokens here.
//! - The file is in WAL mode (`synchronous = NORMAL`: a committed write survives the process
//!   being killed; a power loss may lose the last ones) with a busy timeout, like the history.
//!
//! Not here: the store's bounds and fan-out (`store`), what a restart does with interrupted
//! tasks (`resume`), the checkpoint store (`checkpoints`).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use skillet_core::secrets::REDACTOR;
use tokio::sync::watch;

use super::wire::TaskState;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS a2a_tasks (
    id TEXT PRIMARY KEY,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    owner TEXT,
    finished_at REAL,
    task TEXT NOT NULL,
    call TEXT,
    not_resumable TEXT,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS a2a_checkpoints (
    key TEXT PRIMARY KEY,
    checkpoint BLOB NOT NULL,
    updated_at REAL NOT NULL
);
";

/// Why the state database cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("state database {}: {message}", path.display())]
pub struct StateDbError {
    /// The file.
    pub path: PathBuf,
    /// What SQLite or the file system said.
    pub message: String,
}

/// The state database file (`[server] state_db`): opened and checked once; each user opens
/// its own connection to it.
#[derive(Debug, Clone)]
pub struct StateDb {
    path: PathBuf,
}

impl StateDb {
    /// Opens (creating it, owner-only, and its directory when missing) the database at `path` and checks
    /// that it is a SQLite database whose A2A tables have the expected columns: a corrupt or
    /// foreign file is an error here, before anything is served.
    pub fn open(path: &Path) -> Result<StateDb, StateDbError> {
        let db = StateDb {
            path: path.to_path_buf(),
        };
        crate::private_file::prepare(path, "state database").map_err(|e| db.error(e))?;
        let conn = db.connect()?;
        conn.execute_batch(SCHEMA).map_err(|e| db.error(e))?;
        conn.prepare(
            "SELECT id, context_id, state, owner, finished_at, task, call, not_resumable, \
             updated_at FROM a2a_tasks LIMIT 0",
        )
        .and_then(|_| {
            conn.prepare("SELECT key, checkpoint, updated_at FROM a2a_checkpoints LIMIT 0")
        })
        .map_err(|e| db.error(format!("its A2A tables have another shape ({e})")))?;
        Ok(db)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn error(&self, message: impl std::fmt::Display) -> StateDbError {
        let message = message.to_string();
        let message = if message.contains("not a database") {
            format!(
                "not a usable SQLite database ({message}); move it away or point [server] state_db elsewhere"
            )
        } else {
            message
        };
        StateDbError {
            path: self.path.clone(),
            message,
        }
    }

    /// A new connection (WAL, busy timeout, `synchronous = NORMAL`).
    pub(crate) fn connect(&self) -> Result<Connection, StateDbError> {
        let conn = Connection::open(&self.path).map_err(|e| self.error(e))?;
        conn.busy_timeout(Duration::from_secs(5))
            .and_then(|()| conn.pragma_update(None, "journal_mode", "WAL"))
            .and_then(|()| conn.pragma_update(None, "synchronous", "NORMAL"))
            .map_err(|e| self.error(e))?;
        Ok(conn)
    }
}

/// The call a restart resumes a task with, as its row keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoredCall {
    /// The skill.
    pub skill: String,
    /// Its arguments.
    pub arguments: Map<String, Value>,
    /// The id of the caller that started it (`Caller::id`: who may answer its questions).
    pub caller: String,
}

/// A task that was running when the process stopped, read back at start-up (it is in the
/// store again, as running): `resume` continues or fails it.
#[derive(Debug)]
pub struct Interrupted {
    pub(crate) task_id: String,
    pub(crate) context_id: String,
    /// The call, or why there is none to resume.
    pub(crate) call: Result<StoredCall, String>,
}

/// A task as the writer stores it, read from the store under its lock.
#[derive(Debug)]
pub(crate) struct RowSnapshot {
    pub context_id: String,
    pub state: TaskState,
    pub owner: Option<String>,
    /// Seconds since the Unix epoch.
    pub finished_at: Option<f64>,
    /// The task's A2A JSON (not redacted yet).
    pub task: String,
}

/// The call columns of a new task: the call, or why it is not kept.
type CallColumns = (Option<String>, Option<String>);

#[derive(Default)]
struct Pending {
    ids: Vec<String>,
    marked: HashSet<String>,
    calls: HashMap<String, CallColumns>,
    generation: u64,
    closed: bool,
}

/// The store's link to its writer thread.
pub(crate) struct Persist {
    pending: Mutex<Pending>,
    wake: Condvar,
    written: watch::Sender<u64>,
}

impl std::fmt::Debug for Persist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Persist").finish_non_exhaustive()
    }
}

impl Persist {
    /// A link with nothing marked yet.
    pub(super) fn new() -> Persist {
        let (written, _) = watch::channel(0);
        Persist {
            pending: Mutex::new(Pending::default()),
            wake: Condvar::new(),
            written,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Marks `ids` as changed (their rows are written with the next batch).
    pub(crate) fn mark(&self, ids: impl Iterator<Item = String>) {
        let mut pending = self.lock();
        let mut any = false;
        for id in ids {
            any = true;
            if pending.marked.insert(id.clone()) {
                pending.ids.push(id);
            }
        }
        if any {
            pending.generation += 1;
            self.wake.notify_one();
        }
    }

    /// Keeps the call of the new task `id` for its row (redacted; a call holding a secret is
    /// kept as "not resumable").
    pub(crate) fn record_call(&self, id: &str, call: &StoredCall) {
        let json = serde_json::to_string(call).unwrap_or_default();
        let redacted = REDACTOR.redact(&json);
        let columns = if redacted == json {
            (Some(json), None)
        } else {
            (
                None,
                Some(
                    "its arguments held a secret the configuration names, which is never \
                     written to the state database"
                        .to_owned(),
                ),
            )
        };
        self.lock().calls.insert(id.to_owned(), columns);
        self.mark(std::iter::once(id.to_owned()));
    }

    /// Waits until every change marked so far is written.
    pub(crate) async fn flushed(&self) {
        let target = self.lock().generation;
        let mut written = self.written.subscribe();
        let _ = written.wait_for(|w| *w >= target).await;
    }

    /// Stops the writer once it has written what is marked.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.wake.notify_one();
    }

    /// The next batch: marked ids, their call columns, the generation they reach (`None` once
    /// closed and empty).
    fn next_batch(&self) -> Option<(Vec<String>, HashMap<String, CallColumns>, u64)> {
        let mut pending = self.lock();
        while pending.ids.is_empty() && !pending.closed {
            pending = self
                .wake
                .wait(pending)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if pending.ids.is_empty() {
            return None;
        }
        let ids = std::mem::take(&mut pending.ids);
        pending.marked.clear();
        let calls = ids
            .iter()
            .filter_map(|id| pending.calls.remove(id).map(|c| (id.clone(), c)))
            .collect();
        Some((ids, calls, pending.generation))
    }
}

/// One row as start-up reads it back.
pub(super) struct LoadedRow {
    pub id: String,
    pub owner: Option<String>,
    pub finished_at: Option<f64>,
    pub task: String,
    pub call: Option<String>,
    pub not_resumable: Option<String>,
    /// When the row was last written (seconds since the Unix epoch).
    pub updated_at: f64,
}

/// Every stored task, oldest first.
pub(super) fn load(conn: &Connection) -> rusqlite::Result<Vec<LoadedRow>> {
    let mut statement = conn.prepare(
        "SELECT id, owner, finished_at, task, call, not_resumable, updated_at FROM a2a_tasks \
         ORDER BY rowid",
    )?;
    statement
        .query_map([], |row| {
            Ok(LoadedRow {
                id: row.get(0)?,
                owner: row.get(1)?,
                finished_at: row.get(2)?,
                task: row.get(3)?,
                call: row.get(4)?,
                not_resumable: row.get(5)?,
                updated_at: row.get(6)?,
            })
        })?
        .collect()
}

/// What the writer reads the marked tasks from: their rows as they are now, or `None` once
/// the store is gone (the writer stops).
pub(super) type SnapshotSource =
    Box<dyn Fn(&[String]) -> Option<Vec<(String, Option<RowSnapshot>)>> + Send>;

/// Starts the writer thread: each batch of marked tasks read from `snapshots` and written in
/// one transaction on `conn`.
pub(super) fn spawn_writer(
    conn: Connection,
    persist: Arc<Persist>,
    snapshots: SnapshotSource,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("skillet-a2a-state".into())
        .spawn(move || write_loop(conn, &persist, &snapshots))
        .map(|_| ())
}

fn write_loop(mut conn: Connection, persist: &Persist, snapshots: &SnapshotSource) {
    while let Some((ids, calls, generation)) = persist.next_batch() {
        let Some(rows) = snapshots(&ids) else {
            break;
        };
        if let Err(e) = write_batch(&mut conn, rows, &calls) {
            tracing::warn!(error = %e, "state database: task changes not written");
        }
        persist.written.send_replace(generation);
    }
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn state_name(state: TaskState) -> String {
    serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn write_batch(
    conn: &mut Connection,
    rows: Vec<(String, Option<RowSnapshot>)>,
    calls: &HashMap<String, CallColumns>,
) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    {
        let mut upsert = tx.prepare(
            "INSERT INTO a2a_tasks (id, context_id, state, owner, finished_at, task, call, \
             not_resumable, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
             ON CONFLICT(id) DO UPDATE SET state = excluded.state, owner = excluded.owner, \
             finished_at = excluded.finished_at, task = excluded.task, \
             updated_at = excluded.updated_at, call = COALESCE(excluded.call, call), \
             not_resumable = COALESCE(excluded.not_resumable, not_resumable)",
        )?;
        let mut delete_task = tx.prepare("DELETE FROM a2a_tasks WHERE id = ?1")?;
        let mut delete_checkpoint = tx.prepare("DELETE FROM a2a_checkpoints WHERE key = ?1")?;
        let at = now();
        for (id, row) in rows {
            let Some(row) = row else {
                delete_task.execute([&id])?;
                delete_checkpoint.execute([&id])?;
                continue;
            };
            let task = REDACTOR.redact_owned(row.task);
            let (call, not_resumable) = calls.get(&id).cloned().unwrap_or_default();
            upsert.execute(params![
                id,
                row.context_id,
                state_name(row.state),
                row.owner,
                row.finished_at,
                task,
                call,
                not_resumable,
                at
            ])?;
            if row.state.is_terminal() {
                delete_checkpoint.execute([&id])?;
            }
        }
    }
    tx.commit()
}
