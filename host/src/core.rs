//! [`HostCore`]: the protocol-neutral heart every host adapter (A2E stdio, A2E HTTP, MCP, …) runs
//! calls through.
//!
//! What lives here, once for every wire protocol:
//! - **admission** — who may run what ([`Refusal::Unauthorized`], decided by the
//!   [`Access`] rules for the [`Caller`] the door authenticated: [`CallScope::admit_as`],
//!   [`HostCore::admit_anonymous_as`]), the caller's own limits ([`Refusal::Limited`]), the
//!   concurrent-call limit ([`Refusal::Busy`], answered at once, never queued) and the
//!   in-flight id rule ([`Refusal::DuplicateId`]: within one [`CallScope`], a call id may be in
//!   flight once); every decision on an identified call is audited;
//! - **visibility** — [`HostCore::discover_as`] and [`HostCore::may_see`]: a caller sees only
//!   the skills it may run;
//! - **cancellation** — per call (by id, [`CallScope::cancel`]) and for everything
//!   ([`HostCore::cancel_all`]);
//! - **shutdown/drain** — [`HostCore::drain`]: wait for calls, then cancel them, then abandon them;
//! - **event fan-out** — a call's live events go to the adapter's [`EventSink`];
//! - **one answer per call** — [`HostCore::spawn_call`] hands exactly one response to the
//!   adapter's answer callback, even when the call's task is aborted or panics.
//!
//! The per-connection [`CallScope`] (in-flight ids, cancel one or all) is `core/scope.rs`.
//!
//! Not here: decoding or framing bytes (the adapters: `endpoint`/`stdio`/`http` for A2E, `mcp`
//! for MCP), and what a call *means* (the [`SkillService`], i.e. `run`). A call is described by
//! a [`SkillCallRequest`] because that is the service contract's call type: an adapter builds one
//! from skill name + arguments with [`SkillCallRequest::new`], without speaking A2E.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::approval_desk::ApprovalDesk;
use crate::auth::audit::AuditRecord;
use crate::auth::limits::CallerPermit;
use crate::auth::{Access, Caller};
use crate::record::{CallRecorder, Door, PendingRecord};
use crate::skill_changes::SkillChanges;
use skillet_core::approval::Approver;
use skillet_core::events::EventSink;
use skillet_core::service::SkillService;
use skillet_protocol::{
    ErrorCode, ProtocolError, SkillCallRequest, SkillCallResponse, SkillDefinition,
    SkillDiscoverRequest, SkillDiscoverResponse,
};

mod scope;

pub use scope::CallScope;
use scope::IdRegistration;

/// The call metadata key the core sets to the caller's identity id (a caller's own value is
/// dropped), so the run's span names who asked (`enduser.id`).
pub(crate) use skillet_core::telemetry::CALLER_METADATA_KEY;

/// Default number of calls one host runs at once.
pub const DEFAULT_MAX_CONCURRENT_CALLS: usize = 64;

/// How long cancelled calls get to answer before they are abandoned (and answered for).
pub(crate) const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// Why a call was not admitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The concurrent-call limit is reached (retryable).
    Busy {
        /// The process's concurrent-call limit that is reached (shared by every transport).
        max_calls: usize,
    },
    /// A call with this id is already in flight in the same scope.
    DuplicateId(String),
    /// The caller may not make this call (or the skill does not exist: the two are not told
    /// apart, so a caller learns nothing about skills it may not run).
    Unauthorized,
    /// The caller's own limit (calls per minute or in flight) is reached (retryable).
    Limited {
        /// How long to wait before retrying.
        retry_after: Duration,
    },
}

