//! Durable MCP tasks (`[server] state_db`): the `mcp_tasks` table of the state database (the
//! file A2A tasks are kept in, `crate::a2a::StateDb`), one row per task of the Tasks extension
//! — its id, owner, skill, status, its outcome once it ended (the call's result, or the
//! JSON-RPC error), its timestamps and finish time — so that `tasks/get` answers the same
//! identity after `serve --http` restarts.
//!
//! - **Written through**: a task's creation and its end (completed, failed, cancelled) send its
//!   row to one writer thread; a task the store forgets (expired, evicted) sends its deletion.
//!   Progress lines are not written (a restarted task is never running). The queue holds at
//!   most a few operations per stored task (the store's own bound), never drops one and never
//!   blocks a call; [`TasksWriter::flushed`] waits until every operation sent is written.
//! - **Read back** at start-up ([`load`]): the store decides what each row becomes (`tasks`).
//! - **Never written**: a configured secret — the outcome passes through the process's
//!   redaction set first, as A2A tasks do.
//!
//! Not here: the store, its bounds and what a restart does with each row (`tasks`), the file
//! itself (`crate::a2a::StateDb`).

use rusqlite::{Connection, params};
use skillet_core::secrets::REDACTOR;

use crate::a2a::write_through::WriteThrough;
use crate::a2a::{StateDb, StateDbError};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS mcp_tasks (
    id TEXT PRIMARY KEY,
    owner TEXT,
    skill TEXT NOT NULL,
    status TEXT NOT NULL,
    outcome TEXT,
    message TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    created_unix REAL NOT NULL,
    finished_unix REAL
);
";

const COLUMNS: &str = "id, owner, skill, status, outcome, message, created_at, updated_at, \
                       created_unix, finished_unix";

/// One task as its row keeps it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TaskRow {
    pub id: String,
    pub owner: Option<String>,
    pub skill: String,
    /// `working`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// The result object (`completed`) or JSON-RPC error object (`failed`), as JSON.
    pub outcome: Option<String>,
    pub message: Option<String>,
    /// RFC 3339, as `tasks/get` shows them.
    pub created_at: String,
    pub updated_at: String,
    /// Seconds since the Unix epoch.
    pub created_unix: f64,
    pub finished_unix: Option<f64>,
}

pub(crate) enum Op {
    Upsert(TaskRow),
    Delete(String),
}

/// The store's link to its writer thread.
#[derive(Debug)]
pub(crate) struct TasksWriter {
    writer: WriteThrough<Op>,
}

impl TasksWriter {
    /// Starts the writer thread over `conn` (opened by [`load`]).
    pub(crate) fn spawn(db: &StateDb, conn: Connection) -> Result<TasksWriter, StateDbError> {
        let writer = WriteThrough::spawn(db, conn, "skillet-mcp-tasks", "MCP task", write_batch)?;
        Ok(TasksWriter { writer })
    }

    /// Writes `row` (a new task, or one that ended).
    pub(crate) fn upsert(&self, row: TaskRow) {
        self.send(Op::Upsert(row));
    }

    /// Deletes the row of the task `id`.
    pub(crate) fn delete(&self, id: String) {
        self.send(Op::Delete(id));
    }

    fn send(&self, op: Op) {
        self.writer.send(op);
    }

    /// Waits until every operation sent so far is written.
    pub(crate) async fn flushed(&self) {
        self.writer.flushed().await;
    }
}

/// Creates the table when missing, checks its shape, and reads every row (oldest first);
/// the connection is the writer's.
pub(crate) fn load(db: &StateDb) -> Result<(Connection, Vec<TaskRow>), StateDbError> {
    let conn = db.connect()?;
    conn.execute_batch(SCHEMA).map_err(|e| db.error(e))?;
    let rows = read_rows(&conn)
        .map_err(|e| db.error(format!("its MCP task table has another shape ({e})")))?;
    Ok((conn, rows))
}

fn read_rows(conn: &Connection) -> rusqlite::Result<Vec<TaskRow>> {
    let mut statement = conn.prepare(&format!("SELECT {COLUMNS} FROM mcp_tasks ORDER BY rowid"))?;
    statement
        .query_map([], |row| {
            Ok(TaskRow {
                id: row.get(0)?,
                owner: row.get(1)?,
                skill: row.get(2)?,
                status: row.get(3)?,
                outcome: row.get(4)?,
                message: row.get(5)?,
                created_at: row.get(6)?,
                updated_at: row.get(7)?,
                created_unix: row.get(8)?,
                finished_unix: row.get(9)?,
            })
        })?
        .collect()
}

