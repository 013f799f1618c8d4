//! [`Endpoint`]: the A2E adapter onto the [`HostCore`] — one A2E message in → its answers out,
//! shared by the A2E transports.
//!
//! The endpoint turns text into a request (or into the answer rejecting it) and maps requests
//! onto the core: discover is answered at once, a call is admitted in the connection's
//! [`CallScope`] and spawned, its live events and its one `skill/call/resp` go to an outbound
//! channel. It never frames bytes (that is `stdio` and `http`), never decides admission,
//! cancellation or drain itself (that is the core) and never runs a skill (that is the service).
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
//! | a call whose `id` is already in flight on the same connection (stdio) or server (HTTP) | `invalid_message` | false |
//! | `version` other than `"1.0"` | `version_mismatch` | false |
//! | the concurrent-call limit is reached | `runtime_error` | **true** |
//!
//! A call without `id` is given a fresh UUID by the decoder; its answer carries that id in
//! `req_id` and the skill in `name`, so it is only correlatable when a host has one id-less call
//! in flight — hosts should always send an `id`.
//!
//! Rejections the service makes before execution (`unknown_skill`, `unauthorized`, input
//! `schema_violation`) arrive the same way; execution outcomes arrive in `data`.

use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::auth::Caller;
use super::core::{CallScope, HostCore, Refusal};
use skillet_core::card::{AgentCard, CardError};
use skillet_core::events::EventSink;
use skillet_core::service::SkillService;
use skillet_protocol::{
    DecodeError, ErrorCode, Message, ProtocolError, SkillCallRequest, SkillCallResponse,
    SkillDiscoverRequest, SkillDiscoverResponse, SkillEvent,
};

/// Where a connection's outgoing messages go, in the order they are produced.
pub(crate) type Outbound = mpsc::UnboundedSender<Message>;

/// A decoded request, or nothing to run.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `skill/discover/req`.
    Discover(SkillDiscoverRequest),
    /// `skill/call/req` (boxed: it is much larger than a discover request).
    Call(Box<SkillCallRequest>),
}

/// What became of one dispatched message.
#[derive(Debug)]
pub enum Dispatched {
    /// It was answered at once (a discover, or a rejection of a bad message).
    Answered,
    /// The call was refused by the core; its rejection was sent.
    Refused(Refusal),
    /// The call runs; its answer will follow. The token cancels it.
    Running(CancellationToken),
}

/// The A2E adapter shared by all A2E transports. Cheap to clone; clones share the core.
#[derive(Clone, Debug)]
pub struct Endpoint {
    core: HostCore,
}

impl Endpoint {
    /// An endpoint over `service` running at most `max_concurrent_calls` calls at once (at least
    /// one); calls beyond that are answered at once with a retryable `runtime_error`.
    pub fn new(service: Arc<dyn SkillService>, max_concurrent_calls: usize) -> Self {
        Endpoint::from_core(HostCore::new(service, max_concurrent_calls))
    }

    /// An endpoint over an existing core (shared with other protocol adapters).
    pub fn from_core(core: HostCore) -> Self {
        Endpoint { core }
    }

    /// The core behind this endpoint.
    pub fn core(&self) -> &HostCore {
        &self.core
    }

    /// The service behind this endpoint.
    pub fn service(&self) -> &Arc<dyn SkillService> {
        self.core.service()
    }

    /// Calls running now.
    pub fn in_flight(&self) -> usize {
        self.core.in_flight()
    }

    /// The most calls run at once.
    pub fn max_concurrent_calls(&self) -> usize {
        self.core.max_concurrent_calls()
    }

    /// Cancels every call in flight (and any admitted later). Cancelled calls still answer.
    pub fn cancel_all(&self) {
        self.core.cancel_all();
    }

