//! Multi-turn tasks: a run that needs a person's approval of a tool call pauses in
//! `TASK_STATE_INPUT_REQUIRED`, and a message with the task's `taskId` continues it.
//!
//! When the engine asks ([`TaskApprover`], one per task), the task's status becomes
//! `TASK_STATE_INPUT_REQUIRED` with an agent message naming the tool: a text part for people
//! and a data part `{"approval": {"skill", "tool", "callId", "arguments"}}`. The client answers
//! with a `SendMessage` (or `SendStreamingMessage`) whose `message.taskId` is the task and
//! whose data part is the decision:
//!
//! ```json
//! {"approve": true}
//! {"approve": false, "reason": "not on the production database"}
//! ```
//!
//! The reply joins the task's history, the task goes back to `TASK_STATE_WORKING` and the run
//! goes on (a denial is a tool error the model reads). The answer to the reply is the same as
//! to a first message: the task once it ends or asks again (blocking), or a stream of its
//! updates (streaming).
//!
//! | a message with `taskId` … | answer |
//! |---|---|
//! | of no task this caller can see | `-32001` (task not found) |
//! | of a task that is not `INPUT_REQUIRED` (working, finished) | `-32004` (unsupported operation), nothing changes |
//! | of an `INPUT_REQUIRED` task, without a data part with a boolean `approve` | `-32602`, the task keeps waiting |
//!
//! Waiting counts against the call's deadline: when it passes, the engine drops the question
//! (the pending entry goes with it) and the task fails with `timeout`; `CancelTask` ends a
//! waiting task as any other. Who may answer: the caller that started the task (under `[auth]`,
//! the same identity); to any other the task is not waiting (`-32004`).
//!
//! Not here: which calls need approval (`skillet_core::approval`), the task store
//! (`store`, used through its API), the other methods (`methods`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use serde_json::{Value, json};
use skillet_core::approval::{ApprovalDecision, ApprovalRequest, Approver};
use tokio::sync::oneshot;

use super::jsonrpc::{RpcCode, RpcError};
use super::store::TaskStore;
use super::wire::{
    Message, Part, PartContent, Role, StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent,
};

/// The tasks waiting for a person's answer, by task id.
#[derive(Debug, Default)]
pub(crate) struct Continuations {
    waiting: Mutex<HashMap<String, Waiting>>,
}

#[derive(Debug)]
struct Waiting {
    /// The id of the caller that started the task (`Caller::id`).
    owner: String,
    answer: oneshot::Sender<ApprovalDecision>,
}

/// Why a message with a `taskId` does not continue it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NotContinued {
    /// The task is not waiting (it runs, ended, or is unknown: the caller tells them apart
    /// with the store).
    NotWaiting,
    /// The message holds no decision.
    Malformed(String),
}

impl Continuations {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Waiting>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Gives `message` to the waiting task `task_id` as the answer of the caller `caller_id`.
    /// The decision is read before the task stops waiting, so a malformed one changes nothing.
    pub(crate) fn answer(
        &self,
        task_id: &str,
        caller_id: &str,
        message: &Message,
    ) -> Result<(), NotContinued> {
        let mut waiting = self.lock();
        if waiting
            .get(task_id)
            .is_none_or(|w| w.owner != caller_id || w.answer.is_closed())
        {
            return Err(NotContinued::NotWaiting);
        }
        let decision = decision_of(message).map_err(NotContinued::Malformed)?;
        let Some(entry) = waiting.remove(task_id) else {
            return Err(NotContinued::NotWaiting);
        };
        entry
            .answer
            .send(decision)
            .map_err(|_| NotContinued::NotWaiting)
    }

    /// Whether the task `task_id` waits for an answer from `caller_id`.
    pub(crate) fn waits_for(&self, task_id: &str, caller_id: &str) -> bool {
        self.lock()
            .get(task_id)
            .is_some_and(|w| w.owner == caller_id && !w.answer.is_closed())
    }
}

/// The decision in a reply: its data part's boolean `approve` and optional `reason`.
fn decision_of(message: &Message) -> Result<ApprovalDecision, String> {
    let data = message.parts.iter().find_map(|part| match &part.content {
        PartContent::Data(data) => Some(data),
        _ => None,
    });
    let Some(data) = data else {
        return Err(
            "an approval reply needs a data part {\"approve\": true|false, \"reason\"?: string}"
                .into(),
        );
    };
    match (data.get("approve"), data.get("reason")) {
        (_, Some(reason)) if !reason.is_string() => Err("`reason` must be a string".into()),
        (Some(Value::Bool(true)), _) => Ok(ApprovalDecision::Approved),
        (Some(Value::Bool(false)), reason) => Ok(ApprovalDecision::Denied {
            reason: reason
                .and_then(Value::as_str)
                .filter(|r| !r.trim().is_empty())
                .map(str::to_owned),
        }),
        _ => Err("the data part's `approve` must be true or false".into()),
    }
}

/// Asks for approvals by pausing one task in `INPUT_REQUIRED`.
pub(crate) struct TaskApprover {
    pub(crate) continuations: Arc<Continuations>,
    pub(crate) store: Arc<TaskStore>,
    pub(crate) task_id: String,
    pub(crate) context_id: String,
    /// The id of the caller that started the task: only it may answer.
    pub(crate) owner: String,
}

