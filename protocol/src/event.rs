//! `skill/event`: the streaming events a call emits while it runs, with the seed's four kinds and
//! their data shapes.

use serde::{Deserialize, Serialize};

use super::{default_version, new_id, now_ts};

/// The kind of an event, as on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// `{pct, message}`
    Progress,
    /// `{name, mime, chunk, final}`
    Artifact,
    /// `{level, message}`
    Log,
    /// `{message, detail?}`
    Status,
}

/// The severity of a `log` event, as on the wire (`debug`, `info`, `warn`, `error`).
///
/// The seed types `level` as a plain string, so on input any string is accepted and read as
/// the nearest of the four, as loggers spell them (`trace` → debug; `notice` → info;
/// `warning` → warn; `err`, `critical`, `fatal`, `alert`, `emergency` → error; anything else
/// → info, case-insensitively): an event from a plugin is never refused for its level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detail for whoever debugs the skill (model reasoning, per-line output).
    Debug,
    /// What happened (usage, a tool answered).
    Info,
    /// Something went wrong and the run went on (a toolkit that could not start, a mode
    /// refused by the server).
    Warn,
    /// Something failed.
    Error,
}

impl LogLevel {
    /// The level a `level` string names (see the type's docs for the mapping).
    pub fn from_wire(level: &str) -> LogLevel {
        let is = |names: &[&str]| names.iter().any(|n| level.eq_ignore_ascii_case(n));
        if is(&["debug", "trace"]) {
            LogLevel::Debug
        } else if is(&["info"]) {
            LogLevel::Info
        } else if is(&["warn", "warning"]) {
            LogLevel::Warn
        } else if is(&["error", "err", "critical", "fatal", "alert", "emergency"]) {
            LogLevel::Error
        } else {
            LogLevel::Info
        }
    }
}

impl<'de> Deserialize<'de> for LogLevel {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let level = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Ok(LogLevel::from_wire(&level))
    }
}

impl LogLevel {
    /// The level as on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
            LogLevel::Error => "error",
        }
    }
}

impl std::fmt::Display for LogLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An event's `kind` together with its typed `data`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "data", rename_all = "snake_case")]
pub enum EventPayload {
    /// Progress update; `pct` is 0–100 and never decreases within a call.
    Progress {
        /// Percent complete, 0 to 100.
        pct: u8,
        /// What the run is doing now, for people.
        message: String,
    },
    /// Incremental data chunk of a named artifact; `final` marks its last chunk.
    Artifact {
        /// Artifact name.
        name: String,
        /// Media type of the chunks.
        mime: String,
        /// This chunk's text.
        chunk: String,
        /// Whether this is the artifact's last chunk.
        #[serde(rename = "final")]
        is_final: bool,
    },
    /// Debug log line.
    Log {
        /// Its severity.
        level: LogLevel,
        /// The log line's text (the engine redacts the secrets it knows before emitting it).
        message: String,
    },
    /// One-liner status update.
    Status {
        /// One line of human-readable status, e.g. `calling tool word_count`.
        message: String,
        /// A machine-readable detail beside the line, e.g. an approval request or decision
        /// (`{"approval": "requested", "tool": ...}`); absent on the wire when `None`, so a
        /// reader that knows only `message` reads every status event as before.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<serde_json::Value>,
    },
}

impl EventPayload {
    /// The payload's kind.
    pub fn kind(&self) -> EventKind {
        match self {
            EventPayload::Progress { .. } => EventKind::Progress,
            EventPayload::Artifact { .. } => EventKind::Artifact,
            EventPayload::Log { .. } => EventKind::Log,
            EventPayload::Status { .. } => EventKind::Status,
        }
    }

    /// A `progress` payload (`pct` is clamped to 100).
    pub fn progress(pct: u8, message: impl Into<String>) -> Self {
        EventPayload::Progress {
            pct: pct.min(100),
            message: message.into(),
        }
    }

    /// A `status` payload.
    pub fn status(message: impl Into<String>) -> Self {
        EventPayload::Status {
            message: message.into(),
            detail: None,
        }
    }

    /// A `status` payload with a machine-readable `detail`.
    pub fn status_with(message: impl Into<String>, detail: serde_json::Value) -> Self {
        EventPayload::Status {
            message: message.into(),
            detail: Some(detail),
        }
    }

    /// A `log` payload.
    pub fn log(level: LogLevel, message: impl Into<String>) -> Self {
        EventPayload::Log {
            level,
            message: message.into(),
        }
    }

    /// An `artifact` chunk.
    pub fn artifact(
        name: impl Into<String>,
        mime: impl Into<String>,
        chunk: impl Into<String>,
        is_final: bool,
    ) -> Self {
        EventPayload::Artifact {
            name: name.into(),
            mime: mime.into(),
            chunk: chunk.into(),
            is_final,
        }
    }
}

/// A `skill/event` message (without its `type` tag, which [`super::Message`] adds).
///
/// Decoded by hand (`event_decode`), in one pass; the seed's defaults apply to `id`, `version`,
/// `ts`, `req_id` and `seq`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkillEvent {
    /// This event's own message id (the engine gives every event a fresh UUID v4).
    pub id: String,
    /// The protocol version the event is written in ([`crate::PROTOCOL_VERSION`] for every event
    /// this engine emits).
    pub version: String,
    /// When the event was emitted: seconds since the Unix epoch, fractional.
    pub ts: f64,
    /// The call this event belongs to (the request's `id`).
    pub req_id: String,
    /// Monotonic sequence number within the call, starting at 0, without gaps.
    pub seq: u64,
    /// Kind and data.
    #[serde(flatten)]
    pub payload: EventPayload,
}

impl SkillEvent {
    /// A new event for call `req_id` with sequence number `seq`.
    pub fn new(req_id: impl Into<String>, seq: u64, payload: EventPayload) -> Self {
        SkillEvent {
            id: new_id(),
            version: default_version(),
            ts: now_ts(),
            req_id: req_id.into(),
            seq,
            payload,
        }
    }

    /// The event's kind.
    pub fn kind(&self) -> EventKind {
        self.payload.kind()
    }
}
