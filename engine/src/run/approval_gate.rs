//! [`ApprovalGate`]: one call's approvals — the host's [`ApprovalPolicy`], the skill's additions
//! and the call's [`Approver`] — asked by tool dispatch before a gated tool runs. Waiting for the
//! answer counts against the call's deadline (the run loop drops the whole call when it passes,
//! dropping the question with it) and ends on cancellation.
//!
//! Every request and every decision is a `status` event whose `detail` says what happened
//! (`{"approval": "requested" | "approved" | "denied", "tool", "call_id", ...}`), and the tool's
//! span records `skillet.approval` (`approved`, `denied`) and `skillet.approval.by`
//! (`caller`, `policy`). A denial is a tool error the model reads, with the reason when one
//! was given; the tool does not run.
//!
//! Not here: the contract types a door implements (`skillet_core::approval`), how a door asks
//! (its own modules in `skillet-host`), or anything else dispatch checks.

use std::sync::Arc;

use serde_json::{Value, json};
use skillet_providers::ToolCall;
use tokio_util::sync::CancellationToken;

use crate::events::EventEmitter;
use crate::protocol::EventPayload;
use skillet_core::approval::{
    ApprovalDecision, ApprovalPolicy, ApprovalRequest, Approver, Unasked,
};

/// One call's approvals: the host's policy, the skill's additions and the call's approver.
#[derive(Clone, Copy)]
pub(crate) struct ApprovalGate<'a> {
    policy: &'a ApprovalPolicy,
    skill_name: &'a str,
    skill_tools: &'a [String],
    approver: Option<&'a Arc<dyn Approver>>,
}

/// Who decided.
#[derive(Clone, Copy)]
enum DecidedBy {
    Caller,
    Policy,
}

impl DecidedBy {
    fn as_str(self) -> &'static str {
        match self {
            DecidedBy::Caller => "caller",
            DecidedBy::Policy => "policy",
        }
    }
}

impl<'a> ApprovalGate<'a> {
    /// The gate of a call of `skill_name` (whose `a2e-approval` is `skill_tools`).
    pub(crate) fn new(
        policy: &'a ApprovalPolicy,
        skill_name: &'a str,
        skill_tools: &'a [String],
        approver: Option<&'a Arc<dyn Approver>>,
    ) -> Self {
        ApprovalGate {
            policy,
            skill_name,
            skill_tools,
            approver,
        }
    }

    /// Whether a call of the tool registered as `tool`, offered to the model as `offered`,
    /// needs approval.
    fn requires(&self, tool: &str, offered: &str) -> bool {
        self.policy.requires(tool)
            || self.policy.requires(offered)
            || self.skill_tools.iter().any(|t| t == tool || t == offered)
    }

    /// Lets `call` of the tool registered as `tool` go ahead (`Ok`) or answers the text of the
    /// tool error the model reads instead (`Err`). Calls that need no approval pass at once,
    /// without an event.
    pub(crate) async fn check(
        &self,
        tool: &str,
        call: &ToolCall,
        events: &EventEmitter,
        cancel: &CancellationToken,
        span: &tracing::Span,
    ) -> Result<(), String> {
        if !self.requires(tool, &call.name) {
            return Ok(());
        }
        // Shown to the caller as `log` events are: a secret the host knows never leaves.
        let arguments = redacted(&call.arguments);
        events.emit(EventPayload::status_with(
            format!("approval requested: tool {tool}"),
            json!({
                "approval": "requested",
                "tool": tool,
                "call_id": call.id,
                "arguments": arguments,
            }),
        ));
        let (decision, by) = match self.approver {
            Some(approver) => {
                let request = ApprovalRequest {
                    skill: self.skill_name.to_owned(),
                    tool: tool.to_owned(),
                    call_id: call.id.clone(),
                    arguments,
                };
                let decision = tokio::select! {
                    decision = approver.decide(request) => decision,
                    () = cancel.cancelled() => ApprovalDecision::Denied {
                        reason: Some("the call was cancelled while waiting for approval".into()),
                    },
                };
                (decision, DecidedBy::Caller)
            }
            None => (
                match self.policy.unasked() {
                    Unasked::Allow => ApprovalDecision::Approved,
                    Unasked::Deny => ApprovalDecision::Denied { reason: None },
                },
                DecidedBy::Policy,
            ),
        };
        span.record("skillet.approval.by", by.as_str());
        match decision {
            ApprovalDecision::Approved => {
                span.record("skillet.approval", "approved");
                events.emit(EventPayload::status_with(
                    format!("approval granted: tool {tool}"),
                    json!({
                        "approval": "approved",
                        "tool": tool,
                        "call_id": call.id,
                        "by": by.as_str(),
                    }),
                ));
                Ok(())
            }
            ApprovalDecision::Denied { reason } => {
                span.record("skillet.approval", "denied");
                let mut detail = json!({
                    "approval": "denied",
                    "tool": tool,
                    "call_id": call.id,
                    "by": by.as_str(),
                });
                if let Some(reason) = &reason {
                    detail["reason"] = Value::String(reason.clone());
                }
                events.emit(EventPayload::status_with(
                    format!("approval denied: tool {tool}"),
                    detail,
                ));
                Err(denial_text(tool, by, reason.as_deref()))
            }
        }
    }
}

