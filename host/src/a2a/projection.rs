//! How a skill run looks as an A2A task: its live A2E events and its one `skill/call/resp`
//! projected onto `TaskStatusUpdateEvent`s and `TaskArtifactUpdateEvent`s.
//!
//! | A2E | A2A |
//! |---|---|
//! | `status` event | status update `TASK_STATE_WORKING`, the line as an agent text message |
//! | `progress` event | status update `TASK_STATE_WORKING`, the line as message, `metadata.progress` = pct |
//! | `artifact` chunk | artifact update, artifact id `stream-NAME`, a text part (media type = the chunk's mime); `append` after the first chunk, `lastChunk` on the final one |
//! | `log` event, `warn` or `error` | status update `TASK_STATE_WORKING`, the line as message, `metadata.log` = true (a repair names its violations here) |
//! | `log` event, `info` or `debug` | nothing (it stays in the A2E result's events) |
//! | success | artifact update `output` — one `data` part with the validated output (`lastChunk`) — then `TASK_STATE_COMPLETED` |
//! | failure in `data` / rejection in `error` | `TASK_STATE_FAILED`, the error text as message, `metadata.a2eCode` (and `retryable`) |
//! | `unauthorized` | `TASK_STATE_REJECTED` (same metadata) |
//! | any end after `CancelTask` that is not a success | `TASK_STATE_CANCELED` |
//!
//! Not here: storing the updates and delivering them (`store`), starting runs (`methods`).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value, json};

use super::store::TaskStore;
use super::wire::{
    Artifact, Message, Part, StreamResponse, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent,
};
use skillet_core::events::EventSink;
use skillet_protocol::{ErrorCode, EventPayload, LogLevel, SkillCallResponse, SkillEvent};

/// The artifact id of a task's final validated output.
pub(crate) const OUTPUT_ARTIFACT_ID: &str = "output";

/// The task a run's updates belong to.
#[derive(Debug, Clone)]
pub(crate) struct Projection {
    /// The task.
    pub task_id: String,
    /// Its context.
    pub context_id: String,
}

impl Projection {
    fn status(
        &self,
        state: TaskState,
        text: impl Into<String>,
        metadata: Option<Map<String, Value>>,
    ) -> StreamResponse {
        let message = Message::agent_text(&self.task_id, &self.context_id, text);
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            status: TaskStatus::now(state, Some(message)),
            metadata,
        })
    }

    fn artifact(&self, artifact: Artifact, append: bool, last_chunk: bool) -> StreamResponse {
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            artifact,
            append,
            last_chunk,
        })
    }

    /// The update for one live event (`None` for a `log` line below `warn`). `first_chunk` says whether an
    /// artifact chunk is the first of its artifact.
    pub(crate) fn event(&self, event: &SkillEvent, first_chunk: bool) -> Option<StreamResponse> {
        match &event.payload {
            EventPayload::Status { message, .. } => {
                Some(self.status(TaskState::Working, message, None))
            }
            EventPayload::Progress { pct, message } => {
                let mut metadata = Map::new();
                metadata.insert("progress".to_owned(), json!(pct));
                Some(self.status(TaskState::Working, message, Some(metadata)))
            }
            EventPayload::Artifact {
                name,
                mime,
                chunk,
                is_final,
            } => {
                let part = Part::file_chunk(chunk.clone(), name, mime);
                let artifact = Artifact {
                    artifact_id: format!("stream-{name}"),
                    name: Some(name.clone()),
                    parts: vec![part],
                    metadata: None,
                };
                Some(self.artifact(artifact, !first_chunk, *is_final))
            }
            // A warning (a repair and its reason, a retry, a refused mode) is what a person
            // watching the task needs to see; the rest of the log stays in the result's events.
            EventPayload::Log {
                level: LogLevel::Warn | LogLevel::Error,
                message,
            } => {
                let mut metadata = Map::new();
                metadata.insert("log".to_owned(), json!(true));
                Some(self.status(TaskState::Working, message, Some(metadata)))
            }
            EventPayload::Log { .. } => None,
        }
    }

    /// The final updates of a run: the output artifact (on success) and the terminal status.
    pub(crate) fn outcome(
        &self,
        response: &SkillCallResponse,
        cancel_requested: bool,
    ) -> Vec<StreamResponse> {
        if let Some(error) = &response.error {
            return vec![self.failure(
                error.code,
                &error.message,
                error.retryable,
                cancel_requested,
            )];
        }
        let Some(result) = &response.data else {
            return vec![self.failure(
                ErrorCode::RuntimeError,
                "the skill ended without a result",
                false,
                cancel_requested,
            )];
        };
        if !result.success {
            let code = result.error_code.unwrap_or(ErrorCode::SkillError);
            let message = result.error.as_deref().unwrap_or("the skill failed");
            return vec![self.failure(code, message, code.default_retryable(), cancel_requested)];
        }
        let mut metadata = Map::new();
        if let Some(summary) = &result.summary {
            metadata.insert("summary".to_owned(), summary.clone());
        }
        let output = Artifact {
            artifact_id: OUTPUT_ARTIFACT_ID.to_owned(),
            name: Some(response.name.clone()),
            parts: vec![Part::data(result.data.clone().unwrap_or(Value::Null))],
            metadata: (!metadata.is_empty()).then_some(metadata),
        };
        vec![
            self.artifact(output, false, true),
            self.status(
                TaskState::Completed,
                format!("skill {} completed", response.name),
                None,
            ),
        ]
    }

    fn failure(
        &self,
        code: ErrorCode,
        message: &str,
        retryable: bool,
        cancel_requested: bool,
    ) -> StreamResponse {
        let state = if cancel_requested {
            TaskState::Canceled
        } else if code == ErrorCode::Unauthorized {
            TaskState::Rejected
        } else {
            TaskState::Failed
        };
        let mut metadata = Map::new();
        metadata.insert("a2eCode".to_owned(), json!(code.as_str()));
        metadata.insert("retryable".to_owned(), json!(retryable));
        let text = if state == TaskState::Canceled {
            "the task was canceled".to_owned()
        } else {
            message.to_owned()
        };
        self.status(state, text, Some(metadata))
    }
}

