//! Tool-call approval over MCP: the engine's [`Approver`] as a form elicitation asked of the
//! client that made the `tools/call`, and the one mapping of its answer to a decision.
//!
//! The question and its form are the same in both eras ([`question`]): it names the skill, the
//! tool and its arguments; the form has a required boolean `approve` and an optional `reason`.
//! How it travels differs:
//! - the `initialize` era (2025-11-25): an `elicitation/create` request sent to the client
//!   ([`approver_for`], here), to a client that declared the `elicitation` capability (form
//!   mode) at `initialize`;
//! - 2026-07-28, which forbids server-to-client requests: an input-required result answering
//!   the `tools/call` itself, which the client retries with its answer (`input_required`), to a
//!   client whose request declares form elicitation.
//!
//! Any other client is not asked: the call follows the host's `[approvals] default` policy.
//! Both eras map the client's answer alike ([`decision_of`]):
//!
//! | client answer | decision |
//! |---|---|
//! | `accept` with `approve: true` | approved |
//! | `accept` with `approve: false` | denied, with `reason` when given |
//! | `decline` / `cancel` | denied ("the user declined" / "the user cancelled") |
//! | an error, a malformed answer, the session gone | denied, saying why |
//!
//! On the `initialize` era the request carries the `tools/call`'s id as its originating request
//! (SEP-2260), so on streamable HTTP it travels on that call's own SSE stream, though the call
//! runs in a task of the host core. Waiting is bounded by the call's deadline: the engine drops
//! the question when it passes.
//!
//! Not here: which calls need approval (`skillet_core::approval`), the call itself
//! (`handler`), the 2026-07-28 round trips (`input_required`).

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, RequestId, ServerRequest,
};
use rmcp::service::{ElicitationMode, OriginatingRequestId, Peer, RoleServer};
use serde_json::Value;
use skillet_core::approval::{ApprovalDecision, ApprovalRequest, Approver};

/// Asks the client of one `tools/call` through elicitation.
struct ElicitingApprover {
    peer: Peer<RoleServer>,
    call_id: RequestId,
}

/// The approver for a `tools/call` with id `call_id` from `peer`'s client, when that client can
/// be asked (it declared form elicitation).
pub(crate) fn approver_for(
    peer: &Peer<RoleServer>,
    call_id: &RequestId,
) -> Option<Arc<dyn Approver>> {
    peer.supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
        .then(|| {
            Arc::new(ElicitingApprover {
                peer: peer.clone(),
                call_id: call_id.clone(),
            }) as Arc<dyn Approver>
        })
}

/// The approval form could not be built (rmcp's schema builder refused it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the approval form could not be made: {0}")]
pub(crate) struct FormError(&'static str);

/// The form elicitation asking a person about `request`.
pub(crate) fn question(request: &ApprovalRequest) -> Result<ElicitRequestParams, FormError> {
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message(request),
        requested_schema: form()?,
    })
}

/// The form a person fills in: approve (required) and a reason.
fn form() -> Result<ElicitationSchema, FormError> {
    ElicitationSchema::builder()
        .required_bool_property("approve", |b| {
            b.title("Approve")
                .description("Run this tool call (true) or refuse it (false)")
        })
        .optional_string_with("reason", |s| {
            s.title("Reason")
                .description("Why, for the model (optional)")
        })
        .build()
        .map_err(FormError)
}

/// The question's text.
fn message(request: &ApprovalRequest) -> String {
    format!(
        "Skill `{}` wants to call the tool `{}` with arguments {}. Approve this call?",
        request.skill, request.tool, request.arguments
    )
}

/// The decision a client's answer means (the table in the module doc).
pub(crate) fn decision_of(result: &ElicitResult) -> ApprovalDecision {
    let denied = |reason: &str| ApprovalDecision::Denied {
        reason: Some(reason.to_owned()),
    };
    match result.action {
        ElicitationAction::Accept => {
            let content = result.content.as_ref();
            match content.and_then(|c| c.get("approve")) {
                Some(Value::Bool(true)) => ApprovalDecision::Approved,
                Some(Value::Bool(false)) => ApprovalDecision::Denied {
                    reason: content
                        .and_then(|c| c.get("reason"))
                        .and_then(Value::as_str)
                        .filter(|r| !r.trim().is_empty())
                        .map(str::to_owned),
                },
                _ => denied("the client's answer had no boolean `approve`"),
            }
        }
        ElicitationAction::Decline => denied("the user declined"),
        ElicitationAction::Cancel => denied("the user cancelled"),
        _ => denied("the client answered with an action this host does not know"),
    }
}

#[async_trait]
impl Approver for ElicitingApprover {
    async fn decide(&self, request: ApprovalRequest) -> ApprovalDecision {
        let params = match question(&request) {
            Ok(params) => params,
            Err(e) => {
                return ApprovalDecision::Denied {
                    reason: Some(e.to_string()),
                };
            }
        };
        let mut elicit = ElicitRequest::new(params);
        elicit
            .extensions
            .insert(OriginatingRequestId(self.call_id.clone()));
        let answer = match self
            .peer
            .send_request(ServerRequest::ElicitRequest(elicit))
            .await
        {
            Ok(answer) => answer,
            Err(e) => {
                return ApprovalDecision::Denied {
                    reason: Some(format!("the client could not be asked: {e}")),
                };
            }
        };
        match answer {
            ClientResult::ElicitResult(result) => decision_of(&result),
            _ => ApprovalDecision::Denied {
                reason: Some("the client answered the approval with something else".into()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(action: ElicitationAction, content: Option<Value>) -> ApprovalDecision {
        let mut result = ElicitResult::new(action);
        result.content = content;
        decision_of(&result)
    }

    #[test]
    fn answers_map_to_decisions_as_documented() {
        assert_eq!(
            answer(ElicitationAction::Accept, Some(json!({"approve": true}))),
            ApprovalDecision::Approved
        );
        assert_eq!(
            answer(
                ElicitationAction::Accept,
                Some(json!({"approve": false, "reason": "too risky"}))
            ),
            ApprovalDecision::Denied {
                reason: Some("too risky".into())
            }
        );
        for (action, content) in [
            (ElicitationAction::Accept, Some(json!({"approve": "yes"}))),
            (ElicitationAction::Accept, None),
            (ElicitationAction::Decline, None),
            (ElicitationAction::Cancel, None),
        ] {
            assert!(matches!(
                answer(action, content),
                ApprovalDecision::Denied { reason: Some(_) }
            ));
        }
    }

    #[test]
    fn the_form_asks_for_a_required_boolean() {
        let schema = serde_json::to_value(form().unwrap()).unwrap();
        assert_eq!(schema["properties"]["approve"]["type"], "boolean");
        assert_eq!(schema["required"], json!(["approve"]));
    }
}
