//! The A2A 1.0 data objects this binding reads and writes, in their ProtoJSON shape (camelCase
//! field names, enums as `TASK_STATE_*` / `ROLE_*` strings, `oneof` payloads as a single-key
//! object): `Message`, `Part`, `Task`, `TaskStatus`, `Artifact`, the two update events and the
//! `StreamResponse` wrapper, the push notification config, plus the request parameters of the
//! methods served.
//!
//! Plain serde data: no behaviour. Unknown fields are ignored on input (ProtoJSON readers are
//! lenient the same way); empty optional fields are left out on output.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    /// Not said.
    #[serde(rename = "ROLE_UNSPECIFIED")]
    Unspecified,
    /// The A2A client (the agent asking for the skill).
    #[serde(rename = "ROLE_USER")]
    User,
    /// This agent.
    #[serde(rename = "ROLE_AGENT")]
    Agent,
}

/// What a part holds: exactly one of these (ProtoJSON `oneof content`, so on the wire its key
/// sits next to the part's other fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PartContent {
    /// Text.
    Text(String),
    /// Bytes, base64.
    Raw(String),
    /// A file by reference.
    Url(String),
    /// Structured JSON.
    Data(Value),
}

/// One piece of content with its optional description.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// The content.
    #[serde(flatten)]
    pub content: PartContent,
    /// Part metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// File name, for `raw` and `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// Media type of the content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
}

impl Part {
    fn of(content: PartContent, media_type: Option<&str>) -> Part {
        Part {
            content,
            metadata: None,
            filename: None,
            media_type: media_type.map(str::to_owned),
        }
    }

    /// A text part.
    pub fn text(text: impl Into<String>) -> Part {
        Part::of(PartContent::Text(text.into()), None)
    }

    /// A chunk of a file the run produced: `raw` (base64) for binary content, text otherwise,
    /// with its name and media type.
    pub(crate) fn file_chunk(chunk: impl Into<String>, produced: &str, mime: &str) -> Part {
        let (content, media_type) = match mime.strip_suffix(skillet_protocol::BASE64_MIME_SUFFIX) {
            Some(mime) => (PartContent::Raw(chunk.into()), mime),
            None => (PartContent::Text(chunk.into()), mime),
        };
        let mut part = Part::of(content, Some(media_type));
        part.filename = Some(produced.to_owned());
        part
    }

    /// A JSON data part (`application/json`).
    pub fn data(data: Value) -> Part {
        Part::of(PartContent::Data(data), Some("application/json"))
    }
}

/// A message between client and agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Sender-chosen id.
    #[serde(default)]
    pub message_id: String,
    /// The conversation it belongs to.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub context_id: String,
    /// The task it belongs to.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub task_id: String,
    /// Who sent it.
    #[serde(default = "unspecified")]
    pub role: Role,
    /// The message's content: text, files and JSON data parts, in order.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// Message metadata (carries the skill selection, see `input`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

fn unspecified() -> Role {
    Role::Unspecified
}

impl Message {
    /// An agent message with one text part, in `task_id` / `context_id`.
    pub(crate) fn agent_text(task_id: &str, context_id: &str, text: impl Into<String>) -> Message {
        Message {
            message_id: skillet_protocol::new_id(),
            context_id: context_id.to_owned(),
            task_id: task_id.to_owned(),
            role: Role::Agent,
            parts: vec![Part::text(text)],
            metadata: None,
        }
    }
}

/// The lifecycle state of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskState {
    /// Not said.
    #[serde(rename = "TASK_STATE_UNSPECIFIED")]
    Unspecified,
    /// Accepted, not started.
    #[serde(rename = "TASK_STATE_SUBMITTED")]
    Submitted,
    /// Running.
    #[serde(rename = "TASK_STATE_WORKING")]
    Working,
    /// Finished with its output (terminal).
    #[serde(rename = "TASK_STATE_COMPLETED")]
    Completed,
    /// Finished without output (terminal).
    #[serde(rename = "TASK_STATE_FAILED")]
    Failed,
    /// Stopped by `CancelTask` (terminal).
    #[serde(rename = "TASK_STATE_CANCELED")]
    Canceled,
    /// Waiting for the client.
    #[serde(rename = "TASK_STATE_INPUT_REQUIRED")]
    InputRequired,
    /// Refused by the agent (terminal).
    #[serde(rename = "TASK_STATE_REJECTED")]
    Rejected,
    /// Waiting for authentication.
    #[serde(rename = "TASK_STATE_AUTH_REQUIRED")]
    AuthRequired,
}

impl TaskState {
    /// Whether nothing more happens to a task in this state.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected
        )
    }
}

/// A task's state with the message that explains it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// Where the task is in its lifecycle (submitted, working, or a terminal state).
    pub state: TaskState,
    /// Why / what is happening.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

