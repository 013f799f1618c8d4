//! [`ResultStore`]: the JetStream key-value bucket that keeps each call's one answer, keyed by
//! request id, for `result_ttl_seconds`.
//!
//! The first answer stored for an id wins (`ResultStore::store_once` is a create, not a put):
//! a worker that finishes a call another worker already answered (a redelivery racing an ack)
//! publishes the stored answer, not its own, so a caller never sees two different answers for
//! one id. A caller that lost its connection reads the answer with [`ResultStore::get`].
//!
//! A failure that retrying cannot mend (over `max_payload`, an invalid key) is
//! [`NatsError::Permanent`] and is not retried.
//!
//! Under `[auth]` an answer belongs to the identity whose call produced it: the stored value
//! is the line `skillet-owner-sha256:<hex of the SHA-256 of the identity id>` and then the
//! encoded `skill/call/resp` ([`StoredAnswer`]). A worker replays a stored answer only to its
//! owner ([`StoredAnswer::belongs_to`]), so a sender that learns another caller's request id
//! gets a refusal, not that caller's answer. Without `[auth]` the value is the bare message.
//!
//! Not here: when to store (the worker), making an answer fit (`fit`), waiting for an answer
//! (the client).

use std::time::Duration;

use async_nats::jetstream::{self, kv, stream};
use bytes::Bytes;

use super::error::NatsError;
use crate::nats::NatsOptions;
use skillet_protocol::{Message, SkillCallResponse};

/// The first line of a stored value that names its owner; the identity id's SHA-256 follows.
const OWNER_LINE: &str = "skillet-owner-sha256:";

/// An answer as stored: the response, and the digest of the identity it belongs to (none
/// without `[auth]`, or stored by a Skillet from before owners were recorded).
#[derive(Debug, Clone)]
pub(crate) struct StoredAnswer {
    /// The stored `skill/call/resp`.
    pub response: SkillCallResponse,
    owner: Option<String>,
}

impl StoredAnswer {
    /// Whether a caller that is the identity `owner` (`None`: a caller without one, when the
    /// host has no `[auth]`) may be given this answer. An answer stored without an owner is
    /// not given to an identified caller: its owner is unknown.
    pub(crate) fn belongs_to(&self, owner: Option<&str>) -> bool {
        match owner {
            None => true,
            Some(id) => self.owner.as_deref() == Some(owner_digest(id).as_str()),
        }
    }
}

/// The digest an identity id is stored as (answers and checkpoint claims).
pub(crate) fn owner_digest(id: &str) -> String {
    crate::auth::sha256_hex(id)
}

/// The results bucket.
#[derive(Clone)]
pub(crate) struct ResultStore {
    kv: kv::Store,
}

impl std::fmt::Debug for ResultStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResultStore").finish_non_exhaustive()
    }
}

impl ResultStore {
    /// Binds the bucket, creating it (file storage, one revision per key, entries expire after
    /// the TTL) when it does not exist.
    pub(crate) async fn open(
        js: &jetstream::Context,
        config: &NatsOptions,
    ) -> Result<Self, NatsError> {
        let what = || format!("results bucket {}", config.results_bucket);
        if let Ok(kv) = js.get_key_value(config.results_bucket.as_str()).await {
            return Ok(ResultStore { kv });
        }
        // The bucket's stream is created directly, with the settings the client library uses
        // for a bucket: its `create_key_value` first reads account info in a shape the 2.9
        // servers of Debian stable do not send.
        let created = js
            .create_stream(stream::Config {
                name: format!("KV_{}", config.results_bucket),
                description: Some("Skillet: one skill/call/resp per request id".into()),
                subjects: vec![format!("$KV.{}.>", config.results_bucket)],
                max_messages_per_subject: 1,
                max_age: config.result_ttl(),
                storage: stream::StorageType::File,
                allow_rollup: true,
                deny_delete: true,
                allow_direct: true,
                discard: stream::DiscardPolicy::New,
                num_replicas: 1,
                ..Default::default()
            })
            .await;
        // Another worker may have created it meanwhile: bind either way.
        js.get_key_value(config.results_bucket.as_str())
            .await
            .map(|kv| ResultStore { kv })
            .map_err(|bind| match created {
                Err(create) => NatsError::jetstream(what(), create),
                Ok(_) => NatsError::jetstream(what(), bind),
            })
    }

    /// The stored answer of `req_id`, if any (whoever it belongs to).
    pub(crate) async fn get(&self, req_id: &str) -> Result<Option<SkillCallResponse>, NatsError> {
        Ok(self.get_stored(req_id).await?.map(|stored| stored.response))
    }

