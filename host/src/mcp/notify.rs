//! A call's live events as MCP notifications to the caller.
//!
//! | event | notification |
//! |---|---|
//! | `progress {pct, message}` | `notifications/progress` with the caller's `progressToken`, `progress` = `pct`, `total` = 100, `message` (only when the request carried a `progressToken`) |
//! | `log {level, message}` | `notifications/message` (`logger: "skillet"`) when `level` is at or above the session's level (`logging/setLevel`; default `info`) — on a 2026-07-28 request the request's `_meta` `logLevel`, and none without one |
//! | `status {message}` | `notifications/message` at `info`, under the same rule |
//! | `artifact` | nothing (the result carries the output); so an MCP call never asks the model for a stream (`EventSink::forwards_text`) |
//!
//! Which event becomes which notification is decided once, here, as a `notice::Notice`; over
//! stdio a [`DirectSink`] writes it as a JSON-RPC line built by hand (`notice`) onto the
//! session's output where the event is emitted (`coalesce::LineSender`): no task, no channel,
//! no trip through rmcp's types or service loop, and since it is written before the call
//! returns, it precedes the result. A
//! host that stops reading loses notifications once the output backs up (see `coalesce`:
//! [`MAX_LINE_BACKLOG`](super::coalesce::MAX_LINE_BACKLOG) bytes waiting, or a result waiting
//! for room), never the result; the first loss per call is logged at `warn`.
//!
//! Over HTTP (rmcp routes a notification to the request's SSE stream) events are forwarded in
//! order by one task per call through rmcp's peer; `EventForwarder::flush` waits until every
//! event emitted so far was sent, so the notifications of a call precede its result there too.
//!
//! Once the request is cancelled nothing more is sent.
//!
//! Not here: the result itself (`answer`).

#![allow(deprecated)] // MCP logging is deprecated by SEP-2577 but still what current clients use.

use skillet_protocol::LogLevel;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{LoggingLevel, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::coalesce::{LineRefused, LineSender};
use super::notice::Notice;
use skillet_core::events::EventSink;
use skillet_protocol::{EventPayload, SkillEvent};

/// The least severe level a call's log notifications are sent at; `None` sends none. On the
/// `initialize` era it is the session's, shared by its calls (`logging/setLevel`, default
/// `info`); on a 2026-07-28 request it is the request's own `_meta` `logLevel`, and a request
/// without one hears no `notifications/message` (that revision makes logging opt-in).
#[derive(Clone, Debug)]
pub(crate) struct SessionLogLevel(Arc<Mutex<Option<LoggingLevel>>>);

impl Default for SessionLogLevel {
    fn default() -> Self {
        SessionLogLevel(Arc::new(Mutex::new(Some(LoggingLevel::Info))))
    }
}

impl SessionLogLevel {
    /// One request's level (2026-07-28: `io.modelcontextprotocol/logLevel`), shared with no one.
    pub(crate) fn per_request(level: Option<LoggingLevel>) -> Self {
        SessionLogLevel(Arc::new(Mutex::new(level)))
    }

    /// Sets the level (`logging/setLevel`).
    pub(crate) fn set(&self, level: LoggingLevel) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(level);
    }

    /// Whether a message at `level` is sent.
    pub(crate) fn allows(&self, level: LoggingLevel) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some_and(|least| rank(level) >= rank(least))
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

/// The notice `event` becomes in a session at `level` for a request with `progress_token`, if
/// any (see the module docs' table).
fn notice<'a>(
    event: &'a SkillEvent,
    progress_token: Option<&'a ProgressToken>,
    level: &SessionLogLevel,
) -> Option<Notice<'a>> {
    let notice = match &event.payload {
        EventPayload::Progress { pct, message } => Notice::Progress {
            token: progress_token?,
            pct: *pct,
            message,
        },
        EventPayload::Log {
            level: event_level,
            message,
        } => Notice::Log {
            level: mcp_level(*event_level),
            text: message,
        },
        EventPayload::Status { message, .. } => Notice::Log {
            level: LoggingLevel::Info,
            text: message,
        },
        _ => return None,
    };
    match notice {
        Notice::Log { level: at, .. } if !level.allows(at) => None,
        notice => Some(notice),
    }
}

/// The event sink of one MCP-over-stdio call: writes its notifications straight onto the
/// session's output (see the module docs).
pub(crate) struct DirectSink {
    output: LineSender,
    progress_token: Option<ProgressToken>,
    level: SessionLogLevel,
    stop: CancellationToken,
    lost: AtomicBool,
}

