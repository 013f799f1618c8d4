//! The run history: every call the host core answered, from any door, in SQLite
//! (`[console] history_db`; the `console_runs` table — and `console_evals`, the saved eval reports
//! of `evals` —, beside whatever else shares the file).
//!
//! - one writer thread owns a connection and takes rows from a bounded queue, so recording
//!   never blocks a call (a full queue drops the row with a warning); after each insert it
//!   prunes to the count and age bounds ([`HistoryLimits`]);
//! - reads run on the blocking pool over a second connection; each first waits until the rows
//!   queued before it are written, so a run whose answer a client has seen is listed;
//! - the file is in WAL mode with a busy timeout, so another process or another table's writer
//!   (durable A2A tasks share the default file) waits instead of failing;
//! - input and answer are kept only when content capture is on; otherwise a row holds the
//!   skill, caller, outcome, error code, model, duration, usage, cost, turns and repairs (the
//!   answers rejected as final) — no text of the run;
//! - each row says the door its call came through (console, A2E, MCP, A2A, NATS), and a list
//!   filters on it.
//!
//! Not here: parsing the list's query string (`super::query`), the HTTP routes (`super::api`),
//! the tables and their migration (`super::history_schema`), what of a call a row keeps
//! (`super::history_row`).

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params, params_from_iter, types::Value as SqlValue};
use serde::Serialize;
use serde_json::Value;

use super::history_row::Row;
use super::history_schema::{connect, migrate};
use super::query::RunFilter;

/// Default most runs kept.
pub const DEFAULT_MAX_RUNS: u32 = 1000;
/// Default longest a run is kept.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(30 * 24 * 3600);
/// Rows waiting for the writer before new ones are dropped.
const QUEUE: usize = 1024;

/// How much history is kept.
#[derive(Debug, Clone, Copy)]
pub struct HistoryLimits {
    /// The most runs (older ones are deleted first).
    pub max_runs: u32,
    /// The longest a run is kept.
    pub max_age: Duration,
}

impl Default for HistoryLimits {
    fn default() -> Self {
        HistoryLimits {
            max_runs: DEFAULT_MAX_RUNS,
            max_age: DEFAULT_MAX_AGE,
        }
    }
}

/// Why the history could not be opened or read.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The database (or its directory) could not be opened or created.
    #[error("history database {path}: {message}")]
    Open {
        /// The file.
        path: PathBuf,
        /// What SQLite or the file system said.
        message: String,
    },
    /// A query failed.
    #[error("history database: {0}")]
    Query(String),
}

enum Job {
    Insert(Box<Row>),
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// A run as listed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunSummary {
    /// The history's id of the run (not the call id: those repeat across doors).
    pub id: i64,
    /// The call's id.
    pub req_id: String,
    /// The skill.
    pub skill: String,
    /// Who called (an identity id, `local` or `anonymous`).
    pub caller: String,
    /// When it was admitted (seconds since the Unix epoch).
    pub started_at: f64,
    /// When it answered.
    pub finished_at: f64,
    /// The result's duration, when it ran.
    pub duration_ms: Option<i64>,
    /// `success`, `failure` or `rejected`.
    pub outcome: String,
    /// The result's or the rejection's error code.
    pub error_code: Option<String>,
    /// The model of its first turn (or the override's).
    pub model: Option<String>,
    /// The door it came through (`console`, `a2e`, `mcp`, `a2a`, `nats`); unknown for runs
    /// recorded before the history kept it.
    pub door: Option<String>,
    /// Input tokens over all turns, when reported.
    pub input_tokens: Option<i64>,
    /// Output tokens over all turns, when reported.
    pub output_tokens: Option<i64>,
    /// The cost estimate's amount.
    pub cost: Option<f64>,
    /// Its currency.
    pub currency: Option<String>,
    /// Turns used.
    pub turns: Option<i64>,
    /// Answers rejected as the final answer (each one a repair turn); unknown for runs recorded
    /// before the history counted them.
    pub repairs: Option<i64>,
    /// Whether the input and answer were kept.
    pub content_kept: bool,
}

/// A run with what was kept of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRecord {
    /// Its summary.
    #[serde(flatten)]
    pub summary: RunSummary,
    /// The error message (only with content capture).
    pub error: Option<String>,
    /// The call's arguments (only with content capture).
    pub arguments: Option<Value>,
    /// The whole `skill/call/resp` (only with content capture).
    pub response: Option<Value>,
}

/// The history database. Share it in an `Arc`.
#[derive(Debug)]
pub struct History {
    path: PathBuf,
    reader: Arc<Mutex<Connection>>,
    jobs: SyncSender<Job>,
}