impl TaskStatus {
    /// A status in `state` stamped with the current time.
    pub fn now(state: TaskState, message: Option<Message>) -> TaskStatus {
        TaskStatus {
            state,
            message,
            timestamp: now_rfc3339(),
        }
    }
}

fn now_rfc3339() -> Option<String> {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .ok()
}

/// An output of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Unique within the task.
    pub artifact_id: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Content.
    pub parts: Vec<Part>,
    /// Artifact metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl Artifact {
    /// Appends a streamed chunk's `part`, joined to the last part when both are text, or both
    /// base64 bytes, of the same file and media type (whole quanta each), so a stored streamed
    /// artifact is one part rather than one part per chunk.
    pub(crate) fn append_chunk(&mut self, part: &Part) {
        if let Some(last) = self.parts.last_mut()
            && last.media_type == part.media_type
            && last.filename == part.filename
            && let (PartContent::Text(joined), PartContent::Text(text))
            | (PartContent::Raw(joined), PartContent::Raw(text)) =
                (&mut last.content, &part.content)
        {
            joined.push_str(text);
            return;
        }
        self.parts.push(part.clone());
    }
}

/// A unit of work: one skill run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Server-chosen id.
    pub id: String,
    /// The conversation it belongs to.
    pub context_id: String,
    /// Current status.
    pub status: TaskStatus,
    /// Outputs so far.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// Messages of the task, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    /// Task metadata (`skill`, and `a2eCode` on failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// A change of a task's status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// The id of the task whose status changed (the A2E call id it runs as).
    pub task_id: String,
    /// The conversation the task belongs to (the request's `contextId`, or one the server made).
    pub context_id: String,
    /// The status the task has from now on.
    pub status: TaskStatus,
    /// Event metadata (`progress` in percent, `a2eCode` on failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// A new or extended artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// The id of the task the artifact belongs to.
    pub task_id: String,
    /// The conversation the task belongs to.
    pub context_id: String,
    /// The artifact (or the chunk to append).
    pub artifact: Artifact,
    /// Append these parts to the artifact with the same id.
    #[serde(default)]
    pub append: bool,
    /// The artifact's last chunk.
    #[serde(default)]
    pub last_chunk: bool,
}

/// One item of a stream (`StreamResponse`): exactly one payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// The task (first item of every stream).
    Task(Task),
    /// A direct message (never sent by this binding).
    Message(Message),
    /// The task's status changed (e.g. working → completed).
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact was created or a chunk appended to it.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

/// `AuthenticationInfo`: how a push notification authenticates to its webhook
/// (`Authorization: SCHEME CREDENTIALS`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct AuthenticationInfo {
    /// An HTTP authentication scheme (`Bearer`, `Basic`, …).
    pub scheme: String,
    /// The credentials for that scheme (never written back to a client).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub credentials: String,
}

/// `TaskPushNotificationConfig`: where a task's updates are POSTed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct TaskPushNotificationConfig {
    /// Accepted and ignored: one tenant per server.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tenant: String,
    /// The config's id (the server makes one when it is empty).
    pub id: String,
    /// The task whose updates are sent.
    pub task_id: String,
    /// The webhook URL.
    pub url: String,
    /// Sent as `X-A2A-Notification-Token` with every notification, when not empty.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub token: String,
    /// Sent as the `Authorization` header of every notification.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
}

/// `SendMessageRequest.configuration`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct SendMessageConfiguration {
    /// Media types the client accepts for outputs (empty: any).
    pub accepted_output_modes: Vec<String>,
    /// Push this task's updates to a webhook (only when push notifications are on).
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
    /// Most history messages in the returned task.
    pub history_length: Option<i64>,
    /// Answer with the task at once instead of when it ends.
    pub return_immediately: bool,
}

/// `SendMessage` / `SendStreamingMessage` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SendMessageParams {
    /// The message.
    pub message: Message,
    /// Options.
    #[serde(default)]
    pub configuration: Option<SendMessageConfiguration>,
    /// Request metadata (also searched for the skill selection).
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

/// `GetTask` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GetTaskParams {
    /// The task.
    pub id: String,
    /// Most history messages returned (absent: all; 0: none).
    #[serde(default)]
    pub history_length: Option<i64>,
}

/// `CancelTask` / `SubscribeToTask` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskIdParams {
    /// The task.
    pub id: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_part_is_exactly_one_content_kind_next_to_its_other_fields() {
        let part: Part =
            serde_json::from_value(json!({"text": "hi", "mediaType": "text/plain"})).unwrap();
        assert_eq!(part.content, PartContent::Text("hi".into()));
        assert_eq!(
            serde_json::to_value(Part::data(json!({"a": 1}))).unwrap(),
            json!({"data": {"a": 1}, "mediaType": "application/json"})
        );
        assert!(serde_json::from_value::<Part>(json!({"mediaType": "text/plain"})).is_err());
    }
}
