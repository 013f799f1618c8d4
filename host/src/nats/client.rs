//! [`NatsClient`]: the host side of the NATS workers — submit a call, stream its events, get
//! its one answer (from the reply subject, or from the results bucket after a reconnect), and
//! discover the workers' skills over request/reply. `skillet call --nats` is built on it.
//!
//! Submitting is idempotent per request id: the publish carries `Nats-Msg-Id` = the id, so a
//! retried publish (the server restarted before it acked) is dropped by JetStream's dedupe, and
//! a resubmission after an answer was stored gets the stored answer.
//!
//! With `[nats] bearer_env`, every call carries `Authorization: Bearer <that variable>` for
//! workers under `[auth]` (`identity`).
//!
//! Not here: running calls (the worker), the subject layout (`subjects`).

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::{self, message::PublishMessage};
use async_nats::{Client, HeaderMap};
use bytes::Bytes;
use futures::StreamExt;

use secrecy::{ExposeSecret, SecretString};

use super::error::NatsError;
use super::identity::AUTHORIZATION_HEADER;
use super::store::{ResultStore, decode_response};
use super::subjects::{self, REPLY_HEADER, Subjects};
use crate::nats::NatsOptions;
use skillet_core::events::EventSink;
use skillet_protocol::{
    Message, SkillCallRequest, SkillCallResponse, SkillDiscoverRequest, SkillDiscoverResponse,
};

/// How often a waiting caller looks into the results bucket (covers answers published while it
/// was disconnected).
const POLL_STORED: Duration = Duration::from_secs(1);

/// A connection to the workers. Cheap to clone.
#[derive(Clone)]
pub struct NatsClient {
    client: Client,
    js: jetstream::Context,
    store: ResultStore,
    subjects: Subjects,
    /// `Bearer <key or token>` for the `Authorization` header (`[nats] bearer_env`).
    authorization: Option<Arc<SecretString>>,
}

impl std::fmt::Debug for NatsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsClient")
            .field("subjects", &self.subjects)
            .finish_non_exhaustive()
    }
}

impl NatsClient {
    /// A client over an open connection; binds (or creates) the results bucket.
    pub async fn new(client: Client, config: &NatsOptions) -> Result<Self, NatsError> {
        let js = jetstream::new(client.clone());
        let store = ResultStore::open(&js, config).await?;
        let authorization = match &config.bearer_env {
            None => None,
            Some(var) => {
                let credential = std::env::var(var).map_err(|_| {
                    NatsError::Config(format!("nats.bearer_env: ${var} is not set"))
                })?;
                Some(Arc::new(SecretString::from(format!(
                    "Bearer {}",
                    credential.trim()
                ))))
            }
        };
        Ok(NatsClient {
            client,
            js,
            store,
            subjects: Subjects::new(&config.subject_prefix),
            authorization,
        })
    }

    /// Connects with `[nats]` and binds the results bucket.
    pub async fn connect(config: &NatsOptions) -> Result<Self, NatsError> {
        let client = super::connect::connect(config, "skillet-client").await?;
        NatsClient::new(client, config).await
    }

    /// The underlying connection.
    pub fn connection(&self) -> &Client {
        &self.client
    }

    /// Publishes the call to its skill's subject (with dedupe and reply headers), retrying
    /// until the stream acknowledged it or `wait` is over. `reply` is where the worker
    /// publishes the answer.
    pub async fn submit(
        &self,
        request: &SkillCallRequest,
        reply: Option<&str>,
        wait: Duration,
    ) -> Result<(), NatsError> {
        if !subjects::is_valid_token(&request.id) || !subjects::is_valid_token(&request.name) {
            return Err(NatsError::Invalid(format!(
                "call id {:?} and skill {:?} must be letters, digits, '-', '_' or '=' to go over NATS",
                request.id, request.name
            )));
        }
        let payload = Bytes::from(skillet_protocol::encode(&Message::CallRequest(
            request.clone(),
        )));
        let subject = self.subjects.call(&request.name);
        let deadline = tokio::time::Instant::now() + wait;
        let mut pause = Duration::from_millis(50);
        loop {
            let mut headers = HeaderMap::new();
            if let Some(reply) = reply {
                headers.insert(REPLY_HEADER, reply);
            }
            if let Some(authorization) = &self.authorization {
                headers.insert(AUTHORIZATION_HEADER, authorization.expose_secret());
            }
            // `message_id` sets `Nats-Msg-Id`, JetStream's dedupe key.
            let publish = PublishMessage::build()
                .payload(payload.clone())
                .headers(headers)
                .message_id(request.id.as_str());
            let attempt = async {
                self.js
                    .send_publish(subject.clone(), publish)
                    .await?
                    .await
                    .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)
            };
            match attempt.await {
                Ok(_ack) => return Ok(()),
                Err(e) if tokio::time::Instant::now() + pause >= deadline => {
                    return Err(NatsError::io("publish call", e));
                }
                Err(e) => {
                    tracing::debug!(req_id = %request.id, error = %e, "publish failed; retrying");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
            }
        }
    }

