//! How the A2A methods refuse, so that a refusal never says whether a skill or a task exists
//! for someone else: a skill the caller may not run is refused as the core refuses a call it
//! may not make, unknown or forbidden alike ([`select_skill`]); another identity's task is
//! "not found" as an unknown id is ([`not_found`], the one text for both); a refused admission
//! maps onto A2A's codes ([`refusal_error`]).
//!
//! Not here: which skill a message selects and its arguments (`input`), who owns a task
//! (`store`), the methods themselves (`methods`).

use serde_json::{Map, Value};
use skillet_protocol::SkillDefinition;

use super::input::{SkillIndex, SkillInvocation, Unresolved};
use super::jsonrpc::{RpcCode, RpcError};
use super::wire::Message;
use crate::auth::{AuditRecord, Caller};
use crate::core::{HostCore, Refusal};

/// The skill `message` selects among those `caller` may run (the core's visibility rule).
/// Under `[auth]` an unknown skill and one the caller may not run get the same refusal the
/// core gives a call it may not make (`-32600`, `unauthorized`), audited alike; without
/// `[auth]` no skill is hidden and an unknown one is `-32602 unknown_skill`.
pub(super) fn select_skill(
    index: &SkillIndex,
    core: &HostCore,
    caller: &Caller,
    message: &Message,
    metadata: Option<&Map<String, Value>>,
) -> Result<SkillInvocation, RpcError> {
    let may_see = |skill: &SkillDefinition| core.may_see(caller, skill);
    let check_input =
        |name: &str, arguments: &Map<String, Value>| core.service().check_input(name, arguments);
    let unresolved = match index.resolve(message, metadata, may_see, check_input) {
        Ok(invocation) => return Ok(invocation),
        Err(unresolved) => unresolved,
    };
    match (unresolved, core.access()) {
        (Unresolved::NotRunnable { id, .. }, Some(access)) => {
            access.audit(
                &AuditRecord::refused(caller.id(), &id, "", "refused:unauthorized")
                    .with_client(caller.client()),
            );
            Err(refusal_error(Refusal::Unauthorized))
        }
        (unresolved, _) => Err(unresolved.unknown_skill()),
    }
}

/// A refused admission as an A2A error: busy and rate-limited are retryable internal errors,
/// a skill the caller may not run is `-32600` with `a2eCode: unauthorized` (A2A defines no
/// JSON-RPC code for it; an unauthenticated request never gets here: it is HTTP 401).
pub(super) fn refusal_error(refusal: Refusal) -> RpcError {
    let error = refusal.to_protocol_error();
    let code = match refusal {
        Refusal::Unauthorized => RpcCode::InvalidRequest,
        Refusal::Busy { .. } | Refusal::Limited { .. } | Refusal::DuplicateId(_) => {
            RpcCode::Internal
        }
    };
    let rpc = RpcError::new(code, error.message).with_metadata("a2eCode", error.code.as_str());
    if error.retryable {
        rpc.with_metadata("retryable", "true")
    } else {
        rpc
    }
}

/// The task `id` is not there for this caller: unknown, expired, or another identity's.
pub(super) fn not_found(id: &str) -> RpcError {
    RpcError::new(RpcCode::TaskNotFound, format!("task {id:?} not found"))
}

/// The task ended but left the store before its answer could be read.
pub(super) fn gone(id: &str) -> RpcError {
    RpcError::new(
        RpcCode::Internal,
        format!("task {id:?} ended but was evicted from the full task store before it was read"),
    )
}
