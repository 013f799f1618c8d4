//! [`NatsWorker`]: `skillet serve --nats` — one more host adapter over the [`HostCore`], taking
//! calls from a JetStream work queue instead of a socket.
//!
//! On start it creates or binds the calls stream (work-queue retention, file storage, subjects
//! `<prefix>.call.>`, dedupe by `Nats-Msg-Id` within `duplicate_window_seconds`), the durable
//! pull consumer every worker shares (explicit acks, `ack_wait`, `max_ack_pending`) and the
//! results bucket. Then it pulls at most as many messages as it has free slots (so one worker
//! never holds more calls than its `concurrency`), and for each message:
//!
//! 1. decodes the A2E `skill/call/req` (a bad message is answered like on every transport, then
//!    acked: it is never retried) and, under `[auth]`, verifies the identity its
//!    `Authorization` header names (`identity`: none or a bad one is `unauthorized`, unstored);
//! 2. when an answer for the id is already stored (a redelivery after the answer was stored, or a
//!    resubmission past the dedupe window) publishes that answer and acks — the call is not run
//!    again;
//! 3. when the message was delivered more than `max_deliveries` times, answers `runtime_error`
//!    (retryable) instead of running it (the workers that took it died or hung);
//! 4. otherwise admits the call into the core as that caller (a skill it may not run, or its
//!    own limits reached: answered, unstored) and runs it, sending an in-progress ack every
//!    third of the ack wait, publishing live events to `<prefix>.events.<req_id>`;
//!    The engine checkpoints the run after each turn into the checkpoints bucket
//!    (`checkpoints`); a redelivered call continues from its checkpoint;
//! 5. makes the answer fit the server's `max_payload` (`fit`: collected events cut, or one
//!    clear error when the output alone is too large), stores it (first stored answer wins;
//!    in-progress acks go on while the store is retried), publishes the stored answer to the
//!    `Skillet-Reply` subject, and only then acks. A store that fails permanently is answered
//!    with that failure, once — never by running the call again.
//!
//! A worker killed mid-call never acks, so after the ack wait the server hands the call to
//! another worker. Shutdown: stop pulling, let in-flight calls finish (the core's drain), store,
//! answer and ack them, exit — each step bounded by the grace (`stop`), so a worker whose server
//! is gone stops too, leaving what it could not ack to redelivery. A call the drain cancels when
//! its grace is over did not fail: its cancelled answer is neither stored nor published, its
//! checkpoint stays, and the message is NAKed, so another worker (or this one after its
//! restart) continues it from its last turn.
//! Discover requests are answered on `<prefix>.discover` by the responder it starts
//! (`discover`).
//!
//! Not here: admission, cancellation and the one-answer rule (the core), what a call means (the
//! service), the subject layout (`subjects`), the results bucket (`store`).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_nats::jetstream::{self, AckKind, consumer, stream};
use async_nats::{Client, HeaderMap};
use bytes::Bytes;
use futures::StreamExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::task::TaskTracker;

use super::checkpoints::NatsCheckpoints;
use super::discover;
use super::error::NatsError;
use super::fit;
use super::identity;
use super::stop;
use super::store::{ResultStore, StoredAnswer, owner_digest};
use super::subjects::{self, REPLY_HEADER, Subjects};
use crate::auth::Caller;
use crate::auth::audit::AuditRecord;
use crate::core::{CallScope, HostCore, Refusal};
use crate::endpoint::{Endpoint, Request};
use crate::nats::NatsOptions;
use skillet_core::events::EventSink;
use skillet_protocol::{
    ErrorCode, Message, ProtocolError, SkillCallRequest, SkillCallResponse, SkillEvent,
};

/// How long one pull request waits for messages before the loop checks for shutdown.
const PULL_EXPIRY: Duration = Duration::from_secs(1);

/// Pause after a failed pull (server unreachable) before pulling again.
const PULL_RETRY: Duration = Duration::from_millis(250);