    /// Runs one call on the workers: live events to `events` (when given and the request asks
    /// for streaming), then its answer. Waits at most `wait` in all.
    ///
    /// A call a worker re-runs after a redelivery streams its events again from `seq` 0.
    pub async fn call(
        &self,
        request: &SkillCallRequest,
        events: Option<Arc<dyn EventSink>>,
        wait: Duration,
    ) -> Result<SkillCallResponse, NatsError> {
        let deadline = tokio::time::Instant::now() + wait;
        let inbox = self.client.new_inbox();
        let mut answers = self
            .client
            .subscribe(inbox.clone())
            .await
            .map_err(|e| NatsError::io("subscribe reply", e))?;
        let events = events.filter(|_| request.streaming);
        let mut live = match &events {
            Some(_) => Some(
                self.client
                    .subscribe(self.subjects.events(&request.id))
                    .await
                    .map_err(|e| NatsError::io("subscribe events", e))?,
            ),
            None => None,
        };
        self.submit(request, Some(&inbox), wait).await?;
        let mut poll = tokio::time::interval(POLL_STORED);
        poll.tick().await;
        loop {
            tokio::select! {
                answer = answers.next() => {
                    if let Some(response) = answer.and_then(|m| decode_response(&m.payload))
                        && response.req_id == request.id
                    {
                        return Ok(response);
                    }
                }
                event = async { live.as_mut()?.next().await }, if live.is_some() => {
                    match (event, &events) {
                        (Some(event), Some(sink)) => {
                            if let Ok(Message::Event(event)) = std::str::from_utf8(&event.payload)
                                .map_err(|_| ())
                                .and_then(|text| skillet_protocol::decode(text).map_err(|_| ()))
                            {
                                sink.emit(&event);
                            }
                        }
                        _ => live = None,
                    }
                }
                _ = poll.tick() => {
                    if let Ok(Some(response)) = self.store.get(&request.id).await {
                        return Ok(response);
                    }
                }
                () = tokio::time::sleep_until(deadline) => {
                    return Err(NatsError::Timeout {
                        req_id: request.id.clone(),
                        seconds: wait.as_secs(),
                    });
                }
            }
        }
    }

    /// The stored answer of a call, if there is one (also after the caller reconnected).
    pub async fn answer(&self, req_id: &str) -> Result<Option<SkillCallResponse>, NatsError> {
        self.store.get(req_id).await
    }

    /// `skill/discover/req` over request/reply: one worker answers.
    pub async fn discover(
        &self,
        request: &SkillDiscoverRequest,
        wait: Duration,
    ) -> Result<SkillDiscoverResponse, NatsError> {
        let payload = Bytes::from(skillet_protocol::encode(&Message::DiscoverRequest(
            request.clone(),
        )));
        let reply =
            tokio::time::timeout(wait, self.client.request(self.subjects.discover(), payload))
                .await
                .map_err(|_| NatsError::Timeout {
                    req_id: request.id.clone(),
                    seconds: wait.as_secs(),
                })?
                .map_err(|e| NatsError::io("discover (is a worker running?)", e))?;
        let text =
            std::str::from_utf8(&reply.payload).map_err(|e| NatsError::io("discover answer", e))?;
        match skillet_protocol::decode(text) {
            Ok(Message::DiscoverResponse(response)) => Ok(response),
            Ok(Message::CallResponse(rejection)) => Err(NatsError::io(
                "discover",
                rejection.error.map(|e| e.message).unwrap_or_default(),
            )),
            Ok(other) => Err(NatsError::io(
                "discover answer",
                format!("unexpected {}", other.type_name()),
            )),
            Err(e) => Err(NatsError::io(
                "discover answer",
                e.to_protocol_error().message,
            )),
        }
    }
}