impl History {
    /// Opens (creating it, owner-only, and its directory when missing) the database at `path` and starts
    /// its writer thread.
    pub fn open(path: &Path, limits: HistoryLimits) -> Result<History, HistoryError> {
        let open_error = |message: String| HistoryError::Open {
            path: path.to_path_buf(),
            message,
        };
        crate::private_file::prepare(path, "run history").map_err(|e| open_error(e.to_string()))?;
        let writer = connect(path).map_err(open_error)?;
        migrate(&writer).map_err(|e| open_error(e.to_string()))?;
        let reader = connect(path).map_err(open_error)?;
        let (jobs, queue) = mpsc::sync_channel(QUEUE);
        std::thread::Builder::new()
            .name("skillet-history".into())
            .spawn(move || write_loop(&writer, &queue, limits))
            .map_err(|e| open_error(format!("cannot start its writer thread: {e}")))?;
        Ok(History {
            path: path.to_path_buf(),
            reader: Arc::new(Mutex::new(reader)),
            jobs,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn push(&self, row: Row) {
        match self.jobs.try_send(Job::Insert(Box::new(row))) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                tracing::warn!("run history: the writer is behind; a run was not recorded");
            }
            Err(TrySendError::Disconnected(_)) => {
                tracing::warn!("run history: the writer stopped; a run was not recorded");
            }
        }
    }

    /// Waits until every row queued before this call is written.
    pub async fn flush(&self) {
        let (done, wait) = tokio::sync::oneshot::channel();
        let jobs = self.jobs.clone();
        // `send` blocks only while the queue is full: off the runtime.
        let sent = tokio::task::spawn_blocking(move || jobs.send(Job::Flush(done)).is_ok()).await;
        if sent.unwrap_or(false) {
            let _ = wait.await;
        }
    }

    /// The runs matching `filter`, newest first.
    pub async fn list(&self, filter: RunFilter) -> Result<Vec<RunSummary>, HistoryError> {
        self.flush().await;
        self.read(move |conn| list(conn, &filter)).await
    }

    /// The run `id`, or `None` when there is none (never recorded, or pruned).
    pub async fn get(&self, id: i64) -> Result<Option<RunRecord>, HistoryError> {
        self.flush().await;
        self.read(move |conn| get(conn, id)).await
    }

    /// Runs `query` on the reading connection, on the blocking pool.
    pub(super) async fn read<T: Send + 'static>(
        &self,
        query: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, HistoryError> {
        let reader = Arc::clone(&self.reader);
        tokio::task::spawn_blocking(move || {
            let conn = reader.lock().unwrap_or_else(PoisonError::into_inner);
            query(&conn).map_err(|e| HistoryError::Query(e.to_string()))
        })
        .await
        .map_err(|e| HistoryError::Query(e.to_string()))?
    }
}

/// The most rows written in one transaction.
const MAX_BATCH: usize = 256;

/// Writes what is queued: every row waiting (up to [`MAX_BATCH`]) in one transaction, pruned
/// once after it — one commit per batch instead of three per row, which is what keeps the
/// writer ahead of a busy server.
fn write_loop(conn: &Connection, queue: &Receiver<Job>, limits: HistoryLimits) {
    while let Ok(first) = queue.recv() {
        let mut rows = Vec::new();
        let mut flushed = Vec::new();
        let mut next = Some(first);
        while let Some(job) = next {
            match job {
                Job::Insert(row) => rows.push(row),
                Job::Flush(done) => flushed.push(done),
            }
            next = (rows.len() < MAX_BATCH)
                .then(|| queue.try_recv().ok())
                .flatten();
        }
        if let Some(newest) = rows.iter().map(|r| r.finished_at).reduce(f64::max)
            && let Err(e) = write_batch(conn, &rows, limits, newest)
        {
            tracing::warn!(error = %e, runs = rows.len(), "run history: runs were not recorded");
        }
        for done in flushed {
            let _ = done.send(());
        }
    }
}

fn write_batch(
    conn: &Connection,
    rows: &[Box<Row>],
    limits: HistoryLimits,
    now: f64,
) -> rusqlite::Result<()> {
    let batch = conn.unchecked_transaction()?;
    for row in rows {
        insert(&batch, row)?;
    }
    prune(&batch, limits, now)?;
    batch.commit()
}

fn insert(conn: &Connection, row: &Row) -> rusqlite::Result<()> {
    let Row {
        req_id,
        skill,
        caller,
        started_at,
        finished_at,
        duration_ms,
        outcome,
        error_code,
        error,
        model,
        input_tokens,
        output_tokens,
        cost,
        currency,
        turns,
        repairs,
        door,
        arguments,
        response,
    } = row;
    conn.execute(
        "INSERT INTO console_runs (req_id, skill, caller, started_at, finished_at, duration_ms,
            outcome, error_code, error, model, input_tokens, output_tokens, cost, currency, turns,
            arguments, response, repairs, door)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
            ?19)",
        params![
            req_id,
            skill,
            caller,
            started_at,
            finished_at,
            duration_ms,
            outcome,
            error_code,
            error,
            model,
            input_tokens,
            output_tokens,
            cost,
            currency,
            turns,
            arguments,
            response,
            repairs,
            door
        ],
    )?;
    Ok(())
}

