//! Tool-call approvals decided from the console's page: the engine's [`Approver`] for the runs
//! the page starts (`POST /a2e` with the `X-Skillet-Console` header, `crate::approval_desk`)
//! parks each question here until the page answers it.
//!
//! - A parked question is listed to its owner only — the identity that started the run
//!   (`GET /console/api/approvals`) — with the tool, its arguments as the engine shows them
//!   (already redacted of every secret the host knows) and how long it has waited.
//! - Only its owner may decide it (`POST /console/api/approvals/{id}`); a decision for an id
//!   that is unknown, already decided, expired or someone else's is the same "not found", once.
//! - A question ends when it is decided or when the run stops waiting (its deadline passed or it
//!   was cancelled: the engine drops the approver's future, which removes the question).
//! - At most [`MAX_PENDING`] questions wait at once; one more is denied with the reason, at once.
//! - Under `[auth]` a run gets this approver only when its caller may use the console (the
//!   console scope): anyone else could never answer, so their calls follow the host's policy.
//!
//! Ids are 128 random bits, so a page cannot guess another's question even where every caller
//! is the same (no `[auth]`, loopback).
//!
//! Not here: the routes (`super::api`), the gate and its events (the engine's `run::approval`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use async_trait::async_trait;
use ring::rand::{SecureRandom, SystemRandom};
use serde_json::Value;
use skillet_core::approval::{ApprovalDecision, ApprovalRequest, Approver};
use skillet_protocol::SkillCallRequest;
use tokio::sync::oneshot;

use crate::approval_desk::ApprovalDesk;
use crate::auth::{Access, Caller};

/// The most questions waiting at once, across every run.
pub(crate) const MAX_PENDING: usize = 256;

/// The longest reason a denial keeps (characters); the rest is cut.
pub(crate) const MAX_REASON_CHARS: usize = 1000;

/// The console's pending approvals (cheap to clone: one shared map).
#[derive(Clone)]
pub(crate) struct Approvals {
    inner: Arc<Inner>,
}

struct Inner {
    pending: Mutex<HashMap<String, Pending>>,
    access: Option<Arc<Access>>,
    random: SystemRandom,
}

struct Pending {
    owner: String,
    req_id: String,
    request: ApprovalRequest,
    asked_at: Instant,
    answer: oneshot::Sender<ApprovalDecision>,
}

/// One waiting question as its owner's page sees it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct PendingApproval {
    /// What a decision names.
    pub id: String,
    /// The run's call id (the `skill/call/req` id).
    pub req_id: String,
    /// The skill of the run.
    pub skill: String,
    /// The tool that waits.
    pub tool: String,
    /// The model's id of the tool call (the `call_id` of the run's `approval` status events).
    pub call_id: String,
    /// The arguments the tool would run with, redacted.
    pub arguments: Value,
    /// How long it has waited, in milliseconds.
    pub waiting_ms: u64,
}

/// A decision that found no question (unknown, decided, expired or not the caller's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnknownApproval;

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approvals")
            .field("pending", &self.lock().len())
            .finish()
    }
}