/// How long storing an answer is retried while the server is unreachable.
const STORE_RETRY_LIMIT: Duration = Duration::from_secs(60);

/// A worker bound to its stream, consumer and results bucket, ready to [`NatsWorker::run`].
pub struct NatsWorker {
    shared: Arc<Shared>,
    consumer: consumer::PullConsumer,
    grace: Duration,
}

impl std::fmt::Debug for NatsWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsWorker")
            .field("name", &self.shared.name)
            .field("concurrency", &self.shared.concurrency)
            .finish_non_exhaustive()
    }
}

/// What every message handler needs.
struct Shared {
    name: String,
    client: Client,
    scope: CallScope,
    store: ResultStore,
    checkpoints: NatsCheckpoints,
    subjects: Subjects,
    concurrency: usize,
    ack_wait: Duration,
    max_deliveries: i64,
    /// Set when this worker's graceful stop ran out of grace and cancels the calls still
    /// running: their cancelled answers are left for redelivery instead of stored.
    grace_over: Arc<AtomicBool>,
}

impl NatsWorker {
    /// Creates or binds the stream, the shared consumer and the results bucket on `client`.
    /// Calls run through `core`; `name` identifies this worker in logs.
    pub async fn bind(
        client: Client,
        core: HostCore,
        config: &NatsOptions,
        name: impl Into<String>,
        grace: Duration,
    ) -> Result<Self, NatsError> {
        let js = jetstream::new(client.clone());
        let subjects = Subjects::new(&config.subject_prefix);
        let stream = js
            .get_or_create_stream(stream::Config {
                name: config.stream.clone(),
                description: Some("Skillet calls (skill/call/req)".into()),
                subjects: vec![subjects.all_calls()],
                retention: stream::RetentionPolicy::WorkQueue,
                storage: stream::StorageType::File,
                duplicate_window: config.duplicate_window(),
                ..Default::default()
            })
            .await
            .map_err(|e| NatsError::jetstream(format!("stream {}", config.stream), e))?;
        let consumer: consumer::PullConsumer = stream
            .get_or_create_consumer(
                &config.consumer,
                consumer::pull::Config {
                    durable_name: Some(config.consumer.clone()),
                    description: Some("Skillet workers (shared)".into()),
                    ack_policy: consumer::AckPolicy::Explicit,
                    ack_wait: config.ack_wait(),
                    // One more delivery than calls may use, so the last one is answered
                    // `runtime_error` by a worker instead of silently dropped by the server.
                    max_deliver: config.max_deliveries + 1,
                    max_ack_pending: config.max_ack_pending(),
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| NatsError::jetstream(format!("consumer {}", config.consumer), e))?;
        let store = ResultStore::open(&js, config).await?;
        let checkpoints = NatsCheckpoints::open(&js, config, client.max_payload()).await?;
        let concurrency = core.max_concurrent_calls();
        let grace_over = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&grace_over);
        core.on_grace_over(move || flag.store(true, Ordering::SeqCst));
        Ok(NatsWorker {
            shared: Arc::new(Shared {
                name: name.into(),
                client,
                scope: core.scope().through(crate::record::Door::Nats),
                store,
                checkpoints,
                subjects,
                concurrency,
                ack_wait: config.ack_wait(),
                max_deliveries: config.max_deliveries,
                grace_over,
            }),
            consumer,
            grace,
        })
    }

    /// Pulls and runs calls until `shutdown` completes, then finishes, answers and acks the
    /// calls it took within the grace period (`stop`), and returns — also when the server is
    /// gone.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), NatsError> {
        let shared = self.shared;
        let discover = discover::spawn_responder(
            shared.client.clone(),
            shared.subjects.discover(),
            shared.scope.core().clone(),
        )
        .await?;
        let handlers = TaskTracker::new();
        tracing::info!(worker = %shared.name, concurrency = shared.concurrency, "NATS worker pulling calls");
        let asked = pull_until(&shared, &self.consumer, &handlers, shutdown).await;
        tracing::info!(worker = %shared.name, in_flight = shared.scope.in_flight(), "NATS worker stopping; finishing calls");
        discover.abort();
        stop::wrap_up(
            shared.scope.core(),
            &handlers,
            &shared.client,
            asked,
            self.grace,
        )
        .await;
        Ok(())
    }
}