fn write_batch(conn: &mut Connection, batch: Vec<Op>) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    {
        let mut upsert = tx.prepare(&format!(
            "INSERT OR REPLACE INTO mcp_tasks ({COLUMNS}) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
        ))?;
        let mut delete = tx.prepare("DELETE FROM mcp_tasks WHERE id = ?1")?;
        for op in batch {
            match op {
                Op::Delete(id) => {
                    delete.execute([&id])?;
                }
                Op::Upsert(row) => {
                    let TaskRow {
                        id,
                        owner,
                        skill,
                        status,
                        outcome,
                        message,
                        created_at,
                        updated_at,
                        created_unix,
                        finished_unix,
                    } = row;
                    upsert.execute(params![
                        id,
                        owner,
                        skill,
                        status,
                        outcome.map(|o| REDACTOR.redact_owned(o)),
                        message.map(|m| REDACTOR.redact_owned(m)),
                        created_at,
                        updated_at,
                        created_unix,
                        finished_unix
                    ])?;
                }
            }
        }
    }
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, status: &str) -> TaskRow {
        TaskRow {
            id: id.into(),
            owner: Some("alice".into()),
            skill: "echo".into(),
            status: status.into(),
            outcome: None,
            message: None,
            created_at: "2026-01-01T00:00:00Z".into(),
            updated_at: "2026-01-01T00:00:00Z".into(),
            created_unix: 1.0,
            finished_unix: None,
        }
    }

    #[tokio::test]
    async fn rows_written_through_are_read_back_and_deleted_rows_are_gone() {
        let dir = tempfile::tempdir().unwrap();
        let db = StateDb::open(&dir.path().join("state.db")).unwrap();
        let (conn, rows) = load(&db).unwrap();
        assert!(rows.is_empty());
        let writer = TasksWriter::spawn(&db, conn).unwrap();
        writer.upsert(row("a", "working"));
        writer.upsert(row("b", "working"));
        let mut done = row("a", "completed");
        done.outcome = Some("{\"isError\":false}".into());
        done.finished_unix = Some(2.0);
        writer.upsert(done.clone());
        writer.delete("b".into());
        writer.flushed().await;
        let (_, rows) = load(&db).unwrap();
        assert_eq!(rows, vec![done]);
    }

    #[test]
    fn a_foreign_mcp_tasks_table_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let db = StateDb::open(&path).unwrap();
        db.connect()
            .unwrap()
            .execute_batch("CREATE TABLE mcp_tasks (x TEXT);")
            .unwrap();
        let error = load(&db).unwrap_err().to_string();
        assert!(
            error.contains("state.db") && error.contains("MCP task table"),
            "{error}"
        );
    }

    fn result() -> rmcp::model::JsonObject {
        serde_json::from_value(serde_json::json!({"content": [], "isError": false})).unwrap()
    }

    #[tokio::test]
    async fn a_restart_reads_finished_tasks_back_for_their_owner_and_fails_running_ones() {
        use super::super::tasks::McpTasks;
        use rmcp::model::{TaskPayload, TaskStatus};
        use tokio_util::sync::CancellationToken;
        let dir = tempfile::tempdir().unwrap();
        let db = StateDb::open(&dir.path().join("state.db")).unwrap();
        let (tasks, _) = McpTasks::durable(&db).unwrap();
        let done = tasks
            .create(Some("alice"), "echo", CancellationToken::new())
            .unwrap()
            .task_id;
        tasks.finish(&done, Ok(result()));
        let running = tasks
            .create(Some("alice"), "slow", CancellationToken::new())
            .unwrap()
            .task_id;
        tasks.persisted().await;
        drop(tasks);

        let (again, read_back) = McpTasks::durable(&db).unwrap();
        assert_eq!(read_back.kept, 2);
        assert_eq!(read_back.failed, 1);
        let task = again.get(&done, Some("alice")).unwrap();
        assert_eq!(task.payload, TaskPayload::Completed { result: result() });
        assert!(again.get(&done, Some("bob")).is_err());
        let failed = again.get(&running, Some("alice")).unwrap();
        assert_eq!(failed.status(), TaskStatus::Failed);
        let TaskPayload::Failed { error } = failed.payload else {
            panic!("failed");
        };
        assert!(error["message"].as_str().unwrap().contains("\"slow\""));
        // The failure itself was written: a third start reads it as failed, not as interrupted.
        again.persisted().await;
        drop(again);
        let (_, third) = McpTasks::durable(&db).unwrap();
        assert_eq!(third.failed, 0);
    }

    #[tokio::test]
    async fn expired_rows_and_rows_beyond_the_bound_are_deleted_at_start_up() {
        use super::super::tasks::McpTasks;
        use std::time::Duration;
        use tokio_util::sync::CancellationToken;
        let dir = tempfile::tempdir().unwrap();
        let db = StateDb::open(&dir.path().join("state.db")).unwrap();
        let (tasks, _) = McpTasks::durable(&db).unwrap();
        for _ in 0..3 {
            let id = tasks
                .create(None, "echo", CancellationToken::new())
                .unwrap()
                .task_id;
            tasks.finish(&id, Ok(result()));
        }
        tasks.persisted().await;
        drop(tasks);
        let (bounded, read_back) =
            McpTasks::durable_with_limits(&db, 2, Duration::from_secs(3600)).unwrap();
        assert_eq!(read_back.kept, 2);
        bounded.persisted().await;
        assert_eq!(load(&db).unwrap().1.len(), 2);
        drop(bounded);
        let (expired, read_back) = McpTasks::durable_with_limits(&db, 2, Duration::ZERO).unwrap();
        assert_eq!(read_back.kept, 0);
        expired.persisted().await;
        assert!(load(&db).unwrap().1.is_empty());
    }
}
