//! A [`Notice`]: the notification one of a call's events becomes in an MCP session, and its two
//! encodings — rmcp's type, which MCP over HTTP sends through rmcp's peer, and the JSON-RPC line
//! MCP over stdio writes itself, built here by hand.
//!
//! Why by hand: through rmcp's types a notification is serialized to a `serde_json::Value`
//! first (its `_meta` handling), then written — the costliest step of a log line, eight times a
//! call at the default level. Written straight into the output buffer, strings escaped by
//! `skillet-json`, it is the same JSON without the detour. The tests decode every line written here with rmcp's own message type and
//! compare it with what rmcp writes for the same notice.
//!
//! Not here: which events become notices and for whom (`notify`), the output (`coalesce`).

#![allow(deprecated)] // MCP logging is deprecated by SEP-2577 but still what current clients use.

use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, Notification, NumberOrString,
    ProgressNotificationParam, ProgressToken, ServerNotification,
};

/// A notification to send, decided from an event (`notify`), not yet encoded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Notice<'a> {
    /// `notifications/progress` for the request's token: `pct` of a total of 100.
    Progress {
        token: &'a ProgressToken,
        pct: u8,
        message: &'a str,
    },
    /// `notifications/message` from the logger `skillet`.
    Log { level: LoggingLevel, text: &'a str },
}

/// The logger name every `notifications/message` carries.
pub(crate) const LOGGER: &str = "skillet";