fn prune(conn: &Connection, limits: HistoryLimits, now: f64) -> rusqlite::Result<()> {
    conn.execute(
        "DELETE FROM console_runs WHERE started_at < ?1",
        params![now - limits.max_age.as_secs_f64()],
    )?;
    conn.execute(
        "DELETE FROM console_runs WHERE id <= (SELECT id FROM console_runs ORDER BY id DESC
         LIMIT 1 OFFSET ?1)",
        params![limits.max_runs],
    )?;
    Ok(())
}

const SUMMARY_COLUMNS: &str = "id, req_id, skill, caller, started_at, finished_at, duration_ms,
    outcome, error_code, model, input_tokens, output_tokens, cost, currency, turns,
    arguments IS NOT NULL OR response IS NOT NULL, repairs, door";

fn summary(row: &rusqlite::Row<'_>) -> rusqlite::Result<RunSummary> {
    Ok(RunSummary {
        id: row.get(0)?,
        req_id: row.get(1)?,
        skill: row.get(2)?,
        caller: row.get(3)?,
        started_at: row.get(4)?,
        finished_at: row.get(5)?,
        duration_ms: row.get(6)?,
        outcome: row.get(7)?,
        error_code: row.get(8)?,
        model: row.get(9)?,
        input_tokens: row.get(10)?,
        output_tokens: row.get(11)?,
        cost: row.get(12)?,
        currency: row.get(13)?,
        turns: row.get(14)?,
        content_kept: row.get(15)?,
        repairs: row.get(16)?,
        door: row.get(17)?,
    })
}

fn list(conn: &Connection, filter: &RunFilter) -> rusqlite::Result<Vec<RunSummary>> {
    let mut sql = format!("SELECT {SUMMARY_COLUMNS} FROM console_runs WHERE 1 = 1");
    let mut values: Vec<SqlValue> = Vec::new();
    let mut condition = |clause: &str, value: SqlValue| {
        sql.push_str(" AND ");
        sql.push_str(clause);
        values.push(value);
    };
    let RunFilter {
        skill,
        outcome,
        error_code,
        model,
        door,
        since,
        until,
        before,
        limit,
        visible_skills,
    } = filter;
    if let Some(skill) = skill {
        condition("skill = ?", SqlValue::Text(skill.clone()));
    }
    if let Some(outcome) = outcome {
        condition("outcome = ?", SqlValue::Text(outcome.as_str().to_owned()));
    }
    if let Some(code) = error_code {
        condition("error_code = ?", SqlValue::Text(code.clone()));
    }
    if let Some(model) = model {
        condition("model = ?", SqlValue::Text(model.clone()));
    }
    if let Some(door) = door {
        condition("door = ?", SqlValue::Text(door.as_str().to_owned()));
    }
    if let Some(since) = since {
        condition("started_at >= ?", SqlValue::Real(*since));
    }
    if let Some(until) = until {
        condition("started_at < ?", SqlValue::Real(*until));
    }
    if let Some(before) = before {
        condition("id < ?", SqlValue::Integer(*before));
    }
    if let Some(names) = visible_skills {
        let marks = vec!["?"; names.len()].join(", ");
        sql.push_str(&format!(" AND skill IN ({marks})"));
        values.extend(names.iter().map(|name| SqlValue::Text(name.clone())));
    }
    sql.push_str(" ORDER BY id DESC LIMIT ?");
    values.push(SqlValue::Integer(i64::from(*limit)));
    let mut statement = conn.prepare(&sql)?;
    let rows = statement.query_map(params_from_iter(values), summary)?;
    rows.collect()
}

fn get(conn: &Connection, id: i64) -> rusqlite::Result<Option<RunRecord>> {
    conn.query_row(
        &format!(
            "SELECT {SUMMARY_COLUMNS}, error, arguments, response FROM console_runs WHERE id = ?1"
        ),
        params![id],
        |row| {
            let json = |text: Option<String>| text.and_then(|t| serde_json::from_str(&t).ok());
            Ok(RunRecord {
                summary: summary(row)?,
                error: row.get(18)?,
                arguments: json(row.get(19)?),
                response: json(row.get(20)?),
            })
        },
    )
    .optional()
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
