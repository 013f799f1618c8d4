//! [`WriteThrough`]: one table of the state database written by its own thread — changes queued
//! in the order they happen, written in batches (each batch one transaction), and
//! [`WriteThrough::flushed`] to wait until every change sent so far is on disk. The durable MCP
//! tasks and A2A push configs use it; each says how its changes become SQL.
//!
//! Not here: the file itself and its errors (`persist::StateDb`), the A2A task store's own writer
//! (`persist`, fed by snapshots rather than changes), what each table holds.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use rusqlite::Connection;
use tokio::sync::watch;

use super::persist::{StateDb, StateDbError};

/// Writes one batch of changes in one transaction.
pub(crate) type WriteBatch<Op> = fn(&mut Connection, Vec<Op>) -> rusqlite::Result<()>;

/// A writer thread over one connection, fed changes of type `Op`.
pub(crate) struct WriteThrough<Op> {
    queue: Mutex<mpsc::Sender<(Op, u64)>>,
    sent: AtomicU64,
    written: watch::Sender<u64>,
    /// What is written, for the log (`push config`, `MCP task`).
    what: &'static str,
}

impl<Op> std::fmt::Debug for WriteThrough<Op> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteThrough")
            .field("what", &self.what)
            .finish_non_exhaustive()
    }
}

impl<Op: Send + 'static> WriteThrough<Op> {
    /// Starts the thread `thread` writing `what` changes over `conn` with `write`.
    pub(crate) fn spawn(
        db: &StateDb,
        conn: Connection,
        thread: &str,
        what: &'static str,
        write: WriteBatch<Op>,
    ) -> Result<Self, StateDbError> {
        let (queue, received) = mpsc::channel();
        let (written, _) = watch::channel(0);
        let progress = written.clone();
        std::thread::Builder::new()
            .name(thread.into())
            .spawn(move || write_loop(conn, &received, &progress, what, write))
            .map_err(|e| db.error(format!("cannot start its {what} writer thread: {e}")))?;
        Ok(WriteThrough {
            queue: Mutex::new(queue),
            sent: AtomicU64::new(0),
            written,
            what,
        })
    }

    /// Queues `op` to be written.
    pub(crate) fn send(&self, op: Op) {
        let queue = self
            .queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let generation = self.sent.fetch_add(1, Ordering::SeqCst) + 1;
        if queue.send((op, generation)).is_err() {
            tracing::warn!(
                "state database: the {} writer has stopped; a change is lost",
                self.what
            );
        }
    }

    /// Waits until every change sent so far is written.
    pub(crate) async fn flushed(&self) {
        let target = self.sent.load(Ordering::SeqCst);
        let mut written = self.written.subscribe();
        let _ = written.wait_for(|w| *w >= target).await;
    }
}

fn write_loop<Op>(
    mut conn: Connection,
    received: &mpsc::Receiver<(Op, u64)>,
    written: &watch::Sender<u64>,
    what: &str,
    write: WriteBatch<Op>,
) {
    // Ends when the owner (the only sender) is gone.
    while let Ok(first) = received.recv() {
        let mut batch = vec![first];
        batch.extend(received.try_iter());
        let generation = batch.last().map_or(0, |(_, g)| *g);
        let ops = batch.into_iter().map(|(op, _)| op).collect();
        if let Err(e) = write(&mut conn, ops) {
            tracing::warn!(error = %e, "state database: {what} changes not written");
        }
        written.send_replace(generation);
    }
}