/// Pulls at most as many messages as there are free slots and hands each to a handler, until
/// `shutdown` completes; returns when it did.
async fn pull_until(
    shared: &Arc<Shared>,
    consumer: &consumer::PullConsumer,
    handlers: &TaskTracker,
    shutdown: impl Future<Output = ()>,
) -> Instant {
    let gate = Arc::new(Semaphore::new(shared.concurrency));
    tokio::pin!(shutdown);
    loop {
        let first = tokio::select! {
            biased;
            () = &mut shutdown => return Instant::now(),
            permit = Arc::clone(&gate).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return Instant::now(),
            },
        };
        let mut permits = vec![first];
        while let Ok(permit) = Arc::clone(&gate).try_acquire_owned() {
            permits.push(permit);
        }
        let pull = consumer
            .batch()
            .max_messages(permits.len())
            .expires(PULL_EXPIRY)
            .messages();
        let batch = tokio::select! {
            biased;
            () = &mut shutdown => return Instant::now(),
            batch = pull => batch,
        };
        let mut batch = match batch {
            Ok(batch) => batch,
            Err(e) => {
                tracing::debug!(error = %e, "pull failed; retrying");
                tokio::select! {
                    () = &mut shutdown => return Instant::now(),
                    () = tokio::time::sleep(PULL_RETRY) => continue,
                }
            }
        };
        // A pull ends by itself (count reached or expiry); every message it brings is run,
        // also when shutdown comes meanwhile, so none waits out an ack wait for nothing. But a
        // pull whose server is gone only ends on the client's own timeout, seconds later: after
        // a shutdown, the pull gets one more expiry to end, no more.
        let mut asked: Option<Instant> = None;
        loop {
            let next = tokio::select! {
                biased;
                () = &mut shutdown, if asked.is_none() => {
                    asked = Some(Instant::now());
                    continue;
                }
                () = stop::linger(asked, PULL_EXPIRY) => break,
                next = batch.next() => next,
            };
            match next {
                Some(Ok(message)) => {
                    let Some(permit) = permits.pop() else {
                        // More than asked for: leave it to the redelivery.
                        break;
                    };
                    handlers.spawn(handle(Arc::clone(shared), message, permit));
                }
                Some(Err(e)) => {
                    tracing::debug!(error = %e, "pull interrupted");
                    break;
                }
                None => break,
            }
        }
        if let Some(asked) = asked {
            return asked;
        }
    }
}