impl Notice<'_> {
    /// This notification as rmcp's type (MCP over HTTP sends it through rmcp's peer).
    pub(crate) fn to_rmcp(self) -> ServerNotification {
        match self {
            Notice::Progress {
                token,
                pct,
                message,
            } => ServerNotification::ProgressNotification(Notification::new(
                ProgressNotificationParam::new(token.clone(), f64::from(pct))
                    .with_total(100.0)
                    .with_message(message),
            )),
            Notice::Log { level, text } => {
                let mut param =
                    LoggingMessageNotificationParam::new(level, serde_json::Value::from(text));
                param.logger = Some(LOGGER.into());
                ServerNotification::LoggingMessageNotification(Notification::new(param))
            }
        }
    }

    /// Appends this notification as one line of compact JSON (without the newline) to `out`:
    /// the JSON-RPC message rmcp writes for it, keys in rmcp's order.
    pub(crate) fn write_json(self, out: &mut Vec<u8>) {
        match self {
            Notice::Progress {
                token,
                pct,
                message,
            } => {
                out.extend_from_slice(
                    br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"#,
                );
                match &token.0 {
                    NumberOrString::Number(n) => out.extend_from_slice(n.to_string().as_bytes()),
                    NumberOrString::String(s) => skillet_json::write_str(out, s),
                }
                out.extend_from_slice(br#","progress":"#);
                out.extend_from_slice(pct.to_string().as_bytes());
                out.extend_from_slice(br#".0,"total":100.0,"message":"#);
                skillet_json::write_str(out, message);
                out.extend_from_slice(b"}}");
            }
            Notice::Log { level, text } => {
                out.extend_from_slice(
                    br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"#,
                );
                skillet_json::write_str(out, level_name(level));
                out.extend_from_slice(br#","logger":"#);
                skillet_json::write_str(out, LOGGER);
                out.extend_from_slice(br#","data":"#);
                skillet_json::write_str(out, text);
                out.extend_from_slice(b"}}");
            }
        }
    }
}

/// A level's name on the wire (RFC 5424's, as MCP spells them).
fn level_name(level: LoggingLevel) -> &'static str {
    match level {
        LoggingLevel::Debug => "debug",
        LoggingLevel::Info => "info",
        LoggingLevel::Notice => "notice",
        LoggingLevel::Warning => "warning",
        LoggingLevel::Error => "error",
        LoggingLevel::Critical => "critical",
        LoggingLevel::Alert => "alert",
        LoggingLevel::Emergency => "emergency",
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rmcp::model::ServerJsonRpcMessage;
    use serde_json::Value;

    use super::*;

    /// Texts with everything JSON escapes or passes through: quotes, backslashes, every
    /// control character, a line separator, non-ASCII, an emoji, long runs.
    fn texts() -> Vec<String> {
        let controls: String = (0u8..0x20).map(char::from).collect();
        vec![
            String::new(),
            "calling tool word_count".into(),
            "quote \" backslash \\ slash / tab \t newline \n".into(),
            controls,
            "\u{7f} \u{2028} \u{2029} ü ß 日本 🦀".into(),
            "x".repeat(5000) + "\"" + &"y".repeat(37),
        ]
    }

    fn levels() -> [LoggingLevel; 8] {
        [
            LoggingLevel::Debug,
            LoggingLevel::Info,
            LoggingLevel::Notice,
            LoggingLevel::Warning,
            LoggingLevel::Error,
            LoggingLevel::Critical,
            LoggingLevel::Alert,
            LoggingLevel::Emergency,
        ]
    }

    fn tokens() -> Vec<ProgressToken> {
        vec![
            ProgressToken(NumberOrString::Number(0)),
            ProgressToken(NumberOrString::Number(-7)),
            ProgressToken(NumberOrString::Number(i64::MAX)),
            ProgressToken(NumberOrString::String(Arc::from("tok-1"))),
            ProgressToken(NumberOrString::String(Arc::from("a \"quoted\" ü token\n"))),
        ]
    }

    /// The hand-written line, and what rmcp writes for the same notice, both as JSON values.
    fn both(notice: Notice<'_>) -> (Value, Value) {
        let mut line = Vec::new();
        notice.write_json(&mut line);
        assert!(!line.contains(&b'\n'), "one line: {line:?}");
        let ours: Value = serde_json::from_slice(&line).expect("our line is JSON");
        // rmcp's own type decodes it.
        let decoded: ServerJsonRpcMessage =
            serde_json::from_slice(&line).expect("rmcp decodes our line");
        assert!(matches!(
            decoded,
            rmcp::model::JsonRpcMessage::Notification(ref n)
                if matches!(
                    (notice, &n.notification),
                    (Notice::Progress { .. }, ServerNotification::ProgressNotification(_))
                        | (Notice::Log { .. }, ServerNotification::LoggingMessageNotification(_))
                )
        ));
        let theirs = serde_json::to_value(ServerJsonRpcMessage::notification(notice.to_rmcp()))
            .expect("rmcp serializes");
        (ours, theirs)
    }

    #[test]
    fn log_lines_are_what_rmcp_writes_for_every_level_and_text() {
        for level in levels() {
            for text in texts() {
                let (ours, theirs) = both(Notice::Log { level, text: &text });
                assert_eq!(ours, theirs, "{level:?} {text:?}");
            }
        }
    }

    #[test]
    fn progress_lines_are_what_rmcp_writes_for_every_token_and_message() {
        for token in tokens() {
            for pct in [0u8, 1, 50, 100] {
                for message in texts() {
                    let notice = Notice::Progress {
                        token: &token,
                        pct,
                        message: &message,
                    };
                    let (ours, theirs) = both(notice);
                    assert_eq!(ours, theirs, "{token:?} {pct} {message:?}");
                }
            }
        }
    }

    #[test]
    fn the_bytes_are_compact_json_in_rmcps_key_order() {
        let mut line = Vec::new();
        Notice::Log {
            level: LoggingLevel::Warning,
            text: "careful",
        }
        .write_json(&mut line);
        assert_eq!(
            String::from_utf8(line).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"skillet","data":"careful"}}"#
        );
        let token = ProgressToken(NumberOrString::Number(5));
        let mut line = Vec::new();
        Notice::Progress {
            token: &token,
            pct: 10,
            message: "reading",
        }
        .write_json(&mut line);
        assert_eq!(
            String::from_utf8(line).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":5,"progress":10.0,"total":100.0,"message":"reading"}}"#
        );
    }
}
