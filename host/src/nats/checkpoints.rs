//! [`NatsCheckpoints`]: the JetStream key-value bucket that keeps each running call's last
//! checkpoint (`skillet_core::checkpoint`), keyed by request id, next to the results bucket —
//! so a call redelivered after its worker died continues at the turn it reached.
//!
//! The bucket is `<results_bucket>-checkpoints` (file storage, one revision per key, entries
//! expire after `result_ttl_seconds`, like the answers). A checkpoint is bounded by the
//! engine's bound and the server's `max_payload`, whichever is smaller. The engine does not
//! remove a checkpoint when its call has a result ([`CheckpointStore::finished`] does nothing):
//! the worker purges it once the answer is stored, so a worker dying between the two still
//! leaves the redelivery something to continue from (and the stored answer replays first).
//!
//! Under `[auth]` the worker first claims a call's id for its caller's identity
//! ([`NatsCheckpoints::claim`]): another identity sending the same id is refused before it
//! could resume (or race) that call.
//!
//! Not here: what a checkpoint holds and when it is written (the engine), the answers (`store`).

use async_nats::jetstream::{self, kv, stream};
use async_trait::async_trait;
use bytes::Bytes;

use super::error::NatsError;
use crate::nats::NatsOptions;
use skillet_core::checkpoint::{
    CheckpointStore, CheckpointStoreError, DEFAULT_MAX_CHECKPOINT_BYTES,
};

/// Room kept under `max_payload` for the KV message's own headers and subject.
const HEADROOM: usize = 1024;

/// The checkpoints bucket.
#[derive(Clone)]
pub struct NatsCheckpoints {
    kv: kv::Store,
    max_bytes: usize,
}

impl std::fmt::Debug for NatsCheckpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsCheckpoints")
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

/// The checkpoints bucket's name for `config`.
pub(crate) fn bucket_name(config: &NatsOptions) -> String {
    format!("{}-checkpoints", config.results_bucket)
}

impl NatsCheckpoints {
    /// Binds the bucket, creating it when it does not exist; `max_payload` is the server's.
    pub async fn open(
        js: &jetstream::Context,
        config: &NatsOptions,
        max_payload: usize,
    ) -> Result<Self, NatsError> {
        let bucket = bucket_name(config);
        let max_bytes = DEFAULT_MAX_CHECKPOINT_BYTES.min(max_payload.saturating_sub(HEADROOM));
        if let Ok(kv) = js.get_key_value(bucket.as_str()).await {
            return Ok(NatsCheckpoints { kv, max_bytes });
        }
        // Created as a stream directly, like the results bucket (see `store`).
        let created = js
            .create_stream(stream::Config {
                name: format!("KV_{bucket}"),
                description: Some("Skillet: the last checkpoint of each running call".into()),
                subjects: vec![format!("$KV.{bucket}.>")],
                max_messages_per_subject: 1,
                max_age: config.result_ttl(),
                storage: stream::StorageType::File,
                allow_rollup: true,
                deny_delete: false,
                allow_direct: true,
                discard: stream::DiscardPolicy::New,
                num_replicas: 1,
                ..Default::default()
            })
            .await;
        js.get_key_value(bucket.as_str())
            .await
            .map(|kv| NatsCheckpoints { kv, max_bytes })
            .map_err(|bind| match created {
                Err(create) => NatsError::jetstream(format!("checkpoints bucket {bucket}"), create),
                Ok(_) => NatsError::jetstream(format!("checkpoints bucket {bucket}"), bind),
            })
    }

    /// [`Self::open`] over `client`'s JetStream, bounded by its server's `max_payload`.
    pub async fn on(client: &async_nats::Client, config: &NatsOptions) -> Result<Self, NatsError> {
        Self::open(
            &jetstream::new(client.clone()),
            config,
            client.max_payload(),
        )
        .await
    }

    /// Claims the request id `req_id` for the identity whose digest is `owner` (under
    /// `[auth]`, before the call first runs): the first claim wins (a KV create under
    /// `<req_id>.owner`, expiring with the bucket), so a checkpoint under that id is only ever
    /// resumed for the identity that started the call. Whether `owner` holds the claim.
    pub async fn claim(&self, req_id: &str, owner: &str) -> Result<bool, NatsError> {
        let key = format!("{req_id}.owner");
        match self
            .kv
            .create(key.as_str(), Bytes::from(owner.to_owned()))
            .await
        {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => {
                let held = self
                    .kv
                    .get(key.as_str())
                    .await
                    .map_err(|e| NatsError::io("checkpoints claim", e))?;
                Ok(held.is_some_and(|held| held.as_ref() == owner.as_bytes()))
            }
            Err(e) => Err(NatsError::io("checkpoints claim", e)),
        }
    }

    /// Removes the checkpoint of `req_id` (its answer is stored).
    pub async fn purge(&self, req_id: &str) -> Result<(), NatsError> {
        self.kv
            .purge(req_id)
            .await
            .map_err(|e| NatsError::io("checkpoints purge", e))
    }
}

fn store_error(what: &str, error: impl std::fmt::Display) -> CheckpointStoreError {
    CheckpointStoreError(format!("{what}: {error}"))
}

#[async_trait]
impl CheckpointStore for NatsCheckpoints {
    fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    async fn load(&self, key: &str) -> Result<Option<Vec<u8>>, CheckpointStoreError> {
        self.kv
            .get(key)
            .await
            .map(|bytes| bytes.map(|b| b.to_vec()))
            .map_err(|e| store_error("get", e))
    }

    async fn save(&self, key: &str, checkpoint: Vec<u8>) -> Result<(), CheckpointStoreError> {
        self.kv
            .put(key, Bytes::from(checkpoint))
            .await
            .map(|_| ())
            .map_err(|e| store_error("put", e))
    }

    async fn remove(&self, key: &str) -> Result<(), CheckpointStoreError> {
        self.kv
            .purge(key)
            .await
            .map_err(|e| store_error("purge", e))
    }

    async fn finished(&self, _key: &str) -> Result<(), CheckpointStoreError> {
        // The worker purges it once the answer is stored.
        Ok(())
    }
}