impl DirectSink {
    /// A sink writing to `output` until `stop` (the request's cancellation) fires.
    pub(crate) fn start(
        output: LineSender,
        progress_token: Option<ProgressToken>,
        level: SessionLogLevel,
        stop: CancellationToken,
    ) -> Arc<dyn EventSink> {
        Arc::new(DirectSink {
            output,
            progress_token,
            level,
            stop,
            lost: AtomicBool::new(false),
        })
    }
}

impl EventSink for DirectSink {
    fn emit(&self, event: &SkillEvent) {
        if self.stop.is_cancelled() {
            return;
        }
        let Some(notice) = notice(event, self.progress_token.as_ref(), &self.level) else {
            return;
        };
        match self.output.send_line(|out| notice.write_json(out)) {
            Ok(()) | Err(LineRefused::Closed) => {}
            Err(LineRefused::Backlog) => {
                if !self.lost.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        call = %event.req_id,
                        "an MCP notification was not sent (the host is not reading); later ones \
                         may be lost too"
                    );
                }
            }
        }
    }

    /// MCP has no notification for model text: the model answers whole.
    fn forwards_text(&self) -> bool {
        false
    }
}

enum Item {
    Event(Box<SkillEvent>),
    Flush(oneshot::Sender<()>),
}

/// The event sink of one MCP-over-HTTP call and the task that sends its notifications.
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
    pub(crate) fn start(
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
                        let notification = notice(&event, progress_token.as_ref(), &level)
                            .map(|notice| notice.to_rmcp());
                        if let Some(notification) = notification {
                            // An error means the client is gone; the call is answered into
                            // the void.
                            let _ = peer.send_notification(notification).await;
                        }
                    }
                }
            }
        });
        let sink = Arc::new(QueueSink(queue.clone())) as Arc<dyn EventSink>;
        (EventForwarder { queue }, sink)
    }

    /// Waits until every event emitted before this call was sent (or forwarding stopped).
    pub(crate) async fn flush(&self) {
        let (done, sent) = oneshot::channel();
        if self.queue.send(Item::Flush(done)).is_ok() {
            let _ = sent.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::coalesce::coalescing;
    use super::*;
    use rmcp::model::{ServerJsonRpcMessage, ServerNotification};
    use serde_json::json;
    use skillet_protocol::EventPayload;
    use tokio::io::AsyncReadExt;

    fn event(seq: u64, payload: EventPayload) -> SkillEvent {
        SkillEvent::new("mcp-7", seq, payload)
    }

    /// What a stdio session's output reads after `events` went through a `DirectSink`.
    async fn written(
        token: Option<ProgressToken>,
        level: &SessionLogLevel,
        stop: &CancellationToken,
        events: &[SkillEvent],
    ) -> Vec<serde_json::Value> {
        let (near, mut far) = tokio::io::duplex(1 << 16);
        let (writer, task) = coalescing(near);
        let sink = DirectSink::start(writer.lines(), token, level.clone(), stop.clone());
        for event in events {
            sink.emit(event);
        }
        drop(writer);
        task.await.unwrap();
        let mut text = String::new();
        far.read_to_string(&mut text).await.unwrap();
        text.lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn stdio_notifications_are_the_json_rpc_lines_rmcp_would_write_in_order() {
        let level = SessionLogLevel::default();
        let events = [
            event(0, EventPayload::progress(10, "reading")),
            event(1, EventPayload::status("calling tool word_count")),
            event(2, EventPayload::log(LogLevel::Debug, "below the level")),
            event(3, EventPayload::log(LogLevel::Warn, "careful")),
        ];
        let token = ProgressToken(rmcp::model::NumberOrString::Number(5));
        let lines = written(Some(token), &level, &CancellationToken::new(), &events).await;
        assert_eq!(
            lines,
            vec![
                json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": 5, "progress": 10.0, "total": 100.0,
                        "message": "reading"}}),
                json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "logger": "skillet",
                        "data": "calling tool word_count"}}),
                json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "warning", "logger": "skillet", "data": "careful"}}),
            ]
        );
        // The same notification decoded by rmcp's own message type.
        let decoded: ServerJsonRpcMessage = serde_json::from_value(lines[2].clone()).unwrap();
        assert!(matches!(
            decoded,
            rmcp::model::JsonRpcMessage::Notification(n)
                if matches!(n.notification, ServerNotification::LoggingMessageNotification(_))
        ));
    }

    #[tokio::test]
    async fn no_progress_without_a_token_and_nothing_once_cancelled() {
        let level = SessionLogLevel::default();
        let progress = [event(0, EventPayload::progress(50, "half"))];
        assert!(
            written(None, &level, &CancellationToken::new(), &progress)
                .await
                .is_empty()
        );
        let stop = CancellationToken::new();
        stop.cancel();
        let status = [event(0, EventPayload::status("after the cancel"))];
        assert!(written(None, &level, &stop, &status).await.is_empty());
    }

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
