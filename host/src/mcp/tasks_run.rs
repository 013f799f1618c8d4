//! A `tools/call` run as a task of the MCP Tasks extension (SEP-2663): when the request's client
//! declared `io.modelcontextprotocol/tasks` (at `initialize`, or in the request's own `_meta`
//! client capabilities), every skill call is started as a task and answered at once with the
//! `CreateTaskResult`; the run goes on without the request.
//!
//! While it runs, its `progress` and `status` events become the task's `statusMessage`
//! (`tasks/get` shows them; no notification is sent: the request has already been answered).
//! Its answer becomes the task's outcome, mapped exactly as a plain call's (`answer`): a skill
//! that failed is `completed` with `isError: true`, a JSON-RPC error `failed`. `tasks/cancel`
//! cancels the run's token, as `notifications/cancelled` does for a plain call. Approvals in a
//! task's run follow the host's `[approvals] default` policy: no request is open to ask the
//! client by elicitation.
//!
//! Not here: the store (`tasks`), admission (`McpHandler::admit_call`).

use std::sync::Arc;

use rmcp::model::{CallToolResponse, CreateTaskResult, ErrorData, JsonObject};
use skillet_core::events::EventSink;
use skillet_protocol::{EventPayload, SkillCallRequest, SkillEvent};

use super::answer;
use super::tasks::McpTasks;
use crate::core::{Admitted, HostCore};

/// Starts the admitted `call` as a task owned by `owner`; its `CreateTaskResult`, or a
/// retryable tool error when the store is full of running tasks (the call is not run).
pub(crate) fn start(
    core: &HostCore,
    tasks: &McpTasks,
    owner: Option<&str>,
    admitted: Admitted,
    call: SkillCallRequest,
) -> CallToolResponse {
    let task = match tasks.create(owner, &call.name, admitted.cancel_token()) {
        Ok(task) => task,
        Err(full) => {
            return answer::error_result(
                skillet_protocol::ErrorCode::RuntimeError,
                &full.to_string(),
                true,
            )
            .into();
        }
    };
    let id = task.task_id.clone();
    let sink: Arc<dyn EventSink> = Arc::new(TaskSink {
        tasks: tasks.clone(),
        id: id.clone(),
    });
    let finished = tasks.clone();
    core.spawn_call_asking(admitted, call, Some(sink), None, move |response| {
        finished.finish(&id, outcome(answer::tool_result(response)));
    });
    CallToolResponse::Task(CreateTaskResult::new(task))
}

/// A call's result as the object a completed task inlines.
fn outcome(
    result: Result<rmcp::model::CallToolResult, ErrorData>,
) -> Result<JsonObject, ErrorData> {
    let result = result?;
    match serde_json::to_value(&result) {
        Ok(serde_json::Value::Object(object)) => Ok(object),
        Ok(_) | Err(_) => Err(ErrorData::internal_error(
            "the call's result could not be encoded",
            None,
        )),
    }
}

/// A task's run's events, kept as the task's latest progress line.
struct TaskSink {
    tasks: McpTasks,
    id: String,
}

impl EventSink for TaskSink {
    fn emit(&self, event: &SkillEvent) {
        let line = match &event.payload {
            EventPayload::Progress { pct, message } => format!("{pct}%: {message}"),
            EventPayload::Status { message, .. } => message.clone(),
            _ => return,
        };
        self.tasks.progress(&self.id, line);
    }

    /// The task keeps no model text.
    fn forwards_text(&self) -> bool {
        false
    }
}