    /// Decodes one message. A message that is not a request becomes the response rejecting it.
    pub fn parse(text: &str) -> Result<Request, Box<SkillCallResponse>> {
        match skillet_protocol::decode(text) {
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
    pub(crate) fn parse_bytes(bytes: &[u8]) -> Result<Request, Box<SkillCallResponse>> {
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
        self.core.service().discover(request)
    }

    /// The A2A Agent Card of the service.
    pub fn agent_card(&self) -> Result<AgentCard, CardError> {
        self.core.service().agent_card()
    }

    /// Decodes one message's bytes and dispatches it (see [`Endpoint::dispatch`]).
    pub(crate) fn handle_bytes(
        &self,
        scope: &CallScope,
        bytes: &[u8],
        out: &Outbound,
        live: bool,
    ) -> Dispatched {
        match Endpoint::parse_bytes(bytes) {
            Ok(request) => self.dispatch(scope, request, out, live),
            Err(rejection) => {
                let _ = out.send(Message::CallResponse(*rejection));
                Dispatched::Answered
            }
        }
    }

    /// Maps one request onto the core: a discover is answered at once; a call is admitted in
    /// `scope` (or refused: its rejection goes to `out`) and run, sending its live events (when
    /// `live` and the request asked for streaming) and then exactly one `skill/call/resp` to
    /// `out`.
    pub fn dispatch(
        &self,
        scope: &CallScope,
        request: Request,
        out: &Outbound,
        live: bool,
    ) -> Dispatched {
        self.dispatch_as(&Caller::Local, scope, request, out, live)
    }

    /// [`Endpoint::dispatch`] for `caller`: discover lists only the skills it may run, and a
    /// call it may not make is refused (`unauthorized`) by the core's admission.
    pub fn dispatch_as(
        &self,
        caller: &Caller,
        scope: &CallScope,
        request: Request,
        out: &Outbound,
        live: bool,
    ) -> Dispatched {
        self.dispatch_asking(caller, scope, request, out, live, false)
    }

    /// [`Endpoint::dispatch_as`]; with `ask_desk`, a call gets its approver from the core's
    /// approval desk (`crate::approval_desk`, the console's page) when there is one, instead of
    /// following the host's `[approvals] default`.
    pub fn dispatch_asking(
        &self,
        caller: &Caller,
        scope: &CallScope,
        request: Request,
        out: &Outbound,
        live: bool,
        ask_desk: bool,
    ) -> Dispatched {
        let call = match request {
            Request::Discover(discover) => {
                let answer = self.core.discover_as(caller, &discover);
                let _ = out.send(Message::DiscoverResponse(answer));
                return Dispatched::Answered;
            }
            Request::Call(call) => *call,
        };
        let admitted = match scope.admit_as(caller, &call) {
            // The console's page is the caller that asks its desk.
            Ok(admitted) if ask_desk => admitted.through(crate::record::Door::Console),
            Ok(admitted) => admitted,
            Err(refusal) => {
                let _ = out.send(Message::CallResponse(SkillCallResponse::rejected(
                    call.id,
                    call.name,
                    refusal.to_protocol_error(),
                )));
                return Dispatched::Refused(refusal);
            }
        };
        let cancel = admitted.cancel_token();
        let events = live.then(|| Arc::new(EventForwarder(out.clone())) as Arc<dyn EventSink>);
        let answers = out.clone();
        let approver = ask_desk
            .then(|| self.core.approval_desk())
            .flatten()
            .and_then(|desk| desk.approver_for(caller, &call));
        self.core
            .spawn_call_asking(admitted, call, events, approver, move |response| {
                let _ = answers.send(Message::CallResponse(response));
            });
        Dispatched::Running(cancel)
    }
}

/// The answer to a message that failed to decode.
pub(crate) fn reject_decode(error: &DecodeError) -> SkillCallResponse {
    SkillCallResponse::rejected(
        error.req_id.clone().unwrap_or_default(),
        error.name.clone().unwrap_or_default(),
        error.to_protocol_error(),
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