impl Refusal {
    /// The A2E error for this refusal: `runtime_error` (retryable) when busy, `invalid_message`
    /// for a duplicate id. Other protocols map the same [`ErrorCode`].
    pub fn to_protocol_error(&self) -> ProtocolError {
        match self {
            Refusal::Busy { max_calls } => ProtocolError::new(
                ErrorCode::RuntimeError,
                format!("host busy: {max_calls} calls already in flight; retry later"),
            )
            .with_retryable(true),
            Refusal::DuplicateId(id) => ProtocolError::new(
                ErrorCode::InvalidMessage,
                format!("a call with id {id:?} is already in flight; use a fresh id per call"),
            ),
            Refusal::Unauthorized => {
                ProtocolError::new(ErrorCode::Unauthorized, "not authorized for this call")
            }
            Refusal::Limited { retry_after } => ProtocolError::new(
                ErrorCode::RuntimeError,
                format!(
                    "rate limited: this identity's call limit is reached; retry in {}s",
                    retry_after.as_secs().max(1)
                ),
            )
            .with_retryable(true),
        }
    }
}

/// Cheap to clone; clones share the service, the call limit, the shutdown token and the set of
/// running calls.
#[derive(Clone)]
pub struct HostCore {
    inner: Arc<CoreInner>,
}

struct CoreInner {
    service: Arc<dyn SkillService>,
    slots: Arc<Semaphore>,
    max_calls: usize,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    /// Abort handles of running call tasks, to abandon them at the end of a drain.
    running: Mutex<HashMap<u64, AbortHandle>>,
    next_task: AtomicU64,
    /// Who may run what; `None`: everyone everything.
    access: Option<Arc<Access>>,
    /// Who hears about every answered call (the console's history), once set.
    recorder: OnceLock<Arc<dyn CallRecorder>>,
    /// Where calls that asked for it get their approver (the console's), once set.
    approval_desk: OnceLock<Arc<dyn ApprovalDesk>>,
    /// Which skills changed while serving (hot reload), for the doors to tell their clients.
    changes: SkillChanges,
    /// Run once when a drain's grace is over, before the calls still running are cancelled.
    grace_over: Mutex<Vec<GraceOverHook>>,
}

/// What a door does when a shutdown's grace is over ([`HostCore::on_grace_over`]).
type GraceOverHook = Box<dyn FnOnce() + Send>;

impl std::fmt::Debug for HostCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostCore")
            .field("max_calls", &self.inner.max_calls)
            .field("in_flight", &self.in_flight())
            .finish()
    }
}

/// An admitted call: holds its slot (freed on drop) and its cancellation token.
#[derive(Debug)]
pub struct Admitted {
    permit: OwnedSemaphorePermit,
    cancel: CancellationToken,
    registration: Option<IdRegistration>,
    caller: Option<AdmittedCaller>,
    /// Who the door said the caller is (for a recorder; `None`: a trusted local caller).
    caller_id: Option<String>,
    /// The door it came through (for a recorder), when the door said.
    door: Option<Door>,
}

/// The caller of an admitted call under access rules: its room under its own limits and what
/// its audit record needs.
#[derive(Debug)]
struct AdmittedCaller {
    _permit: Option<CallerPermit>,
    id: String,
    client: Option<std::net::IpAddr>,
    access: Arc<Access>,
}

impl Admitted {
    /// The call's cancellation token (a child of the host's shutdown token).
    pub(crate) fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// The same call, recorded as come through `door` (a recorder's history shows it).
    pub fn through(mut self, door: Door) -> Admitted {
        self.door = Some(door);
        self
    }
}

impl HostCore {
    /// A core over `service` running at most `max_concurrent_calls` calls at once (at least one).
    pub fn new(service: Arc<dyn SkillService>, max_concurrent_calls: usize) -> Self {
        HostCore::with_access(service, max_concurrent_calls, None)
    }

