//! Durable runs, as a contract: the [`CheckpointStore`] a host keeps a run's checkpoints in (opaque
//! bytes by call key), so that a call redelivered to another process (a NATS worker that died, a
//! server restarted mid-task) continues at the turn it reached, and an in-memory store
//! ([`MemoryCheckpoints`], for tests and embedders).
//!
//! Not here: what a checkpoint holds and its byte format, and when the run loop writes and reads
//! one (the engine's `checkpoint` and `run::durable`); the stores of the doors (JetStream KV in
//! `skillet-host`'s `nats`, SQLite for `serve --http`).

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;

use crate::protocol::SkillCallRequest;

/// The default bound on one checkpoint's bytes: a run whose state grows past it is not
/// checkpointed any further (its stored checkpoint is removed, and a log says so).
pub const DEFAULT_MAX_CHECKPOINT_BYTES: usize = 1024 * 1024;

/// Why a store could not read or write a checkpoint (the run goes on either way; a failed write
/// only means a redelivery starts earlier).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("checkpoint store: {0}")]
pub struct CheckpointStoreError(pub String);

/// Where the checkpoints of a host's calls are kept, by call key (the request id). Methods are
/// called from the run's task; an implementation doing blocking I/O moves it off the runtime.
#[async_trait]
pub trait CheckpointStore: Send + Sync {
    /// Whether calls like `request` are checkpointed (default: all). A host serving several
    /// doors from one executor checkpoints only the calls a redelivery can continue.
    fn covers(&self, request: &SkillCallRequest) -> bool {
        let _ = request;
        true
    }

    /// Whether `request` may only continue from its checkpoint (default: never). Such a call
    /// — a task a restarted server found running — is not started again at turn 1 when its
    /// checkpoint is missing or refused (or its skill is not checkpointed): it fails with a
    /// `runtime_error` saying why, without a model request.
    fn resume_only(&self, request: &SkillCallRequest) -> bool {
        let _ = request;
        false
    }

    /// The largest checkpoint this store takes, in bytes.
    fn max_bytes(&self) -> usize {
        DEFAULT_MAX_CHECKPOINT_BYTES
    }

    /// The checkpoint stored under `key`, if any.
    async fn load(&self, key: &str) -> Result<Option<Vec<u8>>, CheckpointStoreError>;

    /// Stores `checkpoint` under `key`, replacing the one before.
    async fn save(&self, key: &str, checkpoint: Vec<u8>) -> Result<(), CheckpointStoreError>;

    /// Removes the checkpoint under `key` (absent is fine).
    async fn remove(&self, key: &str) -> Result<(), CheckpointStoreError>;

    /// Called when the run of `key` has its result. The default removes the checkpoint; a store
    /// whose host removes it only once the answer itself is stored (so that a crash between the
    /// two does not restart the run) overrides this with nothing.
    async fn finished(&self, key: &str) -> Result<(), CheckpointStoreError> {
        self.remove(key).await
    }
}

/// Checkpoints in this process's memory: for tests, and for embedders that persist them
/// elsewhere. They do not survive the process.
#[derive(Debug, Default)]
pub struct MemoryCheckpoints {
    entries: Mutex<HashMap<String, Vec<u8>>>,
    max_bytes: Option<usize>,
}

impl MemoryCheckpoints {
    /// An empty store with the default bound.
    pub fn new() -> Self {
        MemoryCheckpoints::default()
    }

    /// An empty store that takes checkpoints of at most `max_bytes`.
    pub fn with_max_bytes(max_bytes: usize) -> Self {
        MemoryCheckpoints {
            max_bytes: Some(max_bytes),
            ..MemoryCheckpoints::default()
        }
    }

    /// The bytes stored under `key` (to inspect or tamper with in tests).
    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        self.lock().get(key).cloned()
    }

    /// Puts `bytes` under `key` as they are.
    pub fn put(&self, key: &str, bytes: Vec<u8>) {
        self.lock().insert(key.to_owned(), bytes);
    }

    /// How many checkpoints are stored.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none is stored.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<u8>>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[async_trait]
impl CheckpointStore for MemoryCheckpoints {
    fn max_bytes(&self) -> usize {
        self.max_bytes.unwrap_or(DEFAULT_MAX_CHECKPOINT_BYTES)
    }

    async fn load(&self, key: &str) -> Result<Option<Vec<u8>>, CheckpointStoreError> {
        Ok(self.get(key))
    }

    async fn save(&self, key: &str, checkpoint: Vec<u8>) -> Result<(), CheckpointStoreError> {
        self.put(key, checkpoint);
        Ok(())
    }

    async fn remove(&self, key: &str) -> Result<(), CheckpointStoreError> {
        self.lock().remove(key);
        Ok(())
    }
}
