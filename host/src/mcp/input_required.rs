//! Approvals on MCP 2026-07-28 by multi round-trip requests (SEP-2322, MRTR): a gated tool
//! call's question answers the `tools/call` itself as an input-required result, and the client's
//! retry carrying the answer resumes the same run.
//!
//! The run is not restarted: it executes in a task of the host core and its approver
//! ([`run`]) waits while the question is out. The first request is answered with
//! `{"resultType": "input_required", "inputRequests": {"approval": <form elicitation>},
//! "requestState": <handle>}` (the form: `approval::question`). The retry — a new `tools/call`
//! of the same tool with the same arguments, `requestState` echoed and
//! `inputResponses.approval` holding the `ElicitResult` — gives the answer to the waiting run
//! (mapped by `approval::decision_of`, the legacy era's table) and is answered with the run's
//! result, or with its next question.
//!
//! `requestState` is only a handle: the state stays here, in [`PendingApprovals`] (one store per
//! server, since 2026-07-28 requests need no session). A handle is random, single-use (taking
//! the answer removes it), bound to the identity that made the call (`Caller::owner`), to the
//! tool and to its arguments; a handle that is unknown, already used, expired or presented by
//! another identity or for another call is `-32602`, saying to call again without it. A retry
//! without the answer (or with an answer that is not an `ElicitResult`, then `-32602`) leaves
//! the question waiting, under the same handle.
//!
//! Bounds: at most [`MAX_PENDING`] questions wait at once (one more is denied, saying so); a
//! question waits at most [`PENDING_TTL`], then the run is cancelled. Before that the call's
//! own deadline applies: the engine drops the question when it passes, and a later retry gets
//! the run's answer (its timeout). The run's progress and log notifications go to the request
//! driving it now — the one that started it, then each retry that answered — at that request's
//! progress token and log level; none are sent while a question waits.
//!
//! Not here: the question's form and the answer table (`approval`), admission and the legacy
//! era (`handler`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ElicitRequest, ElicitResult,
    ErrorData, InputRequest, InputRequests, InputRequiredResult, JsonObject,
};
use skillet_core::approval::{ApprovalDecision, ApprovalRequest, Approver};
use skillet_core::events::EventSink;
use skillet_protocol::{SkillCallResponse, SkillEvent};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::notify::EventForwarder;
use super::{answer, approval};

/// Most questions waiting at once, over all sessions of a server.
pub(crate) const MAX_PENDING: usize = 256;
/// How long a question waits for the client's retry before its run is cancelled.
pub(crate) const PENDING_TTL: Duration = Duration::from_secs(600);
/// The key of the approval question in `inputRequests` / `inputResponses`.
pub(crate) const INPUT_KEY: &str = "approval";

/// Whether a client with `capabilities` can be asked by a form elicitation (a bare
/// `elicitation: {}` means form, as in rmcp's reading of `initialize`).
pub(crate) fn can_ask(capabilities: Option<&ClientCapabilities>) -> bool {
    capabilities
        .and_then(|c| c.elicitation.as_ref())
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// What a run does next, as the request driving it sees it.
enum Step {
    /// The run asks; it goes on when the decision is sent (or the sender dropped).
    Ask(ApprovalRequest, oneshot::Sender<ApprovalDecision>),
    /// The run ended with this answer.
    Done(Box<SkillCallResponse>),
}

/// The run's side of its steps: what [`PendingApprovals::drive`] reads, and where the run's
/// events go now.
pub(crate) struct Steps {
    read: mpsc::UnboundedReceiver<Step>,
    relay: Relay,
}

/// The run's event sink: passes each event on to the sink of the request driving the run now
/// (none while its question waits for a retry).
#[derive(Clone, Default)]
struct Relay(Arc<Mutex<Option<Arc<dyn EventSink>>>>);

impl Relay {
    fn attach(&self, sink: Option<Arc<dyn EventSink>>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = sink;
    }
}

impl EventSink for Relay {
    fn emit(&self, event: &SkillEvent) {
        let sink = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(sink) = sink {
            sink.emit(event);
        }
    }

    /// MCP has no place for streamed model text.
    fn forwards_text(&self) -> bool {
        false
    }
}

/// Asks by handing the question to whichever request drives the run.
struct RoundTripApprover {
    steps: mpsc::UnboundedSender<Step>,
}

#[async_trait]
impl Approver for RoundTripApprover {
    async fn decide(&self, request: ApprovalRequest) -> ApprovalDecision {
        let (answer, decided) = oneshot::channel();
        if self.steps.send(Step::Ask(request, answer)).is_err() {
            return denied("the request that started the call is gone".into());
        }
        decided.await.unwrap_or_else(|_| {
            denied(format!(
                "the client did not answer the approval (a question waits at most {} s for the \
                 retry that answers it)",
                PENDING_TTL.as_secs()
            ))
        })
    }
}

fn denied(reason: String) -> ApprovalDecision {
    ApprovalDecision::Denied {
        reason: Some(reason),
    }
}

/// What starts a run asked by input-required results (`HostCore::spawn_call_asking`): its
/// approver, its event sink (passing events on to `first`, the starting request's sink, then to
/// each retry's) and its answer callback; and its steps for [`PendingApprovals::drive`].
pub(crate) struct RoundTrips<F> {
    pub(crate) approver: Arc<dyn Approver>,
    pub(crate) events: Arc<dyn EventSink>,
    pub(crate) answered: F,
    pub(crate) steps: Steps,
}

/// A run's [`RoundTrips`]; its events go to `first` until it asks.
pub(crate) fn run(
    first: Arc<dyn EventSink>,
) -> RoundTrips<impl FnOnce(SkillCallResponse) + Send + 'static> {
    let (steps, read) = mpsc::unbounded_channel();
    let answered = steps.clone();
    let relay = Relay::default();
    relay.attach(Some(first));
    RoundTrips {
        approver: Arc::new(RoundTripApprover { steps }),
        events: Arc::new(relay.clone()),
        answered: move |response| {
            let _ = answered.send(Step::Done(Box::new(response)));
        },
        steps: Steps { read, relay },
    }
}

