//! [`SqliteCheckpoints`]: the [`CheckpointStore`] of `serve --http` with `[server] state_db` —
//! the last checkpoint of each running A2A task's run, in the `a2a_checkpoints` table of the
//! state database (`persist`), keyed by task id (the run's request id).
//!
//! It covers only the calls the A2A adapter registered ([`SqliteCheckpoints::cover`]): runs of
//! A2A tasks, which a restart can find again; an A2E or MCP call over the same server is not
//! checkpointed. A task resumed after a restart is registered *resume-only*: without a
//! checkpoint it can continue from it fails instead of starting at turn 1. The engine does not
//! remove a checkpoint when the run has its result ([`CheckpointStore::finished`] does
//! nothing): the task writer deletes it in the same transaction as the task's terminal row,
//! so a crash between the two never loses the answer nor resumes a finished task. Reads and
//! writes run on the blocking pool over one connection.
//!
//! Not here: what a checkpoint holds (the engine, already redacted), the task rows (`persist`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, params};
use skillet_core::checkpoint::{CheckpointStore, CheckpointStoreError};
use skillet_protocol::SkillCallRequest;

use super::persist::{StateDb, StateDbError};

/// The checkpoints table of the state database.
pub struct SqliteCheckpoints {
    conn: Arc<Mutex<Connection>>,
    /// Task ids whose runs are checkpointed, and whether each may only resume.
    covered: Mutex<HashMap<String, bool>>,
}

impl std::fmt::Debug for SqliteCheckpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteCheckpoints")
            .field("covered", &self.covered().len())
            .finish_non_exhaustive()
    }
}

impl SqliteCheckpoints {
    /// The checkpoints of `db`.
    pub fn open(db: &StateDb) -> Result<SqliteCheckpoints, StateDbError> {
        Ok(SqliteCheckpoints {
            conn: Arc::new(Mutex::new(db.connect()?)),
            covered: Mutex::default(),
        })
    }

    fn covered(&self) -> std::sync::MutexGuard<'_, HashMap<String, bool>> {
        self.covered.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Checkpoints the run of task `id` from now on (`resume_only`: a task a restart found
    /// running).
    pub(crate) fn cover(&self, id: &str, resume_only: bool) {
        self.covered().insert(id.to_owned(), resume_only);
    }

    /// The run of task `id` has answered.
    pub(crate) fn release(&self, id: &str) {
        self.covered().remove(id);
    }

    async fn with_conn<T: Send + 'static>(
        &self,
        what: &'static str,
        job: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, CheckpointStoreError> {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || {
            let conn = conn.lock().unwrap_or_else(PoisonError::into_inner);
            job(&conn)
        })
        .await
        .map_err(|e| CheckpointStoreError(format!("{what}: {e}")))?
        .map_err(|e| CheckpointStoreError(format!("{what}: {e}")))
    }
}

#[async_trait]
impl CheckpointStore for SqliteCheckpoints {
    fn covers(&self, request: &SkillCallRequest) -> bool {
        self.covered().contains_key(&request.id)
    }

    fn resume_only(&self, request: &SkillCallRequest) -> bool {
        self.covered().get(&request.id).copied().unwrap_or(false)
    }

    async fn load(&self, key: &str) -> Result<Option<Vec<u8>>, CheckpointStoreError> {
        let key = key.to_owned();
        self.with_conn("read", move |conn| {
            conn.query_row(
                "SELECT checkpoint FROM a2a_checkpoints WHERE key = ?1",
                [&key],
                |row| row.get(0),
            )
            .optional()
        })
        .await
    }

    async fn save(&self, key: &str, checkpoint: Vec<u8>) -> Result<(), CheckpointStoreError> {
        let key = key.to_owned();
        let at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        self.with_conn("write", move |conn| {
            conn.prepare(
                "INSERT INTO a2a_checkpoints (key, checkpoint, updated_at) VALUES (?1, ?2, ?3) \
                 ON CONFLICT(key) DO UPDATE SET checkpoint = excluded.checkpoint, \
                 updated_at = excluded.updated_at",
            )?
            .execute(params![key, checkpoint, at])
            .map(|_| ())
        })
        .await
    }

    async fn remove(&self, key: &str) -> Result<(), CheckpointStoreError> {
        let key = key.to_owned();
        self.with_conn("delete", move |conn| {
            conn.execute("DELETE FROM a2a_checkpoints WHERE key = ?1", [&key])
                .map(|_| ())
        })
        .await
    }

    async fn finished(&self, _key: &str) -> Result<(), CheckpointStoreError> {
        // Deleted with the task's terminal row (`persist`).
        Ok(())
    }
}
