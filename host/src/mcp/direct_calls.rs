//! [`DirectCalls`]: MCP over stdio's own dispatch of `tools/call`. A call request read off the
//! input is admitted and started where it is read, and the call writes its answer onto the
//! output itself when it ends, without rmcp's service loop in between.
//!
//! Why: for each request, rmcp's loop spawns a task to run the handler, awaits the handler's
//! answer over a oneshot (the handler awaits the core's call the same way), sends the result back
//! to the loop through a channel, and spawns another task to write it (BENCHMARKS.md,
//! "2026-12-05, later"). A call already runs on a task of the core's and already writes its
//! notifications where they are emitted (`notify::DirectSink`); here its answer goes the same
//! way, from the core's answer callback.
//!
//! It answers exactly as `McpHandler::call_tool` behind rmcp does: the same admission
//! (`McpHandler::admit_call`), the same result mapping (`answer`), the result post-processed
//! for the negotiated version as rmcp's dispatch does, written by the same encoder as every
//! other line (`line_transport::encode`). What stays rmcp's is every other message, and
//! `tools/call` wherever rmcp's dispatch does more than call the handler:
//! - until the session is initialized, and for the whole session when it was opened without
//!   `initialize` (the 2026-07-28 inline lifecycle, where rmcp checks each request's `_meta`);
//! - a session whose client declared the Tasks extension at `initialize` (its calls are tasks);
//! - a request whose `_meta` carries a lifecycle key (`io.modelcontextprotocol/…`: a protocol
//!   version rmcp checks, client capabilities, a log level).
//!
//! Cancellation: a `notifications/cancelled` naming a direct call cancels its run and its sink
//! (nothing more is written for it, no answer either), then goes on to rmcp, which knows no such
//! request and ignores it. At the end of input the direct calls are among the requests
//! `DrainAtEof` waits for (it counted them when it read them): each is marked answered when its
//! answer is written or, cancelled, when its run has ended.
//!
//! Not here: reading lines (`line_transport`), the handler's rmcp dispatch (`handler`), the
//! output (`coalesce`).

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequest, CallToolResponse, ClientNotification, ClientRequest, ErrorData,
    JsonRpcMessage, JsonRpcRequest, ProtocolVersion, RequestId, RequestMetaObject, ServerResult,
};
use rmcp::service::{Peer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio_util::sync::CancellationToken;

use super::coalesce::LineSender;
use super::eof_drain::OpenRequests;
use super::handler::McpHandler;
use super::notify::DirectSink;
use super::{answer, approval, line_transport};
use skillet_protocol::SkillCallResponse;

/// The prefix of the `_meta` keys of MCP's own lifecycle (protocol version, client info and
/// capabilities, log level): a request carrying one is left to rmcp.
const LIFECYCLE_KEY_PREFIX: &str = "io.modelcontextprotocol/";

/// One stdio session's direct `tools/call` dispatch (see the module docs).
pub(crate) struct DirectCalls {
    handler: McpHandler,
    output: LineSender,
    open: Arc<OpenRequests>,
    /// Set once rmcp's handshake is done, if the session was opened by `initialize`.
    session: OnceLock<Session>,
    /// Direct calls running: the request's id, and what its cancellation cancels.
    running: Mutex<HashMap<RequestId, Running>>,
}

/// What an initialized session fixes for all its direct calls.
struct Session {
    peer: Peer<RoleServer>,
    /// The negotiated version is 2026-07-28 or later (results get cache hints; older peers get
    /// the legacy shapes).
    current: bool,
}

/// A direct call's two tokens: its sink's (nothing more is written) and its run's.
struct Running {
    sink: CancellationToken,
    run: CancellationToken,
}

impl DirectCalls {
    /// A dispatch for `handler`'s session, writing to `output`; `open` is the session's
    /// `DrainAtEof` count of requests not yet answered.
    pub(crate) fn new(
        handler: McpHandler,
        output: LineSender,
        open: Arc<OpenRequests>,
    ) -> Arc<Self> {
        Arc::new(DirectCalls {
            handler,
            output,
            open,
            session: OnceLock::new(),
            running: Mutex::new(HashMap::new()),
        })
    }

    /// Called with the running session's peer once rmcp's handshake is done; until then, and for
    /// a session opened without `initialize` (rmcp keeps peer info only for one opened by it),
    /// every message is rmcp's — and for a client that declared the Tasks extension, whose
    /// calls run as tasks (`tasks_run`).
    pub(crate) fn start(&self, peer: &Peer<RoleServer>) {
        if let Some(info) = peer.peer_info()
            && !info.capabilities.supports_tasks()
        {
            let _ = self.session.set(Session {
                peer: peer.clone(),
                current: info.protocol_version >= ProtocolVersion::V_2026_07_28,
            });
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Running>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `message`, unless it is a `tools/call` this dispatch ran; a cancellation of a direct
    /// call cancels it on the way through.
    fn take(
        self: &Arc<Self>,
        message: RxJsonRpcMessage<RoleServer>,
    ) -> Option<RxJsonRpcMessage<RoleServer>> {
        let Some(session) = self.session.get() else {
            return Some(message);
        };
        match message {
            JsonRpcMessage::Request(JsonRpcRequest {
                id,
                request: ClientRequest::CallToolRequest(request),
                ..
            }) if !names_lifecycle(&request) => {
                self.run(session, id, request);
                None
            }
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                    && let Some(running) = self.running().remove(id)
                {
                    tracing::debug!(%id, "direct MCP call cancelled by the client");
                    running.sink.cancel();
                    running.run.cancel();
                }
                Some(JsonRpcMessage::Notification(notification))
            }
            other => Some(other),
        }
    }

    /// Admits and starts one call; an immediate refusal is answered at once.
    fn run(self: &Arc<Self>, session: &Session, id: RequestId, mut request: CallToolRequest) {
        let meta = request
            .extensions
            .remove::<RequestMetaObject>()
            .unwrap_or_default();
        let caller = crate::auth::http::caller_of_mcp(&request.extensions);
        let (admitted, call) = match self.handler.admit_call(&caller, &id, &meta, request.params) {
            Ok(running) => running,
            Err(answer) => {
                self.answer(session, &id, *answer);
                return;
            }
        };
        let sink_stop = CancellationToken::new();
        self.running().insert(
            id.clone(),
            Running {
                sink: sink_stop.clone(),
                run: admitted.cancel_token(),
            },
        );
        let sink = DirectSink::start(
            self.output.clone(),
            meta.get_progress_token(),
            self.handler.log_level().clone(),
            sink_stop,
        );
        let approver = approval::approver_for(&session.peer, &id);
        let calls = Arc::clone(self);
        self.handler.core().spawn_call_asking(
            admitted,
            call,
            Some(sink),
            approver,
            move |response| {
                calls.finish(id, response);
            },
        );
    }

    /// The core's answer to a direct call: written, unless the client cancelled the call.
    fn finish(&self, id: RequestId, response: SkillCallResponse) {
        let cancelled = self.running().remove(&id).is_none();
        match self.session.get() {
            Some(session) if !cancelled => {
                self.answer(session, &id, answer::tool_result(response).map(Into::into));
            }
            _ => self.open.answered(&id),
        }
    }

    /// Writes the answer to request `id` as rmcp's dispatch would send it, and counts the
    /// request answered.
    fn answer(
        &self,
        session: &Session,
        id: &RequestId,
        answer: Result<CallToolResponse, ErrorData>,
    ) {
        let message = match answer.map(ServerResult::from) {
            Ok(ServerResult::InputRequiredResult(_)) if !session.current => {
                TxJsonRpcMessage::<RoleServer>::error(
                    ErrorData::invalid_request(
                        "InputRequiredResult requires negotiated protocol version 2026-07-28 or newer",
                        None,
                    ),
                    Some(id.clone()),
                )
            }
            Ok(mut result) => {
                if session.current {
                    result.fill_missing_cache_hints();
                } else {
                    result.strip_result_type_for_legacy_peer();
                    result.strip_non_object_output_for_legacy_peer();
                }
                TxJsonRpcMessage::<RoleServer>::response(result, id.clone())
            }
            Err(error) => TxJsonRpcMessage::<RoleServer>::error(error, Some(id.clone())),
        };
        let line = match line_transport::encode(&message) {
            Ok(line) => line,
            Err(e) => {
                tracing::error!(%id, "an MCP answer could not be written: {e}");
                let error = TxJsonRpcMessage::<RoleServer>::error(
                    ErrorData::internal_error("the answer could not be written", None),
                    Some(id.clone()),
                );
                line_transport::encode(&error).unwrap_or_default()
            }
        };
        if self.output.send_answer(&line).is_err() {
            tracing::debug!(%id, "the MCP output is closed; an answer was not written");
        }
        self.open.answered(id);
    }
}

/// Whether the request's `_meta` carries one of MCP's lifecycle keys.
fn names_lifecycle(request: &CallToolRequest) -> bool {
    request
        .extensions
        .get::<RequestMetaObject>()
        .is_some_and(|meta| meta.keys().any(|key| key.starts_with(LIFECYCLE_KEY_PREFIX)))
}

/// A server transport that hands `tools/call` requests to [`DirectCalls`] and every other
/// message on to rmcp.
pub(crate) struct DirectDispatch<T> {
    inner: T,
    calls: Arc<DirectCalls>,
}

impl<T> DirectDispatch<T> {
    /// `inner`, with `calls` taking its `tools/call` requests once started.
    pub(crate) fn new(inner: T, calls: Arc<DirectCalls>) -> Self {
        DirectDispatch { inner, calls }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for DirectDispatch<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let message = self.inner.receive().await?;
            if let Some(message) = self.calls.take(message) {
                return Some(message);
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
