//! The console's pending approvals: who sees and decides them, and when they end.

use std::sync::Arc;

use serde_json::{Map, json};
use skillet_core::approval::{ApprovalDecision, ApprovalRequest, Approver};
use skillet_protocol::SkillCallRequest;

use super::{Approvals, MAX_PENDING, MAX_REASON_CHARS, UnknownApproval, denial};
use crate::approval_desk::ApprovalDesk;
use crate::auth::Caller;

fn question(call_id: &str) -> ApprovalRequest {
    ApprovalRequest {
        skill: "gated".into(),
        tool: "calculator".into(),
        call_id: call_id.into(),
        arguments: json!({"expression": "6*7"}),
    }
}

fn approver(approvals: &Approvals, caller: &Caller) -> Arc<dyn Approver> {
    let request = SkillCallRequest::new("gated", Map::new());
    approvals
        .approver_for(caller, &request)
        .expect("an approver without access rules")
}

/// Waits until `caller` sees `n` questions (the approver parks on its own task).
async fn until_pending(approvals: &Approvals, caller: &Caller, n: usize) {
    while approvals.pending_for(caller).len() != n {
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn the_owner_sees_and_decides_its_question_and_a_second_decision_is_unknown() {
    let approvals = Approvals::new(None);
    let owner = Caller::Anonymous;
    let asking = approver(&approvals, &owner);
    let waiting = tokio::spawn(async move { asking.decide(question("c1")).await });
    until_pending(&approvals, &owner, 1).await;
    let listed = approvals.pending_for(&owner);
    assert_eq!(listed[0].tool, "calculator");
    assert_eq!(listed[0].call_id, "c1");
    assert_eq!(listed[0].arguments, json!({"expression": "6*7"}));
    assert_eq!(listed[0].id.len(), 32, "128 random bits in hex");
    let id = listed[0].id.clone();
    assert_eq!(
        approvals.decide(&Caller::Local, &id, ApprovalDecision::Approved),
        Err(UnknownApproval),
        "another caller cannot decide it"
    );
    assert_eq!(
        approvals.decide(&owner, &id, denial(Some("  not on prod "))),
        Ok(())
    );
    assert_eq!(
        waiting.await.unwrap(),
        ApprovalDecision::Denied {
            reason: Some("not on prod".into())
        }
    );
    assert_eq!(
        approvals.decide(&owner, &id, ApprovalDecision::Approved),
        Err(UnknownApproval),
        "decided once"
    );
    assert!(approvals.pending_for(&owner).is_empty());
}

#[tokio::test]
async fn a_question_its_run_stopped_waiting_for_is_gone() {
    let approvals = Approvals::new(None);
    let owner = Caller::Anonymous;
    let asking = approver(&approvals, &owner);
    let waiting = tokio::spawn(async move { asking.decide(question("c1")).await });
    until_pending(&approvals, &owner, 1).await;
    let id = approvals.pending_for(&owner)[0].id.clone();
    // What the engine does when the deadline passes or the call is cancelled.
    waiting.abort();
    let _ = waiting.await;
    assert!(approvals.pending_for(&owner).is_empty());
    assert_eq!(
        approvals.decide(&owner, &id, ApprovalDecision::Approved),
        Err(UnknownApproval)
    );
}

#[tokio::test]
async fn questions_are_listed_to_their_owner_only() {
    let approvals = Approvals::new(None);
    let asking = approver(&approvals, &Caller::Local);
    let _waiting = tokio::spawn(async move { asking.decide(question("c1")).await });
    until_pending(&approvals, &Caller::Local, 1).await;
    assert!(approvals.pending_for(&Caller::Anonymous).is_empty());
}

#[tokio::test]
async fn a_full_desk_denies_the_next_question_at_once() {
    let approvals = Approvals::new(None);
    let owner = Caller::Anonymous;
    let mut waiting = Vec::new();
    for i in 0..MAX_PENDING {
        let asking = approver(&approvals, &owner);
        waiting.push(tokio::spawn(async move {
            asking.decide(question(&format!("c{i}"))).await
        }));
    }
    until_pending(&approvals, &owner, MAX_PENDING).await;
    let one_more = approver(&approvals, &owner).decide(question("late")).await;
    match one_more {
        ApprovalDecision::Denied {
            reason: Some(reason),
        } => {
            assert!(reason.contains("already wait"), "{reason}");
        }
        other => panic!("expected a denial, got {other:?}"),
    }
    for w in waiting {
        w.abort();
    }
}

#[test]
fn a_denial_reason_is_trimmed_and_capped() {
    assert_eq!(
        denial(Some("   ")),
        ApprovalDecision::Denied { reason: None }
    );
    let long = "x".repeat(MAX_REASON_CHARS + 10);
    let ApprovalDecision::Denied { reason: Some(kept) } = denial(Some(&long)) else {
        panic!("a denial with a reason");
    };
    assert_eq!(kept.chars().count(), MAX_REASON_CHARS);
}