    /// The stored answer of `req_id` with its owner, if any.
    pub(crate) async fn get_stored(&self, req_id: &str) -> Result<Option<StoredAnswer>, NatsError> {
        let bytes = self
            .kv
            .get(req_id)
            .await
            .map_err(|e| NatsError::io("results get", e))?;
        Ok(bytes.and_then(|bytes| decode_stored(&bytes)))
    }

    /// Stores `response` as belonging to the identity `owner` unless an answer is stored
    /// already; returns the stored one (the given response when it won).
    pub(crate) async fn store_once(
        &self,
        response: SkillCallResponse,
        owner: Option<&str>,
    ) -> Result<StoredAnswer, NatsError> {
        let owner = owner.map(owner_digest);
        let message = skillet_protocol::encode(&Message::CallResponse(response.clone()));
        let bytes = Bytes::from(match &owner {
            Some(digest) => format!("{OWNER_LINE}{digest}\n{message}"),
            None => message,
        });
        match self.kv.create(response.req_id.as_str(), bytes).await {
            Ok(_) => Ok(StoredAnswer { response, owner }),
            Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => {
                match self.get_stored(&response.req_id).await? {
                    Some(stored) => Ok(stored),
                    None => Err(NatsError::io("results store", "raced with an expiry")),
                }
            }
            Err(e) if is_permanent(&e) => Err(NatsError::Permanent(format!(
                "results store: {}",
                chain(&e)
            ))),
            Err(e) => Err(NatsError::io("results store", e)),
        }
    }

    /// [`ResultStore::store_once`], retried while the server is unreachable, for at most `limit`.
    pub(crate) async fn store_once_retrying(
        &self,
        response: SkillCallResponse,
        owner: Option<&str>,
        limit: Duration,
    ) -> Result<StoredAnswer, NatsError> {
        let deadline = tokio::time::Instant::now() + limit;
        let mut pause = Duration::from_millis(50);
        loop {
            match self.store_once(response.clone(), owner).await {
                Ok(stored) => return Ok(stored),
                Err(e) if e.is_permanent() => return Err(e),
                Err(e) if tokio::time::Instant::now() + pause >= deadline => return Err(e),
                Err(e) => {
                    tracing::debug!(req_id = %response.req_id, error = %e, "storing the answer failed; retrying");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
            }
        }
    }
}

/// Whether a failed create can never succeed: the key is refused, or the message is over the
/// server's `max_payload` (async-nats says so only in the text of the publish error it wraps).
fn is_permanent(error: &kv::CreateError) -> bool {
    error.kind() == kv::CreateErrorKind::InvalidKey
        || chain(error).contains("Payload size limit")
        || chain(error).contains("maximum payload")
}

/// An error and its sources, as one line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A published answer, if it is a `skill/call/resp`.
pub(crate) fn decode_response(bytes: &[u8]) -> Option<SkillCallResponse> {
    match skillet_protocol::decode(std::str::from_utf8(bytes).ok()?) {
        Ok(Message::CallResponse(response)) => Some(response),
        _ => None,
    }
}

/// A stored value: an optional owner line, then a `skill/call/resp`.
fn decode_stored(bytes: &[u8]) -> Option<StoredAnswer> {
    let text = std::str::from_utf8(bytes).ok()?;
    let (owner, message) = match text.strip_prefix(OWNER_LINE) {
        Some(rest) => {
            let (digest, message) = rest.split_once('\n')?;
            (Some(digest.to_owned()), message)
        }
        None => (None, text),
    };
    let response = decode_response(message.as_bytes())?;
    Some(StoredAnswer { response, owner })
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillet_protocol::{ErrorCode, ProtocolError};

    fn response() -> SkillCallResponse {
        SkillCallResponse::rejected("r1", "echo", ProtocolError::new(ErrorCode::SkillError, "x"))
    }

    #[test]
    fn a_stored_answer_is_given_only_to_its_owner() {
        let message = skillet_protocol::encode(&Message::CallResponse(response()));
        let owned = format!("{OWNER_LINE}{}\n{message}", owner_digest("key-a"));
        let stored = decode_stored(owned.as_bytes()).unwrap();
        assert_eq!(stored.response.req_id, "r1");
        assert!(stored.belongs_to(Some("key-a")));
        assert!(!stored.belongs_to(Some("key-b")));
        assert!(
            stored.belongs_to(None),
            "a host without [auth] replays to anyone"
        );
        assert!(
            !owned.contains("key-a"),
            "the identity is stored as a digest"
        );

        let unowned = decode_stored(message.as_bytes()).unwrap();
        assert!(unowned.belongs_to(None));
        assert!(
            !unowned.belongs_to(Some("key-a")),
            "an unknown owner is not the caller"
        );
        assert!(decode_stored(format!("{OWNER_LINE}abc").as_bytes()).is_none());
    }
}