/// Runs one delivered message to its stored answer and ack (see the module doc).
async fn handle(shared: Arc<Shared>, message: jetstream::Message, _permit: OwnedSemaphorePermit) {
    let reply = message
        .headers
        .as_ref()
        .and_then(|h| h.get(REPLY_HEADER))
        .map(|v| v.as_str().to_owned());
    let delivery = message.info().map(|info| info.delivered).unwrap_or(1);
    let call = match Endpoint::parse_bytes(&message.payload) {
        Ok(Request::Call(call)) => *call,
        Ok(Request::Discover(discover)) => {
            let rejection = SkillCallResponse::rejected(
                discover.id,
                "",
                ProtocolError::new(
                    ErrorCode::InvalidMessage,
                    "skill/discover/req goes to the discover subject, not to a call subject",
                ),
            );
            return answer_unstored(&shared, &message, reply, rejection).await;
        }
        Err(rejection) => return answer_unstored(&shared, &message, reply, *rejection).await,
    };
    if !subjects::is_valid_token(&call.id) {
        let rejection = SkillCallResponse::rejected(
            call.id,
            call.name,
            ProtocolError::new(
                ErrorCode::InvalidMessage,
                format!(
                    "over NATS a call id must be 1 to {} letters, digits, '-', '_' or '='",
                    subjects::MAX_ID_LEN
                ),
            ),
        );
        return answer_unstored(&shared, &message, reply, rejection).await;
    }
    // Not stored: a message on another skill's subject must not take the id a legitimate call
    // will use (its rejection would be replayed to that call).
    if shared.subjects.skill_of(&message.subject) != Some(call.name.as_str()) {
        let rejection = SkillCallResponse::rejected(
            call.id,
            call.name,
            ProtocolError::new(
                ErrorCode::InvalidMessage,
                format!("published on {} but names another skill", message.subject),
            ),
        );
        return answer_unstored(&shared, &message, reply, rejection).await;
    }
    // Before the stored answer is looked up: an unauthenticated sender must not get a replay.
    let access = shared.scope.core().access().map(AsRef::as_ref);
    let caller = match identity::caller_of(access, message.headers.as_ref(), &call).await {
        Ok(caller) => caller,
        Err(refusal) => return answer_unstored(&shared, &message, reply, *refusal).await,
    };
    let req_id = call.id.clone();
    let owner = caller.owner();
    let stored = match shared.store.get_stored(&req_id).await {
        Ok(stored) => stored,
        Err(e) => {
            tracing::warn!(req_id = %req_id, error = %e, "cannot read the results bucket; redelivering later");
            let _ = message.ack_with(AckKind::Nak(Some(PULL_RETRY))).await;
            return;
        }
    };
    if let Some(stored) = stored {
        if !stored.belongs_to(owner) {
            let taken = id_taken(&shared, &caller, call.id, call.name);
            return answer_unstored(&shared, &message, reply, taken).await;
        }
        tracing::info!(worker = %shared.name, req_id = %req_id, delivery, "call already answered; replaying the stored answer");
        return publish_and_ack(&shared, &message, reply, &stored.response).await;
    }
    // Under [auth] the id is the first identity's: nobody else resumes or races its call.
    if let Some(owner) = owner {
        match shared
            .checkpoints
            .claim(&req_id, &owner_digest(owner))
            .await
        {
            Ok(true) => {}
            Ok(false) => {
                let taken = id_taken(&shared, &caller, call.id, call.name);
                return answer_unstored(&shared, &message, reply, taken).await;
            }
            Err(e) => {
                tracing::warn!(req_id = %req_id, error = %e, "cannot claim the call id; redelivering later");
                let _ = message.ack_with(AckKind::Nak(Some(PULL_RETRY))).await;
                return;
            }
        }
    }
    let response = if delivery > shared.max_deliveries {
        tracing::warn!(worker = %shared.name, req_id = %req_id, delivery, "call delivered too often; answering runtime_error");
        SkillCallResponse::rejected(
            call.id,
            call.name,
            ProtocolError::new(
                ErrorCode::RuntimeError,
                format!(
                    "the call was delivered {} times without an answer (its workers stopped); not run again",
                    delivery - 1
                ),
            )
            .with_retryable(true),
        )
    } else {
        match run_call(&shared, &message, call, delivery, &caller, reply.clone()).await {
            Some(response) if cancelled_by_own_stop(&shared, &response) => {
                // Not the call's answer: this worker stopped it. Its checkpoint stays and the
                // next delivery continues from the last completed turn.
                tracing::info!(worker = %shared.name, req_id = %req_id, delivery, "call stopped with the worker; left for redelivery");
                let _ = message.ack_with(AckKind::Nak(None)).await;
                return;
            }
            Some(response) => response,
            None => return,
        }
    };
    // An answer over the server's max_payload could never be stored (see `fit`).
    let response = fit::fit(response, shared.client.max_payload());
    let (name, id) = (response.name.clone(), response.req_id.clone());
    let stored = match store_with_progress(&shared, &message, response.clone(), owner).await {
        Ok(stored) => stored,
        Err(e) if e.is_permanent() => {
            tracing::error!(req_id = %req_id, error = %e, "the answer cannot be stored; answering the failure instead, once");
            let failure = fit::unstorable(response, &e);
            match store_with_progress(&shared, &message, failure.clone(), owner).await {
                Ok(stored) => stored,
                Err(_) => return answer_unstored(&shared, &message, reply, failure).await,
            }
        }
        Err(e) => {
            tracing::error!(req_id = %req_id, error = %e, "cannot store the answer; the call will be redelivered");
            return;
        }
    };
    tracing::info!(worker = %shared.name, req_id = %req_id, delivery, "call answered");
    // The answer is stored: the run's checkpoint is no longer needed (it expires anyway).
    if let Err(e) = shared.checkpoints.purge(&req_id).await {
        tracing::debug!(req_id = %req_id, error = %e, "checkpoint not purged");
    }
    // Another identity's call with the same id was stored first (a race): not its answer.
    if !stored.belongs_to(owner) {
        let taken = id_taken(&shared, &caller, id, name);
        return answer_unstored(&shared, &message, reply, taken).await;
    }
    publish_and_ack(&shared, &message, reply, &stored.response).await;
}

