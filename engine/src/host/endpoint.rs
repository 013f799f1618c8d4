//! [`Endpoint`]: one A2E message in → its answers out, shared by every transport.
//!
//! The endpoint turns text into a request (or into the answer rejecting it), admits calls under a
//! concurrency limit, runs them on a [`SkillService`] and delivers their live events and final
//! response to an outbound channel. It never frames bytes (that is `stdio` and `http`) and never
//! runs a skill itself (that is the service).
//!
//! # How bad messages are answered
//!
//! Only `skill/call/resp` has an `error` field, so **every** protocol error is answered with a
//! `skill/call/resp` whose `error` is `{code, message, retryable}`, with `req_id` set to the bad
//! message's `id` when it could be recovered (else `""`) and `name` to its `name` when present:
//!
//! | cause | `error.code` | `retryable` |
//! |---|---|---|
//! | not JSON, not UTF-8 | `parse_error` | false |
//! | not an object; missing/unknown `type`; a missing or ill-typed field; a host → agent message type sent to the host; an oversized message | `invalid_message` | false |
//! | `version` other than `"1.0"` | `version_mismatch` | false |
//! | the concurrent-call limit is reached | `runtime_error` | **true** |
//!
//! Rejections the service makes before execution (`unknown_skill`, `unauthorized`, input
//! `schema_violation`) arrive the same way; execution outcomes arrive in `data`.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use crate::events::EventSink;
use crate::protocol::{
    self, DecodeError, ErrorCode, Message, ProtocolError, SkillCallRequest, SkillCallResponse,
    SkillDiscoverRequest, SkillDiscoverResponse, SkillEvent,
};
use crate::service::SkillService;

/// Default number of calls one endpoint runs at once.
pub const DEFAULT_MAX_CONCURRENT_CALLS: usize = 64;

/// Where a connection's outgoing messages go, in the order they are produced.
pub type Outbound = mpsc::UnboundedSender<Message>;

/// A decoded request, or nothing to run.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `skill/discover/req`.
    Discover(SkillDiscoverRequest),
    /// `skill/call/req` (boxed: it is much larger than a discover request).
    Call(Box<SkillCallRequest>),
}

/// The protocol entry point shared by all transports. Cheap to clone; clones share the service,
/// the call limit and the shutdown token.
#[derive(Clone)]
pub struct Endpoint {
    service: Arc<dyn SkillService>,
    slots: Arc<Semaphore>,
    max_calls: usize,
    shutdown: CancellationToken,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("max_calls", &self.max_calls)
            .field("in_flight", &self.in_flight())
            .finish()
    }
}

