//! Start-up over the state database (`[server] state_db`): [`durable_store`] reads every
//! stored task back into a new [`TaskStore`] — finished ones for the rest of their TTL (a
//! finished row without a finish time, which the writer never makes, from its last update,
//! with a warning naming the task),
//! running ones handed back as [`Interrupted`] for `resume` — and starts the writer that
//! mirrors the store from then on.
//!
//! Not here: the file, its rows and the writer (`persist`), the store (`store`), what a
//! restart does with interrupted tasks (`resume`).

use std::sync::Arc;

use super::persist::{
    Interrupted, Persist, SnapshotSource, StateDb, StateDbError, StoredCall, load, spawn_writer,
};
use super::store::{StoreLimits, TaskStore};
use super::wire::Task;

/// A durable task store over `db`: the tasks its file holds put back (finished ones for the
/// rest of their TTL), its writer started, and the tasks that were running returned for
/// `resume` (they are in the store again, running).
pub fn durable_store(
    limits: StoreLimits,
    db: &StateDb,
) -> Result<(Arc<TaskStore>, Vec<Interrupted>), StateDbError> {
    let conn = db.connect()?;
    let rows = load(&conn).map_err(|e| db.error(e))?;
    let persist = Arc::new(Persist::new());
    let store = Arc::new(TaskStore::with_persist(limits, Some(Arc::clone(&persist))));
    let weak = Arc::downgrade(&store);
    let snapshots: SnapshotSource =
        Box::new(move |ids| weak.upgrade().map(|store| store.snapshots(ids)));
    spawn_writer(conn, Arc::clone(&persist), snapshots)
        .map_err(|e| db.error(format!("cannot start its writer thread: {e}")))?;
    let mut interrupted = Vec::new();
    for row in rows {
        let task: Task = match serde_json::from_str(&row.task) {
            Ok(task) => task,
            Err(e) => {
                tracing::warn!(task_id = %row.id, error = %e, "state database: a stored task does not decode; dropped");
                persist.mark(std::iter::once(row.id));
                continue;
            }
        };
        let running = !task.status.state.is_terminal();
        if running {
            let call = match (row.call, row.not_resumable) {
                (Some(call), _) => serde_json::from_str::<StoredCall>(&call)
                    .map_err(|e| format!("its stored call does not decode ({e})")),
                (None, Some(why)) => Err(why),
                (None, None) => Err("no call was stored with it".to_owned()),
            };
            interrupted.push(Interrupted {
                task_id: task.id.clone(),
                context_id: task.context_id.clone(),
                call,
            });
        }
        let finished_at = match (running, row.finished_at) {
            (true, _) => None,
            (false, Some(at)) => Some(at),
            // Kept, not dropped nor taken for running: its last write is the best end known.
            (false, None) => {
                tracing::warn!(
                    task_id = %row.id,
                    "state database: a finished task has no finish time; its last update is taken as its end"
                );
                Some(row.updated_at)
            }
        };
        store.restore(task, row.owner, finished_at);
    }
    Ok((store, interrupted))
}

#[cfg(test)]
#[path = "persist_tests.rs"]
mod tests;