/// Whether `response` is a failure this worker caused by cancelling the call when its graceful
/// stop's grace was over (a success that raced the stop is still stored and answered).
fn cancelled_by_own_stop(shared: &Shared, response: &SkillCallResponse) -> bool {
    let succeeded = response.error.is_none() && response.data.as_ref().is_some_and(|d| d.success);
    !succeeded && shared.grace_over.load(Ordering::SeqCst)
}

/// The refusal of a call whose id another identity's call has: it is neither run nor given
/// that call's answer (nor told whose it is). Audited as `refused:id_taken`.
fn id_taken(shared: &Shared, caller: &Caller, req_id: String, name: String) -> SkillCallResponse {
    if let Some(access) = shared.scope.core().access() {
        access.audit(&AuditRecord::refused(
            caller.id(),
            &name,
            &req_id,
            "refused:id_taken",
        ));
    }
    SkillCallResponse::rejected(
        req_id,
        name,
        ProtocolError::new(
            ErrorCode::InvalidMessage,
            "this call id is already in use; send the call with a fresh id",
        ),
    )
}

/// Stores an answer (retrying while the server is unreachable), acking progress meanwhile so
/// that the call is not redelivered — and run again — while its answer is being stored.
async fn store_with_progress(
    shared: &Shared,
    message: &jetstream::Message,
    response: SkillCallResponse,
    owner: Option<&str>,
) -> Result<StoredAnswer, NatsError> {
    let store = shared
        .store
        .store_once_retrying(response, owner, STORE_RETRY_LIMIT);
    tokio::pin!(store);
    loop {
        tokio::select! {
            stored = &mut store => return stored,
            () = tokio::time::sleep(shared.ack_wait / 3) => {
                let _ = message.ack_with(AckKind::Progress).await;
            }
        }
    }
}