/// What a question's handle is bound to: the caller's identity and the call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Binding {
    owner: Option<String>,
    tool: String,
    arguments: Option<JsonObject>,
}

impl Binding {
    /// The binding of `request` made by `owner` (`Caller::owner`).
    pub(crate) fn of(owner: Option<&str>, request: &CallToolRequestParams) -> Self {
        Binding {
            owner: owner.map(str::to_owned),
            tool: request.name.to_string(),
            arguments: request.arguments.clone(),
        }
    }
}

/// The questions waiting for a client's retry (see the module docs).
#[derive(Clone)]
pub(crate) struct PendingApprovals(Arc<Mutex<Inner>>);

impl std::fmt::Debug for PendingApprovals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingApprovals")
            .field("waiting", &self.inner().waiting.len())
            .finish()
    }
}

struct Inner {
    waiting: HashMap<String, Waiting>,
    max: usize,
    ttl: Duration,
}

/// One question out, and the run behind it.
struct Waiting {
    binding: Binding,
    request: ApprovalRequest,
    answer: oneshot::Sender<ApprovalDecision>,
    steps: Steps,
    run: CancellationToken,
    asked: Instant,
}

impl Default for PendingApprovals {
    fn default() -> Self {
        PendingApprovals::with_limits(MAX_PENDING, PENDING_TTL)
    }
}

