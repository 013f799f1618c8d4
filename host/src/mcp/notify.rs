//! A call's live events as MCP notifications to the caller.
//!
//! | event | notification |
//! |---|---|
//! | `progress {pct, message}` | `notifications/progress` with the caller's `progressToken`, `progress` = `pct`, `total` = 100, `message` (only when the request carried a `progressToken`) |
//! | `log {level, message}` | `notifications/message` (`logger: "skillet"`) when `level` is at or above the session's level (`logging/setLevel`; default `info`) |
//! | `status {message}` | `notifications/message` at `info`, under the same rule |
//! | `artifact` | nothing (the result carries the output); so an MCP call never asks the model for a stream (`EventSink::forwards_text`) |
//!
//! Events are forwarded in order by one task per call; once the request is cancelled nothing
//! more is sent. `EventForwarder::flush` waits until every event emitted so far was sent, so
//! the notifications of a call always precede its result.
//!
//! Not here: the result itself (`answer`).

#![allow(deprecated)] // MCP logging is deprecated by SEP-2577 but still what current clients use.

use skillet_protocol::LogLevel;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::json;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use skillet_engine::events::EventSink;
use skillet_protocol::{EventPayload, SkillEvent};

/// The session's logging level, shared by its calls.
#[derive(Clone, Debug)]
pub(crate) struct SessionLogLevel(Arc<Mutex<LoggingLevel>>);

impl Default for SessionLogLevel {
    fn default() -> Self {
        SessionLogLevel(Arc::new(Mutex::new(LoggingLevel::Info)))
    }
}

impl SessionLogLevel {
    /// Sets the level (`logging/setLevel`).
    pub fn set(&self, level: LoggingLevel) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = level;
    }

    /// Whether a message at `level` is sent.
    pub fn allows(&self, level: LoggingLevel) -> bool {
        rank(level) >= rank(*self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// An A2E log level as an MCP one.
pub(crate) fn mcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Warn => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
    }
}

enum Item {
    Event(Box<SkillEvent>),
    Flush(oneshot::Sender<()>),
}

/// The event sink of one MCP call and the task that sends its notifications.
pub(crate) struct EventForwarder {
    queue: mpsc::UnboundedSender<Item>,
}

struct QueueSink(mpsc::UnboundedSender<Item>);

impl EventSink for QueueSink {
    fn emit(&self, event: &SkillEvent) {
        let _ = self.0.send(Item::Event(Box::new(event.clone())));
    }

    /// MCP has no notification for model text: the model answers whole.
    fn forwards_text(&self) -> bool {
        false
    }
}

impl EventForwarder {
    /// Starts forwarding to `peer` until `stop` (the request's cancellation) fires; returns the
    /// forwarder and the sink to hand to the call.
    pub fn start(
        peer: Peer<RoleServer>,
        progress_token: Option<ProgressToken>,
        level: SessionLogLevel,
        stop: CancellationToken,
    ) -> (Self, Arc<dyn EventSink>) {
        let (queue, mut items) = mpsc::unbounded_channel::<Item>();
        tokio::spawn(async move {
            loop {
                let item = tokio::select! {
                    item = items.recv() => item,
                    () = stop.cancelled() => None,
                };
                match item {
                    None => break,
                    Some(Item::Flush(done)) => {
                        let _ = done.send(());
                    }
                    Some(Item::Event(event)) => {
                        send(&peer, progress_token.as_ref(), &level, *event).await;
                    }
                }
            }
        });
        let sink = Arc::new(QueueSink(queue.clone())) as Arc<dyn EventSink>;
        (EventForwarder { queue }, sink)
    }

    /// Waits until every event emitted before this call was sent (or forwarding stopped).
    pub async fn flush(&self) {
        let (done, sent) = oneshot::channel();
        if self.queue.send(Item::Flush(done)).is_ok() {
            let _ = sent.await;
        }
    }
}

async fn send(
    peer: &Peer<RoleServer>,
    progress_token: Option<&ProgressToken>,
    level: &SessionLogLevel,
    event: SkillEvent,
) {
    // A send error means the client is gone; the call finishes and is answered into the void.
    match event.payload {
        EventPayload::Progress { pct, message } => {
            if let Some(token) = progress_token {
                let param = ProgressNotificationParam::new(token.clone(), f64::from(pct))
                    .with_total(100.0)
                    .with_message(message);
                let _ = peer.notify_progress(param).await;
            }
        }
        EventPayload::Log {
            level: event_level,
            message,
        } => log(peer, level, mcp_level(event_level), message).await,
        EventPayload::Status { message, .. } => log(peer, level, LoggingLevel::Info, message).await,
        _ => {}
    }
}

async fn log(peer: &Peer<RoleServer>, session: &SessionLogLevel, at: LoggingLevel, text: String) {
    if !session.allows(at) {
        return;
    }
    let mut param = LoggingMessageNotificationParam::new(at, json!(text));
    param.logger = Some("skillet".into());
    let _ = peer.notify_logging_message(param).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_level_filters_lower_levels() {
        let level = SessionLogLevel::default();
        assert!(level.allows(LoggingLevel::Info));
        assert!(!level.allows(LoggingLevel::Debug));
        level.set(LoggingLevel::Error);
        assert!(!level.allows(mcp_level(LogLevel::Warn)));
        assert!(level.allows(mcp_level(LogLevel::Error)));
    }
}