impl Approvals {
    /// No question waits yet; `access` decides whose runs may be asked here.
    pub(crate) fn new(access: Option<Arc<Access>>) -> Approvals {
        Approvals {
            inner: Arc::new(Inner {
                pending: Mutex::new(HashMap::new()),
                access,
                random: SystemRandom::new(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pending>> {
        self.inner
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The questions `caller` owns, the longest-waiting first.
    pub(crate) fn pending_for(&self, caller: &Caller) -> Vec<PendingApproval> {
        let owner = caller.id();
        let mut mine: Vec<PendingApproval> = self
            .lock()
            .iter()
            .filter(|(_, p)| p.owner == owner)
            .map(|(id, p)| PendingApproval {
                id: id.clone(),
                req_id: p.req_id.clone(),
                skill: p.request.skill.clone(),
                tool: p.request.tool.clone(),
                call_id: p.request.call_id.clone(),
                arguments: p.request.arguments.clone(),
                waiting_ms: u64::try_from(p.asked_at.elapsed().as_millis()).unwrap_or(u64::MAX),
            })
            .collect();
        mine.sort_by(|a, b| b.waiting_ms.cmp(&a.waiting_ms).then(a.id.cmp(&b.id)));
        mine
    }

    /// Answers the question `id` for `caller`, who must own it.
    pub(crate) fn decide(
        &self,
        caller: &Caller,
        id: &str,
        decision: ApprovalDecision,
    ) -> Result<(), UnknownApproval> {
        let pending = {
            let mut map = self.lock();
            match map.get(id) {
                Some(p) if p.owner == caller.id() => map.remove(id),
                _ => None,
            }
        };
        let Some(pending) = pending else {
            return Err(UnknownApproval);
        };
        tracing::info!(
            identity = %caller.id(),
            req_id = %pending.req_id,
            tool = %pending.request.tool,
            approved = matches!(decision, ApprovalDecision::Approved),
            "console: tool-call approval decided"
        );
        // The run may have stopped waiting in between: then nobody hears it, as if expired.
        pending.answer.send(decision).map_err(|_| UnknownApproval)
    }

    /// Parks `request` of the run `req_id` owned by `owner`; `Err` is the decision when it
    /// cannot wait (the map is full).
    fn park(
        &self,
        owner: &str,
        req_id: &str,
        request: ApprovalRequest,
    ) -> Result<(String, oneshot::Receiver<ApprovalDecision>), ApprovalDecision> {
        let mut bytes = [0u8; 16];
        if self.inner.random.fill(&mut bytes).is_err() {
            return Err(denied("the console could not make an approval id"));
        }
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let (answer, decided) = oneshot::channel();
        let mut map = self.lock();
        if map.len() >= MAX_PENDING {
            return Err(denied(&format!(
                "{MAX_PENDING} approvals already wait in the console"
            )));
        }
        map.insert(
            id.clone(),
            Pending {
                owner: owner.to_owned(),
                req_id: req_id.to_owned(),
                request,
                asked_at: Instant::now(),
                answer,
            },
        );
        Ok((id, decided))
    }

    fn forget(&self, id: &str) {
        self.lock().remove(id);
    }
}

fn denied(reason: &str) -> ApprovalDecision {
    ApprovalDecision::Denied {
        reason: Some(reason.to_owned()),
    }
}

/// `reason` as a denial keeps it: trimmed, empty is none, at most [`MAX_REASON_CHARS`].
pub(crate) fn denial(reason: Option<&str>) -> ApprovalDecision {
    let reason = reason
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(|r| r.chars().take(MAX_REASON_CHARS).collect());
    ApprovalDecision::Denied { reason }
}

impl ApprovalDesk for Approvals {
    fn approver_for(
        &self,
        caller: &Caller,
        request: &SkillCallRequest,
    ) -> Option<Arc<dyn Approver>> {
        if let Some(access) = &self.inner.access
            && !access.may_use_console(caller)
        {
            return None;
        }
        Some(Arc::new(ConsoleApprover {
            approvals: self.clone(),
            owner: caller.id().to_owned(),
            req_id: request.id.clone(),
        }))
    }
}

/// One run's approver: parks each question and waits for the page.
struct ConsoleApprover {
    approvals: Approvals,
    owner: String,
    req_id: String,
}

/// Removes a question its run stopped waiting for.
struct Unpark<'a> {
    approvals: &'a Approvals,
    id: &'a str,
}

impl Drop for Unpark<'_> {
    fn drop(&mut self) {
        self.approvals.forget(self.id);
    }
}

#[async_trait]
impl Approver for ConsoleApprover {
    async fn decide(&self, request: ApprovalRequest) -> ApprovalDecision {
        let (id, decided) = match self.approvals.park(&self.owner, &self.req_id, request) {
            Ok(parked) => parked,
            Err(decision) => return decision,
        };
        let _unpark = Unpark {
            approvals: &self.approvals,
            id: &id,
        };
        decided
            .await
            .unwrap_or_else(|_| denied("the console's question went away unanswered"))
    }
}

#[cfg(test)]
#[path = "approvals_tests.rs"]
mod tests;