impl PendingApprovals {
    /// A store of at most `max` waiting questions (at least one), each waiting at most `ttl`.
    pub(crate) fn with_limits(max: usize, ttl: Duration) -> Self {
        PendingApprovals(Arc::new(Mutex::new(Inner {
            waiting: HashMap::new(),
            max: max.max(1),
            ttl,
        })))
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Follows the run (`steps`, cancelled by `run`) until it ends — its result — or asks — an
    /// input-required result whose handle a retry resumes it with. `stop` (the request's
    /// cancellation) or the request going away cancels the run, unless it waits for a retry.
    pub(crate) async fn drive(
        &self,
        mut steps: Steps,
        binding: Binding,
        run: CancellationToken,
        stop: &CancellationToken,
    ) -> Result<CallToolResponse, ErrorData> {
        let cancel_on_drop = run.clone().drop_guard();
        loop {
            let step = tokio::select! {
                step = steps.read.recv() => step,
                () = stop.cancelled() => {
                    // rmcp sends nothing for a cancelled request; this error goes nowhere.
                    return Err(ErrorData::internal_error("cancelled by the client", None));
                }
            };
            match step {
                None => {
                    return Err(ErrorData::internal_error(
                        "the call ended without an answer",
                        None,
                    ));
                }
                Some(Step::Done(response)) => {
                    return answer::tool_result(*response).map(Into::into);
                }
                Some(Step::Ask(request, answer)) => {
                    // Nothing is sent for the run while its question waits.
                    steps.relay.attach(None);
                    let waiting = Waiting {
                        binding: binding.clone(),
                        request,
                        answer,
                        steps,
                        run: run.clone(),
                        asked: Instant::now(),
                    };
                    match self.suspend(waiting) {
                        Ok(asked) => {
                            cancel_on_drop.disarm();
                            return asked.map(Into::into);
                        }
                        Err(full) => {
                            let (full, waiting) = *full;
                            let _ = waiting.answer.send(denied(full));
                            steps = waiting.steps;
                        }
                    }
                }
            }
        }
    }

    /// Resumes the run whose question `request` (a retry by `owner`) answers, its events going
    /// to `events` (the retry's sink): its answer or next question; the same question again
    /// when the retry holds no answer; `-32602` for a handle nothing waits under for this
    /// caller and call.
    pub(crate) async fn resume(
        &self,
        owner: Option<&str>,
        events: Arc<dyn EventSink>,
        request: CallToolRequestParams,
        stop: &CancellationToken,
    ) -> Result<CallToolResponse, ErrorData> {
        let handle = request.request_state.clone().unwrap_or_default();
        let binding = Binding::of(owner, &request);
        let waiting = self.take(&handle, &binding)?;
        let Some(reply) = request
            .input_responses
            .as_ref()
            .and_then(|responses| responses.get(INPUT_KEY))
        else {
            return self.put_back(handle, waiting).map(Into::into);
        };
        let result: ElicitResult = match serde_json::from_value(reply.clone()) {
            Ok(result) => result,
            Err(e) => {
                self.put_back(handle, waiting)?;
                return Err(ErrorData::invalid_params(
                    format!(
                        "inputResponses.{INPUT_KEY} is not an elicitation result ({e}); retry \
                         with {{\"action\": \"accept\", \"content\": {{\"approve\": true|false, \
                         \"reason\"?: string}}}} or action \"decline\"; the question still waits"
                    ),
                    None,
                ));
            }
        };
        waiting.steps.relay.attach(Some(events));
        // A question the engine dropped (deadline) takes no answer; the run's end follows.
        let _ = waiting.answer.send(approval::decision_of(&result));
        self.drive(waiting.steps, binding, waiting.run, stop).await
    }

    /// Keeps `waiting` under a new handle: the input-required result asking its question (or,
    /// the store full, why it cannot wait, with `waiting` back).
    fn suspend(
        &self,
        waiting: Waiting,
    ) -> Result<Result<InputRequiredResult, ErrorData>, Box<(String, Waiting)>> {
        let mut inner = self.inner();
        inner.forget_expired();
        if inner.waiting.len() >= inner.max {
            return Err(Box::new((
                format!(
                    "too many approvals are waiting for their clients ({}); answer or abandon \
                     one, then call again",
                    inner.max
                ),
                waiting,
            )));
        }
        let handle = skillet_protocol::new_id();
        let asked = input_required(&handle, &waiting.request);
        inner.waiting.insert(handle, waiting);
        Ok(asked)
    }

    /// Puts `waiting` back under `handle` (a retry without the answer): its question again.
    fn put_back(&self, handle: String, waiting: Waiting) -> Result<InputRequiredResult, ErrorData> {
        let asked = input_required(&handle, &waiting.request);
        self.inner().waiting.insert(handle, waiting);
        asked
    }

    /// Takes the question waiting under `handle` for `binding`, or `-32602`.
    fn take(&self, handle: &str, binding: &Binding) -> Result<Waiting, ErrorData> {
        let mut inner = self.inner();
        inner.forget_expired();
        let ttl = inner.ttl;
        match inner.waiting.get(handle) {
            Some(waiting) if waiting.binding == *binding => {
                inner.waiting.remove(handle).ok_or_else(|| unknown(ttl))
            }
            _ => Err(unknown(ttl)),
        }
    }

    /// How many questions wait (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner().waiting.len()
    }
}

impl Inner {
    /// Cancels the runs of questions that waited past the TTL and forgets them.
    fn forget_expired(&mut self) {
        let ttl = self.ttl;
        self.waiting.retain(|_, waiting| {
            let keep = waiting.asked.elapsed() < ttl;
            if !keep {
                waiting.run.cancel();
            }
            keep
        });
    }
}

/// A 2026-07-28 round trip's answer (`input_required`), after the notifications sent before
/// it; when it asks, the request's notifications end (the run's wait for the retry).
pub(crate) async fn answered(
    response: Result<CallToolResponse, ErrorData>,
    forwarder: Option<EventForwarder>,
    stop: &CancellationToken,
) -> Result<CallToolResponse, ErrorData> {
    if let Some(forwarder) = forwarder {
        forwarder.flush().await;
    }
    if matches!(response, Ok(CallToolResponse::InputRequired(_))) {
        stop.cancel();
    }
    response
}

/// The `-32602` of a handle nothing waits under for this caller and call.
fn unknown(ttl: Duration) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "requestState: no approval waits under it for this call — it was answered already, \
             expired (a question waits {} s), or was given for another call or identity; call \
             the tool again without requestState and inputResponses",
            ttl.as_secs()
        ),
        None,
    )
}

/// The input-required result asking `request` under `handle`.
fn input_required(
    handle: &str,
    request: &ApprovalRequest,
) -> Result<InputRequiredResult, ErrorData> {
    let params =
        approval::question(request).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let mut requests = InputRequests::new();
    requests.insert(
        INPUT_KEY.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(params)),
    );
    Ok(InputRequiredResult::new(
        Some(requests),
        Some(handle.to_owned()),
    ))
}

#[cfg(test)]
#[path = "input_required_tests.rs"]
mod tests;