/// Applies a run's live events to its task in the store.
pub(crate) struct TaskEventSink {
    store: Arc<TaskStore>,
    projection: Projection,
    /// Artifacts that already had a chunk.
    started: Mutex<HashSet<String>>,
}

impl TaskEventSink {
    /// A sink for the task of `projection`.
    pub(crate) fn new(store: Arc<TaskStore>, projection: Projection) -> TaskEventSink {
        TaskEventSink {
            store,
            projection,
            started: Mutex::new(HashSet::new()),
        }
    }
}

impl EventSink for TaskEventSink {
    fn emit(&self, event: &SkillEvent) {
        let first_chunk = match &event.payload {
            EventPayload::Artifact { name, .. } => self
                .started
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(name.clone()),
            _ => true,
        };
        if let Some(update) = self.projection.event(event, first_chunk) {
            self.store.apply(&self.projection.task_id, update);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::wire::PartContent;
    use skillet_protocol::{ProtocolError, SkillResult};

    fn projection() -> Projection {
        Projection {
            task_id: "t".into(),
            context_id: "c".into(),
        }
    }

    fn terminal(updates: &[StreamResponse]) -> (TaskState, Option<Map<String, Value>>) {
        match updates.last() {
            Some(StreamResponse::StatusUpdate(e)) => (e.status.state, e.metadata.clone()),
            other => panic!("no terminal status: {other:?}"),
        }
    }

    #[test]
    fn success_is_the_output_artifact_then_completed() {
        let result = SkillResult::success(Some(json!({"x": 1})), None, 1);
        let updates = projection().outcome(&SkillCallResponse::result("r", "s", result), false);
        assert_eq!(updates.len(), 2);
        let StreamResponse::ArtifactUpdate(artifact) = &updates[0] else {
            panic!("{updates:?}");
        };
        assert_eq!(
            artifact.artifact.parts[0].content,
            PartContent::Data(json!({"x": 1}))
        );
        assert_eq!(terminal(&updates).0, TaskState::Completed);
    }

    #[test]
    fn failures_carry_the_a2e_code_and_unauthorized_is_rejected_and_cancel_wins() {
        let failed = SkillResult::failure(ErrorCode::Timeout, "too slow", 1);
        let response = SkillCallResponse::result("r", "s", failed);
        let (state, metadata) = terminal(&projection().outcome(&response, false));
        assert_eq!(state, TaskState::Failed);
        assert_eq!(metadata.unwrap()["a2eCode"], "timeout");
        assert_eq!(
            terminal(&projection().outcome(&response, true)).0,
            TaskState::Canceled
        );
        let refused = SkillCallResponse::rejected(
            "r",
            "s",
            ProtocolError::new(ErrorCode::Unauthorized, "no"),
        );
        assert_eq!(
            terminal(&projection().outcome(&refused, false)).0,
            TaskState::Rejected
        );
    }

    #[test]
    fn a_warning_is_a_working_status_with_its_text_and_info_logs_stay_out() {
        let repair = "final answer rejected (1 problem: /due: \"next Friday\" is not a \"date\"); \
                      asking the model to repair it";
        let warn = SkillEvent::new(
            "r",
            3,
            EventPayload::Log {
                level: LogLevel::Warn,
                message: repair.to_owned(),
            },
        );
        let Some(StreamResponse::StatusUpdate(update)) = projection().event(&warn, false) else {
            panic!("a warning becomes a status update");
        };
        assert_eq!(update.status.state, TaskState::Working);
        assert_eq!(update.metadata.unwrap()["log"], true);
        let text = serde_json::to_string(&update.status.message).unwrap();
        assert!(text.contains("next Friday"), "{text}");
        let info = SkillEvent::new(
            "r",
            4,
            EventPayload::Log {
                level: LogLevel::Info,
                message: "token usage: 1 input".to_owned(),
            },
        );
        assert!(projection().event(&info, false).is_none());
    }
}