/// `arguments` with every secret the host knows replaced (`crate::secrets`). A secret inside a
/// string leaves the same JSON; one that was a bare number leaves the redacted text as a string.
fn redacted(arguments: &Value) -> Value {
    let text = crate::secrets::REDACTOR.redact_owned(arguments.to_string());
    serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text))
}

/// The tool error the model reads for a denied call.
fn denial_text(tool: &str, by: DecidedBy, reason: Option<&str>) -> String {
    match (by, reason) {
        (DecidedBy::Policy, _) => format!(
            "tool `{tool}` was not run: it needs a person's approval and this caller cannot be \
             asked, so the host's policy denied it"
        ),
        (DecidedBy::Caller, Some(reason)) => {
            format!("tool `{tool}` was not run: the caller denied approval: {reason}")
        }
        (DecidedBy::Caller, None) => {
            format!("tool `{tool}` was not run: the caller denied approval")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: "shell".into(),
            arguments: json!({"cmd": "ls"}),
            invalid_arguments: None,
        }
    }

    struct Says(ApprovalDecision);

    #[async_trait::async_trait]
    impl Approver for Says {
        async fn decide(&self, _: ApprovalRequest) -> ApprovalDecision {
            self.0.clone()
        }
    }

    fn details(events: &EventEmitter) -> Vec<Value> {
        events
            .take_collected()
            .0
            .into_iter()
            .filter_map(|e| match e.payload {
                EventPayload::Status { detail, .. } => detail,
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_secret_in_the_arguments_is_never_shown_to_the_approver() {
        crate::secrets::REDACTOR.add(secrecy::SecretString::from("canary-approval-9f3k2"));
        let shown = redacted(&json!({"cmd": "curl -H 'x: canary-approval-9f3k2'", "n": 1}));
        assert_eq!(
            shown,
            json!({"cmd": format!("curl -H 'x: {}'", crate::secrets::REDACTED), "n": 1})
        );
    }

    #[tokio::test]
    async fn a_tool_nobody_gated_passes_without_an_event() {
        let policy = ApprovalPolicy::new().require("other");
        let events = EventEmitter::new("r", None, 100);
        let gate = ApprovalGate::new(&policy, "s", &[], None);
        let cancel = CancellationToken::new();
        let span = tracing::Span::none();
        assert_eq!(
            gate.check("shell", &call(), &events, &cancel, &span).await,
            Ok(())
        );
        assert!(details(&events).is_empty());
    }

    #[tokio::test]
    async fn unasked_calls_follow_the_policy_and_say_so() {
        let cancel = CancellationToken::new();
        let span = tracing::Span::none();
        let deny = ApprovalPolicy::new().require("shell");
        let events = EventEmitter::new("r", None, 100);
        let denied = ApprovalGate::new(&deny, "s", &[], None)
            .check("shell", &call(), &events, &cancel, &span)
            .await
            .unwrap_err();
        assert!(denied.contains("policy denied"), "{denied}");
        let seen = details(&events);
        assert_eq!(seen[0]["approval"], "requested");
        assert_eq!(seen[0]["arguments"], json!({"cmd": "ls"}));
        assert_eq!(seen[1]["approval"], "denied");
        assert_eq!(seen[1]["by"], "policy");

        let allow = deny.clone().when_unasked(Unasked::Allow);
        let events = EventEmitter::new("r", None, 100);
        let gate = ApprovalGate::new(&allow, "s", &[], None);
        assert_eq!(
            gate.check("shell", &call(), &events, &cancel, &span).await,
            Ok(())
        );
        assert_eq!(details(&events)[1]["approval"], "approved");
    }

    #[tokio::test]
    async fn a_skill_adds_approvals_and_the_callers_reason_reaches_the_model() {
        let policy = ApprovalPolicy::new().when_unasked(Unasked::Allow);
        let skill_tools = vec!["shell".to_owned()];
        let approver: Arc<dyn Approver> = Arc::new(Says(ApprovalDecision::Denied {
            reason: Some("not on prod".into()),
        }));
        let events = EventEmitter::new("r", None, 100);
        let gate = ApprovalGate::new(&policy, "s", &skill_tools, Some(&approver));
        let cancel = CancellationToken::new();
        let denied = gate
            .check("shell", &call(), &events, &cancel, &tracing::Span::none())
            .await
            .unwrap_err();
        assert!(denied.ends_with("denied approval: not on prod"), "{denied}");
        let seen = details(&events);
        assert_eq!(seen[1]["by"], "caller");
        assert_eq!(seen[1]["reason"], "not on prod");
    }
}