/// Removes a task's waiting entry when the question is dropped (deadline, cancellation).
struct StopWaiting<'a> {
    continuations: &'a Continuations,
    task_id: &'a str,
}

impl Drop for StopWaiting<'_> {
    fn drop(&mut self) {
        self.continuations.lock().remove(self.task_id);
    }
}

impl TaskApprover {
    fn status(&self, state: TaskState, message: Option<Message>) -> StreamResponse {
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            status: TaskStatus::now(state, message),
            metadata: None,
        })
    }

    fn question(&self, request: &ApprovalRequest) -> Message {
        Message {
            message_id: skillet_protocol::new_id(),
            context_id: self.context_id.clone(),
            task_id: self.task_id.clone(),
            role: Role::Agent,
            parts: vec![
                Part::text(format!(
                    "approval needed: skill {} wants to call the tool {} with the arguments in \
                     the data part; reply in this task with a data part {{\"approve\": true}} \
                     or {{\"approve\": false, \"reason\": \"...\"}}",
                    request.skill, request.tool
                )),
                Part::data(json!({"approval": {
                    "skill": request.skill,
                    "tool": request.tool,
                    "callId": request.call_id,
                    "arguments": request.arguments,
                }})),
            ],
            metadata: None,
        }
    }
}

#[async_trait]
impl Approver for TaskApprover {
    async fn decide(&self, request: ApprovalRequest) -> ApprovalDecision {
        let (answer, decided) = oneshot::channel();
        let question = self.question(&request);
        {
            // Waiting and `INPUT_REQUIRED` are set under one lock, so a reply sees both or
            // neither (a reply's subscription never starts before the question).
            let mut waiting = self.continuations.lock();
            waiting.insert(
                self.task_id.clone(),
                Waiting {
                    owner: self.owner.clone(),
                    answer,
                },
            );
            self.store.apply(
                &self.task_id,
                self.status(TaskState::InputRequired, Some(question)),
            );
        }
        let _stop_waiting = StopWaiting {
            continuations: &self.continuations,
            task_id: &self.task_id,
        };
        let decision = decided.await.unwrap_or(ApprovalDecision::Denied {
            reason: Some("the task stopped waiting for approval".into()),
        });
        self.store
            .apply(&self.task_id, self.status(TaskState::Working, None));
        decision
    }
}

/// Whether `update` puts its task in `INPUT_REQUIRED` (a stream of the task ends after it).
pub(crate) fn waits_for_input(update: &StreamResponse) -> bool {
    matches!(update, StreamResponse::StatusUpdate(event) if event.status.state == TaskState::InputRequired)
}

/// The error for a message with `taskId` that did not continue its task: `exists` says whether
/// the caller can see the task at all.
pub(crate) fn refusal(task_id: &str, exists: bool, why: NotContinued) -> RpcError {
    match (exists, why) {
        (false, _) => super::refusals::not_found(task_id),
        (true, NotContinued::NotWaiting) => RpcError::new(
            RpcCode::UnsupportedOperation,
            format!(
                "task {task_id:?} is not waiting for input (only a TASK_STATE_INPUT_REQUIRED \
                 task takes a message with its taskId); send a new message without taskId"
            ),
        ),
        (true, NotContinued::Malformed(reason)) => RpcError::new(
            RpcCode::InvalidParams,
            format!("task {task_id:?} waits for an approval decision: {reason}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(data: Option<Value>) -> Message {
        let mut parts = vec![Part::text("here")];
        if let Some(data) = data {
            parts.push(Part::data(data));
        }
        Message {
            message_id: "m".into(),
            context_id: String::new(),
            task_id: "t".into(),
            role: Role::User,
            parts,
            metadata: None,
        }
    }

    fn waiting(continuations: &Continuations) -> oneshot::Receiver<ApprovalDecision> {
        let (answer, decided) = oneshot::channel();
        continuations.lock().insert(
            "t".into(),
            Waiting {
                owner: "alice".into(),
                answer,
            },
        );
        decided
    }

    #[test]
    fn a_malformed_reply_leaves_the_task_waiting_and_a_good_one_decides() {
        let continuations = Continuations::default();
        let mut decided = waiting(&continuations);
        for bad in [
            None,
            Some(json!({"approve": "yes"})),
            Some(json!({"approve": true, "reason": 3})),
        ] {
            assert!(matches!(
                continuations.answer("t", "alice", &reply(bad)),
                Err(NotContinued::Malformed(_))
            ));
        }
        assert!(continuations.waits_for("t", "alice"));
        continuations
            .answer(
                "t",
                "alice",
                &reply(Some(json!({"approve": false, "reason": "no"}))),
            )
            .unwrap();
        assert_eq!(
            decided.try_recv().unwrap(),
            ApprovalDecision::Denied {
                reason: Some("no".into())
            }
        );
        assert_eq!(
            continuations.answer("t", "alice", &reply(Some(json!({"approve": true})))),
            Err(NotContinued::NotWaiting)
        );
    }

    #[test]
    fn only_the_caller_that_started_the_task_can_answer() {
        let continuations = Continuations::default();
        let _decided = waiting(&continuations);
        assert_eq!(
            continuations.answer("t", "mallory", &reply(Some(json!({"approve": true})))),
            Err(NotContinued::NotWaiting)
        );
        assert!(!continuations.waits_for("t", "mallory"));
        assert!(continuations.waits_for("t", "alice"));
    }
}