/// Runs an admitted call through the core with in-progress acks; `None` when it is already
/// running on this worker (a redelivery racing the run: the running one answers).
async fn run_call(
    shared: &Shared,
    message: &jetstream::Message,
    call: SkillCallRequest,
    delivery: i64,
    caller: &Caller,
    reply: Option<String>,
) -> Option<SkillCallResponse> {
    let admitted = match shared.scope.admit_as(caller, &call) {
        Ok(admitted) => admitted,
        Err(Refusal::DuplicateId(_)) => return None,
        // Not stored, like every refusal before a run: it must not take the id.
        Err(refusal @ (Refusal::Unauthorized | Refusal::Limited { .. })) => {
            let error = refusal.to_protocol_error();
            let rejection = SkillCallResponse::rejected(call.id, call.name, error);
            answer_unstored(shared, message, reply, rejection).await;
            return None;
        }
        Err(Refusal::Busy { .. }) => {
            // Cannot happen (the pull takes no more than free slots); let another worker try.
            let _ = message.ack_with(AckKind::Nak(Some(PULL_RETRY))).await;
            return None;
        }
    };
    let (events, forwarder) = if call.streaming {
        let (sink, outbound) = mpsc::unbounded_channel::<SkillEvent>();
        let subject = shared.subjects.events(&call.id);
        let forwarder = tokio::spawn(forward_events(shared.client.clone(), subject, outbound));
        (Some(Arc::new(sink) as Arc<dyn EventSink>), Some(forwarder))
    } else {
        (None, None)
    };
    let (answer, answered) = oneshot::channel();
    let (req_id, name) = (call.id.clone(), call.name.clone());
    shared
        .scope
        .core()
        .spawn_call(admitted, call, events, move |response| {
            let _ = answer.send(response);
        });
    tracing::info!(worker = %shared.name, req_id = %req_id, delivery, in_flight = shared.scope.in_flight(), "call started");
    tokio::pin!(answered);
    let progress_every = shared.ack_wait / 3;
    let response = loop {
        tokio::select! {
            response = &mut answered => break response.unwrap_or_else(|_| {
                SkillCallResponse::rejected(req_id.clone(), name.clone(), ProtocolError::new(
                    ErrorCode::RuntimeError, "the call ended without an answer").with_retryable(true))
            }),
            () = tokio::time::sleep(progress_every) => {
                let _ = message.ack_with(AckKind::Progress).await;
            }
        }
    };
    if let Some(forwarder) = forwarder {
        // The sink is dropped with the call; the forwarder then drains and ends.
        let _ = tokio::time::timeout(Duration::from_secs(5), forwarder).await;
    }
    Some(response)
}

/// Publishes a call's events in order.
async fn forward_events(
    client: Client,
    subject: String,
    mut events: mpsc::UnboundedReceiver<SkillEvent>,
) {
    while let Some(event) = events.recv().await {
        let line = skillet_protocol::encode(&Message::Event(event));
        let _ = client.publish(subject.clone(), Bytes::from(line)).await;
    }
}

/// Answers a message that is not a runnable call (not stored: it has no usable id), then acks
/// it so it is never retried.
async fn answer_unstored(
    shared: &Shared,
    message: &jetstream::Message,
    reply: Option<String>,
    rejection: SkillCallResponse,
) {
    tracing::info!(worker = %shared.name, req_id = %rejection.req_id, "bad call message answered");
    publish_and_ack(shared, message, reply, &rejection).await;
}

/// Publishes the answer to the reply subject (when the caller gave one), then acks.
async fn publish_and_ack(
    shared: &Shared,
    message: &jetstream::Message,
    reply: Option<String>,
    response: &SkillCallResponse,
) {
    if let Some(reply) = reply {
        if !subjects::is_safe_reply(&reply) || shared.subjects.is_own(&reply) {
            tracing::warn!(req_id = %response.req_id, "refusing to answer on a $-subject, a wildcard or one of Skillet's own subjects (the work queue, events, discover); the answer is only stored");
        } else {
            let line = skillet_protocol::encode(&Message::CallResponse(response.clone()));
            let mut headers = HeaderMap::new();
            headers.insert("Skillet-Req-Id", response.req_id.as_str());
            let _ = shared
                .client
                .publish_with_headers(reply, headers, Bytes::from(line))
                .await;
        }
    }
    // The answer is stored: an ack lost to a disconnect only costs a redelivery, which replays
    // the stored answer. Retry a little so that is rare.
    for attempt in 0..5u32 {
        match message.double_ack().await {
            Ok(()) => return,
            Err(e) => {
                tracing::debug!(req_id = %response.req_id, attempt, error = %e, "ack failed; retrying");
                tokio::time::sleep(PULL_RETRY * (attempt + 1)).await;
            }
        }
    }
}