/// A reserved call slot; the slot frees when this is dropped.
#[derive(Debug)]
pub struct CallPermit(#[allow(dead_code)] OwnedSemaphorePermit);

impl Endpoint {
    /// An endpoint over `service` running at most `max_concurrent_calls` calls at once (at least
    /// one); calls beyond that are answered at once with a retryable `runtime_error`.
    pub fn new(service: Arc<dyn SkillService>, max_concurrent_calls: usize) -> Self {
        let max_calls = max_concurrent_calls.max(1);
        Endpoint {
            service,
            slots: Arc::new(Semaphore::new(max_calls)),
            max_calls,
            shutdown: CancellationToken::new(),
        }
    }

    /// The service behind this endpoint.
    pub fn service(&self) -> &Arc<dyn SkillService> {
        &self.service
    }

    /// Calls running now.
    pub fn in_flight(&self) -> usize {
        self.max_calls - self.slots.available_permits()
    }

    /// The most calls run at once.
    pub fn max_concurrent_calls(&self) -> usize {
        self.max_calls
    }

    /// Cancels every call in flight (and any admitted later): used when a shutdown grace period
    /// runs out. Cancelled calls still produce their response.
    pub fn cancel_all(&self) {
        self.shutdown.cancel();
    }

    /// A cancellation token for one call, cancelled by [`Endpoint::cancel_all`].
    pub fn call_token(&self) -> CancellationToken {
        self.shutdown.child_token()
    }

    /// Decodes one message. A message that is not a request becomes the response rejecting it.
    pub fn parse(text: &str) -> Result<Request, Box<SkillCallResponse>> {
        match protocol::decode(text) {
            Ok(Message::DiscoverRequest(r)) => Ok(Request::Discover(r)),
            Ok(Message::CallRequest(r)) => Ok(Request::Call(Box::new(r))),
            Ok(other) => {
                let name = match &other {
                    Message::CallResponse(r) => r.name.clone(),
                    _ => String::new(),
                };
                Err(Box::new(SkillCallResponse::rejected(
                    other.id(),
                    name,
                    ProtocolError::new(
                        ErrorCode::InvalidMessage,
                        format!(
                            "{} is a host-to-agent message; send skill/discover/req or skill/call/req",
                            other.type_name()
                        ),
                    ),
                )))
            }
            Err(e) => Err(Box::new(reject_decode(&e))),
        }
    }

    /// Decodes bytes that may not be UTF-8 (`parse_error` when they are not).
    pub fn parse_bytes(bytes: &[u8]) -> Result<Request, Box<SkillCallResponse>> {
        match std::str::from_utf8(bytes) {
            Ok(text) => Endpoint::parse(text),
            Err(e) => Err(Box::new(SkillCallResponse::rejected(
                "",
                "",
                ProtocolError::new(ErrorCode::ParseError, format!("message is not UTF-8: {e}")),
            ))),
        }
    }

    /// The answer to a message larger than the transport accepts.
    pub fn oversized(limit: usize) -> SkillCallResponse {
        SkillCallResponse::rejected(
            "",
            "",
            ProtocolError::new(
                ErrorCode::InvalidMessage,
                format!("message exceeds the {limit}-byte limit"),
            ),
        )
    }

    /// Answers a discover request.
    pub fn discover(&self, request: &SkillDiscoverRequest) -> SkillDiscoverResponse {
        self.service.discover(request)
    }

    /// The A2A Agent Card of the service.
    pub fn agent_card(&self) -> serde_json::Value {
        self.service.agent_card()
    }

    /// Reserves a call slot, or returns the retryable `runtime_error` answer when all are taken.
    /// Callers admit before spawning, so the number of waiting calls is bounded.
    pub fn admit(&self, request: &SkillCallRequest) -> Result<CallPermit, Box<SkillCallResponse>> {
        match Arc::clone(&self.slots).try_acquire_owned() {
            Ok(permit) => Ok(CallPermit(permit)),
            Err(_) => {
                crate::telemetry::metrics::admission_refused();
                Err(Box::new(busy(request, self.max_calls)))
            }
        }
    }

    /// Runs an admitted call: live events (when `live` and the request asked for streaming) then
    /// exactly one `skill/call/resp` go to `out`. The response is sent even when this future is
    /// dropped half-way (the transport shut down or the task was aborted): it then reports a
    /// retryable `runtime_error`.
    pub async fn run_call(
        &self,
        permit: CallPermit,
        request: SkillCallRequest,
        out: Outbound,
        live: bool,
        cancel: CancellationToken,
    ) {
        let guard = AnswerGuard {
            out: out.clone(),
            req_id: request.id.clone(),
            name: request.name.clone(),
            answered: false,
        };
        let sink: Option<Arc<dyn EventSink>> = (live && request.streaming)
            .then(|| Arc::new(EventForwarder(out)) as Arc<dyn EventSink>);
        tracing::debug!(req_id = %request.id, skill = %request.name, "call admitted");
        let response = self.service.call(request, sink, cancel).await;
        drop(permit);
        guard.answer(response);
    }
}

/// The answer to a message that failed to decode.
pub fn reject_decode(error: &DecodeError) -> SkillCallResponse {
    SkillCallResponse::rejected(
        error.req_id.clone().unwrap_or_default(),
        error.name.clone().unwrap_or_default(),
        error.to_protocol_error(),
    )
}

fn busy(request: &SkillCallRequest, max_calls: usize) -> SkillCallResponse {
    SkillCallResponse::rejected(
        request.id.clone(),
        request.name.clone(),
        ProtocolError::new(
            ErrorCode::RuntimeError,
            format!("host busy: {max_calls} calls already in flight; retry later"),
        )
        .with_retryable(true),
    )
}

/// Forwards a call's live events into the connection's outbound channel.
struct EventForwarder(Outbound);

impl EventSink for EventForwarder {
    fn emit(&self, event: &SkillEvent) {
        // A closed channel means the peer is gone; the call still finishes and collects events.
        let _ = self.0.send(Message::Event(event.clone()));
    }
}

/// Guarantees one response per admitted call: if the call's future is dropped before it
/// answered (abort at shutdown, a panic in the service), the drop sends a retryable error.
struct AnswerGuard {
    out: Outbound,
    req_id: String,
    name: String,
    answered: bool,
}

impl AnswerGuard {
    fn answer(mut self, response: SkillCallResponse) {
        self.answered = true;
        let _ = self.out.send(Message::CallResponse(response));
    }
}

impl Drop for AnswerGuard {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        let error = ProtocolError::new(
            ErrorCode::RuntimeError,
            "the call was abandoned before it finished (host shutting down or internal failure)",
        )
        .with_retryable(true);
        let response = SkillCallResponse::rejected(
            std::mem::take(&mut self.req_id),
            std::mem::take(&mut self.name),
            error,
        );
        let _ = self.out.send(Message::CallResponse(response));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_messages_sent_to_the_host_are_invalid_message_with_their_id() {
        let text = r#"{"type":"skill/event","id":"e9","kind":"status","data":{"message":"x"}}"#;
        let err = Endpoint::parse(text).unwrap_err();
        let error = err.error.unwrap();
        assert_eq!(error.code, ErrorCode::InvalidMessage);
        assert_eq!(err.req_id, "e9");
        assert!(error.message.contains("skill/event"), "{}", error.message);
    }

    #[test]
    fn non_utf8_bytes_are_a_parse_error() {
        let err = Endpoint::parse_bytes(b"{\"type\":\xff}").unwrap_err();
        assert_eq!(err.error.unwrap().code, ErrorCode::ParseError);
    }

    #[test]
    fn decode_errors_keep_the_recovered_id_and_name() {
        let err =
            Endpoint::parse(r#"{"type":"skill/call/req","id":"c7","name":"n","streaming":"yes"}"#)
                .unwrap_err();
        assert_eq!(err.req_id, "c7");
        assert_eq!(err.name, "n");
        assert_eq!(err.error.unwrap().code, ErrorCode::InvalidMessage);
    }
}
