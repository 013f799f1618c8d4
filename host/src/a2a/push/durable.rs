//! Durable push configs (`[server] state_db`): the `a2a_push_configs` table of the state
//! database, one row per config (its task, its id, the config as its A2A JSON), so that a
//! restarted `serve --http` sends the updates of a task it resumes to the webhooks its client
//! registered, and `Get`/`ListTaskPushNotificationConfig(s)` answer as before.
//!
//! - **What a row holds**: the config as the client sent it, its `token` and
//!   `authentication.credentials` included — without them a webhook could not be sent to after
//!   a restart. They are the client's values for its own webhook, never a configured secret of
//!   this server, and are never logged or answered back (`super::answered`).
//! - **Written through** by one writer thread (a registered config upserted, a deleted or
//!   replaced one deleted, the configs of a task the store forgot deleted with it), in order;
//!   [`ConfigRows::flushed`] waits until what was sent is written (a config method answers
//!   after its change is on disk).
//! - **Read back** at start-up ([`ConfigRows::open`]); `super::PushNotifications::restore`
//!   re-checks each against the allowlist and the store.
//!
//! Not here: the checks and the registry (`super`), delivery (`deliver`), the file
//! (`crate::a2a::StateDb`).

use rusqlite::{Connection, params};

use crate::a2a::persist::{StateDb, StateDbError};
use crate::a2a::wire::TaskPushNotificationConfig;
use crate::a2a::write_through::WriteThrough;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS a2a_push_configs (
    task_id TEXT NOT NULL,
    id TEXT NOT NULL,
    config TEXT NOT NULL,
    PRIMARY KEY (task_id, id)
);
";

pub(crate) enum Op {
    Upsert(String, String, String),
    Delete(String, String),
    DeleteTask(String),
}

/// The push configs' link to their writer thread.
#[derive(Debug)]
pub(crate) struct ConfigRows {
    writer: WriteThrough<Op>,
}

/// A stored row: the config, or why it does not decode.
pub(crate) type StoredConfig = (String, String, Result<TaskPushNotificationConfig, String>);

impl ConfigRows {
    /// Creates the table when missing, reads every row (oldest first) and starts the writer.
    pub(crate) fn open(db: &StateDb) -> Result<(ConfigRows, Vec<StoredConfig>), StateDbError> {
        let conn = db.connect()?;
        conn.execute_batch(SCHEMA).map_err(|e| db.error(e))?;
        let stored = read(&conn)
            .map_err(|e| db.error(format!("its push config table has another shape ({e})")))?;
        let writer = WriteThrough::spawn(db, conn, "skillet-a2a-push", "push config", write_batch)?;
        Ok((ConfigRows { writer }, stored))
    }

    /// Writes `config` (with its credentials) as its task's config.
    pub(crate) fn upsert(&self, config: &TaskPushNotificationConfig) {
        let json = serde_json::to_string(config).unwrap_or_default();
        self.send(Op::Upsert(config.task_id.clone(), config.id.clone(), json));
    }

    /// Deletes the config `id` of task `task_id`.
    pub(crate) fn delete(&self, task_id: &str, id: &str) {
        self.send(Op::Delete(task_id.to_owned(), id.to_owned()));
    }

    /// Deletes every config of task `task_id`.
    pub(crate) fn delete_task(&self, task_id: &str) {
        self.send(Op::DeleteTask(task_id.to_owned()));
    }

    fn send(&self, op: Op) {
        self.writer.send(op);
    }

    /// Waits until every change sent so far is written.
    pub(crate) async fn flushed(&self) {
        self.writer.flushed().await;
    }
}

fn read(conn: &Connection) -> rusqlite::Result<Vec<StoredConfig>> {
    let mut statement =
        conn.prepare("SELECT task_id, id, config FROM a2a_push_configs ORDER BY rowid")?;
    statement
        .query_map([], |row| {
            let config: String = row.get(2)?;
            Ok((
                row.get(0)?,
                row.get(1)?,
                serde_json::from_str(&config).map_err(|e| e.to_string()),
            ))
        })?
        .collect()
}

fn write_batch(conn: &mut Connection, batch: Vec<Op>) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    for op in batch {
        match op {
            Op::Upsert(task_id, id, config) => tx.execute(
                "INSERT OR REPLACE INTO a2a_push_configs (task_id, id, config) \
                 VALUES (?1, ?2, ?3)",
                params![task_id, id, config],
            )?,
            Op::Delete(task_id, id) => tx.execute(
                "DELETE FROM a2a_push_configs WHERE task_id = ?1 AND id = ?2",
                params![task_id, id],
            )?,
            Op::DeleteTask(task_id) => tx.execute(
                "DELETE FROM a2a_push_configs WHERE task_id = ?1",
                params![task_id],
            )?,
        };
    }
    tx.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(task: &str, id: &str) -> TaskPushNotificationConfig {
        TaskPushNotificationConfig {
            id: id.into(),
            task_id: task.into(),
            url: "https://hooks.example/a2a".into(),
            token: "client-token".into(),
            ..TaskPushNotificationConfig::default()
        }
    }

    #[tokio::test]
    async fn configs_written_through_are_read_back_with_their_token_and_deletions_hold() {
        let dir = tempfile::tempdir().unwrap();
        let db = StateDb::open(&dir.path().join("state.db")).unwrap();
        let (rows, stored) = ConfigRows::open(&db).unwrap();
        assert!(stored.is_empty());
        rows.upsert(&config("t1", "a"));
        rows.upsert(&config("t1", "b"));
        rows.upsert(&config("t2", "c"));
        rows.delete("t1", "a");
        rows.delete_task("t2");
        rows.flushed().await;
        drop(rows);
        let (_, stored) = ConfigRows::open(&db).unwrap();
        assert_eq!(
            stored,
            vec![("t1".to_owned(), "b".to_owned(), Ok(config("t1", "b")))]
        );
    }
}