    /// [`HostCore::new`] with access rules: calls admitted with [`CallScope::admit_as`] or
    /// [`HostCore::admit_anonymous_as`] are checked against them and audited.
    pub fn with_access(
        service: Arc<dyn SkillService>,
        max_concurrent_calls: usize,
        access: Option<Arc<Access>>,
    ) -> Self {
        let max_calls = max_concurrent_calls.max(1);
        HostCore {
            inner: Arc::new(CoreInner {
                service,
                slots: Arc::new(Semaphore::new(max_calls)),
                max_calls,
                shutdown: CancellationToken::new(),
                tracker: TaskTracker::new(),
                running: Mutex::new(HashMap::new()),
                next_task: AtomicU64::new(0),
                access,
                recorder: OnceLock::new(),
                approval_desk: OnceLock::new(),
                changes: SkillChanges::default(),
                grace_over: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The service behind this core.
    pub fn service(&self) -> &Arc<dyn SkillService> {
        &self.inner.service
    }

    /// The feed of skills changed while serving: a reloader announces, doors subscribe.
    pub fn skill_changes(&self) -> &SkillChanges {
        &self.inner.changes
    }

    /// Sets who hears about every call this core answers from now on (from every door); false
    /// when one was already set (it stays).
    pub fn set_recorder(&self, recorder: Arc<dyn CallRecorder>) -> bool {
        self.inner.recorder.set(recorder).is_ok()
    }

    /// Sets where calls that ask for it get an approver (`crate::approval_desk`); false when
    /// one was already set (it stays).
    pub fn set_approval_desk(&self, desk: Arc<dyn ApprovalDesk>) -> bool {
        self.inner.approval_desk.set(desk).is_ok()
    }

    /// The approval desk, once set.
    pub fn approval_desk(&self) -> Option<&Arc<dyn ApprovalDesk>> {
        self.inner.approval_desk.get()
    }

    /// The access rules, when configured.
    pub fn access(&self) -> Option<&Arc<Access>> {
        self.inner.access.as_ref()
    }

    /// Whether `caller` may see `skill` (everyone may without access rules).
    pub fn may_see(&self, caller: &Caller, skill: &SkillDefinition) -> bool {
        self.inner
            .access
            .as_ref()
            .is_none_or(|access| access.may_see(caller, skill))
    }

    /// The service's discover answer with only the skills `caller` may run.
    pub fn discover_as(
        &self,
        caller: &Caller,
        request: &SkillDiscoverRequest,
    ) -> SkillDiscoverResponse {
        let mut response = self.inner.service.discover(request);
        if self.inner.access.is_some() {
            response.skills.retain(|s| self.may_see(caller, s));
        }
        response
    }

    /// The access decision and the caller's limits for one call of `skill`: `Ok(None)` without
    /// access rules. Refusals are audited here.
    fn check_caller(
        &self,
        caller: &Caller,
        skill: &str,
        req_id: &str,
        llm_override: bool,
    ) -> Result<Option<AdmittedCaller>, Refusal> {
        let Some(access) = &self.inner.access else {
            return Ok(None);
        };
        let refuse = |refusal: Refusal, outcome: &str| {
            access.audit(
                &AuditRecord::refused(caller.id(), skill, req_id, outcome)
                    .with_client(caller.client()),
            );
            refusal
        };
        let find = |name: &str| {
            self.inner
                .service
                .discover(&SkillDiscoverRequest::default())
                .skills
                .into_iter()
                .find(|s| s.name == name)
        };
        if !access.may_run(caller, skill, llm_override, find) {
            return Err(refuse(Refusal::Unauthorized, "refused:unauthorized"));
        }
        let permit = access.limit(caller).map_err(|retry_after| {
            refuse(Refusal::Limited { retry_after }, "refused:rate_limited")
        })?;
        Ok(Some(AdmittedCaller {
            _permit: permit,
            id: caller.id().to_owned(),
            client: caller.client(),
            access: Arc::clone(access),
        }))
    }

    /// [`HostCore::admit_anonymous`] for a call of `skill` by `caller`, checked against the
    /// access rules first (`llm_override`: whether the call carries one).
    pub fn admit_anonymous_as(
        &self,
        caller: &Caller,
        skill: &str,
        llm_override: bool,
    ) -> Result<Admitted, Refusal> {
        let checked = self.check_caller(caller, skill, "", llm_override)?;
        let mut admitted = self.admit_anonymous()?;
        admitted.caller = checked;
        admitted.caller_id = Some(caller.id().to_owned());
        Ok(admitted)
    }

    /// Calls holding a slot now.
    pub fn in_flight(&self) -> usize {
        self.inner.max_calls - self.inner.slots.available_permits()
    }

    /// The most calls run at once.
    pub fn max_concurrent_calls(&self) -> usize {
        self.inner.max_calls
    }

    /// A fresh scope for call ids (one per connection or session).
    pub fn scope(&self) -> CallScope {
        CallScope {
            core: self.clone(),
            ids: Arc::new(Mutex::new(HashMap::new())),
            door: None,
        }
    }

    /// Reserves a slot for a call with no id to track (its adapter correlates it otherwise).
    pub fn admit_anonymous(&self) -> Result<Admitted, Refusal> {
        let permit = self.take_slot()?;
        Ok(Admitted {
            permit,
            cancel: self.inner.shutdown.child_token(),
            registration: None,
            caller: None,
            caller_id: None,
            door: None,
        })
    }

    fn take_slot(&self) -> Result<OwnedSemaphorePermit, Refusal> {
        Arc::clone(&self.inner.slots)
            .try_acquire_owned()
            .map_err(|_| {
                // Counted here, once for every protocol's refusals.
                skillet_core::telemetry::metrics::admission_refused();
                Refusal::Busy {
                    max_calls: self.inner.max_calls,
                }
            })
    }

    /// Cancels every call in flight (and any admitted later). Cancelled calls still answer.
    pub fn cancel_all(&self) {
        self.inner.shutdown.cancel();
    }

    /// Whether [`HostCore::cancel_all`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.shutdown.is_cancelled()
    }

    /// Runs an admitted call in its own task: live events go to `events` (when given and the
    /// request asked for streaming), then `answer` receives exactly one response. If the task is
    /// aborted or the service panics, `answer` receives a retryable `runtime_error` instead.
    pub fn spawn_call<F>(
        &self,
        admitted: Admitted,
        request: SkillCallRequest,
        events: Option<Arc<dyn EventSink>>,
        answer: F,
    ) where
        F: FnOnce(SkillCallResponse) + Send + 'static,
    {
        self.spawn_call_asking(admitted, request, events, None, answer);
    }

    /// [`HostCore::spawn_call`] for a door that can ask a person to approve tool calls: the
    /// run asks `approver` (when given) before each call that needs approval, instead of
    /// following the host's `[approvals] default` policy.
    pub fn spawn_call_asking<F>(
        &self,
        admitted: Admitted,
        mut request: SkillCallRequest,
        events: Option<Arc<dyn EventSink>>,
        approver: Option<Arc<dyn Approver>>,
        answer: F,
    ) where
        F: FnOnce(SkillCallResponse) + Send + 'static,
    {
        // Only the core says who the caller is.
        request.metadata.remove(CALLER_METADATA_KEY);
        if let Some(caller) = &admitted.caller {
            request.metadata.insert(
                CALLER_METADATA_KEY.to_owned(),
                serde_json::Value::String(caller.id.clone()),
            );
        }
        let guard = AnswerGuard {
            answer: Some(Box::new(answer)),
            req_id: request.id.clone(),
            name: request.name.clone(),
        };
        let service = Arc::clone(&self.inner.service);
        let task_id = self.inner.next_task.fetch_add(1, Ordering::Relaxed);
        let deregister = RunningEntry {
            core: Arc::clone(&self.inner),
            task_id,
        };
        let events = events.filter(|_| request.streaming);
        // What a recorder needs of the request, kept only when one listens.
        let recorded = self.inner.recorder.get().map(|recorder| {
            let caller = admitted.caller_id.as_deref().unwrap_or("local");
            PendingRecord::new(recorder, &request, caller, admitted.door)
        });
        let Admitted {
            permit,
            cancel,
            registration,
            caller,
            caller_id: _,
            door: _,
        } = admitted;
        tracing::debug!(req_id = %request.id, skill = %request.name, "call admitted");
        // The lock is held across the spawn so the task cannot deregister before it registered.
        let mut running = self
            .inner
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let handle = self.inner.tracker.spawn(async move {
            let _deregister = deregister;
            let response = match approver {
                Some(approver) => {
                    service
                        .call_with_approver(request, events, cancel, approver)
                        .await
                }
                None => service.call(request, events, cancel).await,
            };
            // Free the slot and the id before answering, so a caller that sees the answer can
            // reuse both at once.
            drop(permit);
            drop(registration);
            if let Some(caller) = caller {
                caller.access.audit(
                    &AuditRecord::answered(&caller.id, &response).with_client(caller.client),
                );
            }
            if let Some(recorded) = recorded {
                recorded.finish(&response);
            }
            guard.answer(response);
        });
        running.insert(task_id, handle.abort_handle());
    }

    /// Waits until every call has answered.
    pub(crate) async fn wait_idle(&self) {
        self.inner.tracker.close();
        self.inner.tracker.wait().await;
        self.inner.tracker.reopen();
    }

    /// Registers `hook`, run once when a [drain](HostCore::drain)'s grace is over, right before
    /// the calls still running are cancelled: a durable A2A task store stops recording their
    /// ends there, so the next start resumes them.
    pub fn on_grace_over(&self, hook: impl FnOnce() + Send + 'static) {
        self.inner
            .grace_over
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Box::new(hook));
    }

    /// Shutdown: calls get `grace` to finish, then are cancelled (they still answer) and get
    /// two seconds more (`CANCEL_GRACE`); any still running after that is aborted, which answers
    /// for it with a retryable `runtime_error`. Returns when every call has answered.
    pub async fn drain(&self, grace: Duration) {
        let tracker = &self.inner.tracker;
        tracker.close();
        if tokio::time::timeout(grace, tracker.wait()).await.is_err() {
            tracing::warn!(
                in_flight = self.in_flight(),
                "grace period over; cancelling calls"
            );
            let hooks = std::mem::take(
                &mut *self
                    .inner
                    .grace_over
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner),
            );
            for hook in hooks {
                hook();
            }
            self.cancel_all();
            if tokio::time::timeout(CANCEL_GRACE, tracker.wait())
                .await
                .is_err()
            {
                let handles: Vec<AbortHandle> = self
                    .inner
                    .running
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .values()
                    .cloned()
                    .collect();
                for handle in handles {
                    handle.abort();
                }
                tracker.wait().await;
            }
        }
        tracker.reopen();
    }
}

/// Removes a call task's abort handle when the task ends (also when it is aborted).
struct RunningEntry {
    core: Arc<CoreInner>,
    task_id: u64,
}

impl Drop for RunningEntry {
    fn drop(&mut self) {
        self.core
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.task_id);
    }
}

type AnswerFn = Box<dyn FnOnce(SkillCallResponse) + Send>;

/// Guarantees one answer per admitted call: if the call's task is dropped before it answered
/// (abort at shutdown, a panic in the service), the drop answers with a retryable error.
struct AnswerGuard {
    answer: Option<AnswerFn>,
    req_id: String,
    name: String,
}

impl AnswerGuard {
    fn answer(mut self, response: SkillCallResponse) {
        if let Some(answer) = self.answer.take() {
            answer(response);
        }
    }
}

impl Drop for AnswerGuard {
    fn drop(&mut self) {
        let Some(answer) = self.answer.take() else {
            return;
        };
        let error = ProtocolError::new(
            ErrorCode::RuntimeError,
            "the call was abandoned before it finished (host shutting down or internal failure)",
        )
        .with_retryable(true);
        answer(SkillCallResponse::rejected(
            std::mem::take(&mut self.req_id),
            std::mem::take(&mut self.name),
            error,
        ));
    }
}
