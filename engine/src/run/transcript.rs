//! Recording a run's [`Transcript`] when its call asked for one (`metadata.transcript: true`):
//! the turn loop tells the recorder what each turn sent (the conversation's new messages since
//! the last turn), what the model answered and why an answer was rejected; the result takes the
//! transcript when the call ends — also when the loop was dropped at the deadline, because the
//! recorder lives in the call's [`RunState`](super::run_state::RunState), not in the loop.
//!
//! With `[telemetry] capture_content` on, each entry is also an event on the call's span (the
//! `invoke_agent` span current when the recorder is made), as it is recorded: `gen_ai.system.message`,
//! `gen_ai.user.message`, `gen_ai.tool.message`, `gen_ai.assistant.message` (the model's
//! answer) and `skillet.answer.rejected` (its violations), each with `skillet.turn` and the
//! entry's text as `content` — the recorded text, so cut and redacted the same way. Such a
//! recorder keeps the transcript only for a call that asked for it.
//!
//! A call that did not ask, on a host that does not capture content, holds no recorder, and the
//! loop's calls to it do nothing: nothing is copied for nobody. Otherwise each text is cut to
//! [`MAX_TRANSCRIPT_TEXT_CHARS`](crate::protocol::MAX_TRANSCRIPT_TEXT_CHARS), the whole is kept
//! under [`MAX_TRANSCRIPT_CHARS`](crate::protocol::MAX_TRANSCRIPT_CHARS), and every text passes
//! through the process's redaction set (as logs and `log` events do) before it leaves.
//!
//! Not here: the wire shape (`skillet-protocol`'s `transcript`), the loop (`agent`).

use std::sync::Mutex;
use std::time::Duration;

use opentelemetry::KeyValue;
use skillet_providers::{ChatMessage, ChatResponse, ToolCall};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::protocol::{
    MAX_TRANSCRIPT_CHARS, MAX_TRANSCRIPT_TEXT_CHARS, Transcript, TranscriptMessage, TranscriptRole,
    TranscriptToolCall, TranscriptTurn, TurnUsage,
};
use crate::schema::Violation;
use crate::secrets::REDACTOR;

/// The transcript of one call, as it is recorded.
#[derive(Debug, Default)]
pub(crate) struct TranscriptRecorder {
    inner: Mutex<Recording>,
    /// The call asked for its transcript: the result takes it.
    keep: bool,
    /// `[telemetry] capture_content`: each entry is also an event on this span (the call's).
    span: Option<Span>,
}

#[derive(Debug, Default)]
struct Recording {
    transcript: Transcript,
    /// Conversation messages already recorded (the next turn's `sent` starts here).
    recorded: usize,
    /// Characters of text kept so far.
    chars: usize,
}

impl TranscriptRecorder {
    /// The recorder of a call: keeping the transcript when the call asked for it (`keep`),
    /// emitting span events on the current span when the host captures content; `None` when
    /// neither.
    pub(crate) fn new(keep: bool, capture_content: bool) -> Option<Self> {
        (keep || capture_content).then(|| TranscriptRecorder {
            inner: Mutex::default(),
            keep,
            span: capture_content.then(Span::current),
        })
    }

    /// Whether the call asked for its transcript (the result takes it).
    pub(crate) fn kept(&self) -> bool {
        self.keep
    }

    /// Emits `entries` (name, turn, content, more attributes) as events on the call's span,
    /// when the host captures content.
    fn emit(&self, turn: u32, entries: Vec<(&'static str, String, Vec<KeyValue>)>) {
        let Some(span) = &self.span else {
            return;
        };
        for (name, content, mut attributes) in entries {
            attributes.push(KeyValue::new("skillet.turn", i64::from(turn)));
            attributes.push(KeyValue::new("content", content));
            span.add_event(name, attributes);
        }
    }

    fn with<R>(&self, record: impl FnOnce(&mut Recording) -> R) -> R {
        record(
            &mut self
                .inner
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// A turn is about to send `system` and `messages`: records the messages it adds (every one
    /// since the last turn but the model's own answers, which their turn recorded).
    pub(crate) fn begin_turn(&self, turn: u32, system: Option<&str>, messages: &[ChatMessage]) {
        let events = self.with(|recording| {
            let mut events = Vec::new();
            if recording.transcript.turns.is_empty()
                && let Some(system) = system
            {
                recording.transcript.system = recording.keep(system).0;
                events.push((
                    "gen_ai.system.message",
                    recording.transcript.system.clone(),
                    Vec::new(),
                ));
            }
            let start = recording.recorded.min(messages.len());
            let sent: Vec<TranscriptMessage> = messages[start..]
                .iter()
                .filter(|message| !matches!(message, ChatMessage::Assistant { .. }))
                .map(|message| recording.message(message))
                .collect();
            if self.span.is_some() {
                events.extend(sent.iter().map(event));
            }
            recording.recorded = messages.len();
            recording.transcript.turns.push(TranscriptTurn {
                turn,
                sent,
                ..TranscriptTurn::default()
            });
            events
        });
        self.emit(turn, events);
    }

    /// The model answered the turn in progress after `took`.
    pub(crate) fn answered(&self, response: &ChatResponse, took: Duration) {
        let emitted = self.with(|recording| {
            let answer = recording.assistant(&response.text, &response.tool_calls);
            let emitted = self.span.is_some().then(|| event(&answer));
            let turn = recording.transcript.turns.last_mut()?;
            turn.answer = Some(answer);
            turn.duration_ms = u64::try_from(took.as_millis()).unwrap_or(u64::MAX);
            Some((turn.turn, emitted?))
        });
        if let Some((turn, event)) = emitted {
            self.emit(turn, vec![event]);
        }
    }

    /// The turn's answer was rejected as the final answer for `violations`.
    pub(crate) fn rejected(&self, violations: &[Violation]) {
        let emitted = self.with(|recording| {
            let listed: Vec<String> = violations
                .iter()
                .map(|v| recording.keep(&v.to_string()).0)
                .collect();
            let turn = recording.transcript.turns.last_mut()?;
            let content = listed.join("\n");
            turn.violations = listed;
            Some((turn.turn, content))
        });
        if let Some((turn, content)) = emitted {
            let count = i64::try_from(violations.len()).unwrap_or(i64::MAX);
            let attributes = vec![KeyValue::new("skillet.violations", count)];
            self.emit(turn, vec![("skillet.answer.rejected", content, attributes)]);
        }
    }

    /// The transcript, with each turn's reported tokens (`usage`, in turn order).
    pub(crate) fn take(&self, usage: &[TurnUsage]) -> Transcript {
        let mut transcript = self.with(|recording| std::mem::take(&mut recording.transcript));
        for turn in &mut transcript.turns {
            if let Some(reported) = usage.iter().rev().find(|u| u.turn == turn.turn) {
                turn.input_tokens = reported.input_tokens;
                turn.output_tokens = reported.output_tokens;
            }
        }
        transcript
    }
}

/// A recorded message as a span event: its name by role, its text, and its tool's name and
/// call id or the tool calls it made (as JSON text).
fn event(message: &TranscriptMessage) -> (&'static str, String, Vec<KeyValue>) {
    let name = match message.role {
        TranscriptRole::User => "gen_ai.user.message",
        TranscriptRole::Tool => "gen_ai.tool.message",
        TranscriptRole::Assistant => "gen_ai.assistant.message",
    };
    let mut attributes = Vec::new();
    if let Some(tool) = &message.tool {
        attributes.push(KeyValue::new("gen_ai.tool.name", tool.clone()));
    }
    if let Some(id) = &message.call_id {
        attributes.push(KeyValue::new("gen_ai.tool.call.id", id.clone()));
    }
    if message.is_error {
        attributes.push(KeyValue::new("error.type", "tool_error"));
    }
    if !message.tool_calls.is_empty() {
        let calls = serde_json::to_string(&message.tool_calls).unwrap_or_default();
        attributes.push(KeyValue::new("gen_ai.tool.calls", calls));
    }
    if message.truncated {
        attributes.push(KeyValue::new("skillet.truncated", true));
    }
    (name, message.text.clone(), attributes)
}

impl Recording {
    /// `text` redacted and within the caps, and whether it was cut.
    fn keep(&mut self, text: &str) -> (String, bool) {
        let room = MAX_TRANSCRIPT_CHARS.saturating_sub(self.chars);
        let limit = MAX_TRANSCRIPT_TEXT_CHARS.min(room);
        let redacted = REDACTOR.redact(text);
        let count = redacted.chars().count();
        if count <= limit {
            self.chars += count;
            return (redacted, false);
        }
        self.transcript.truncated = true;
        self.chars += limit;
        let mut cut: String = redacted.chars().take(limit).collect();
        cut.push('…');
        (cut, true)
    }

    fn message(&mut self, message: &ChatMessage) -> TranscriptMessage {
        match message {
            ChatMessage::User { text } => {
                let (text, truncated) = self.keep(text);
                TranscriptMessage {
                    role: TranscriptRole::User,
                    text,
                    truncated,
                    ..TranscriptMessage::default()
                }
            }
            ChatMessage::Image { .. } => TranscriptMessage {
                role: TranscriptRole::User,
                text: "[image]".to_owned(),
                ..TranscriptMessage::default()
            },
            ChatMessage::Assistant {
                text, tool_calls, ..
            } => self.assistant(text, tool_calls),
            ChatMessage::ToolResult {
                call_id,
                name,
                content,
                is_error,
            } => {
                let (text, truncated) = self.keep(content);
                TranscriptMessage {
                    role: TranscriptRole::Tool,
                    text,
                    tool: Some(name.clone()),
                    call_id: Some(call_id.clone()),
                    is_error: *is_error,
                    truncated,
                    ..TranscriptMessage::default()
                }
            }
        }
    }

    fn assistant(&mut self, text: &str, calls: &[ToolCall]) -> TranscriptMessage {
        let (text, mut truncated) = self.keep(text);
        let tool_calls = calls
            .iter()
            .map(|call| {
                let (arguments, cut) = self.keep(&call.arguments.to_string());
                truncated |= cut;
                TranscriptToolCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    // Arguments as the model sent them; text when cut or redacted into
                    // something that is no longer JSON.
                    arguments: serde_json::from_str(&arguments)
                        .unwrap_or(serde_json::Value::String(arguments)),
                }
            })
            .collect();
        TranscriptMessage {
            role: TranscriptRole::Assistant,
            text,
            tool_calls,
            truncated,
            ..TranscriptMessage::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::SecretString;

    fn response(text: &str) -> ChatResponse {
        ChatResponse {
            text: text.to_owned(),
            tool_calls: Vec::new(),
            finish_reason: skillet_providers::FinishReason::Stop,
            usage: None,
            request_id: None,
            reasoning: None,
            thinking: Vec::new(),
        }
    }

    #[test]
    fn each_turn_records_what_it_added_the_answer_and_why_it_was_rejected() {
        let recorder = TranscriptRecorder::new(true, false).unwrap();
        let mut messages = vec![ChatMessage::user("total these")];
        recorder.begin_turn(1, Some("You total expenses."), &messages);
        recorder.answered(&response("{\"total\": \"ten\"}"), Duration::from_millis(7));
        recorder.rejected(&[Violation {
            instance_path: "/total".into(),
            schema_path: "/properties/total/type".into(),
            message: "\"ten\" is not of type \"number\"".into(),
        }]);
        messages.push(ChatMessage::assistant("{\"total\": \"ten\"}"));
        messages.push(ChatMessage::user("Your previous answer does not match..."));
        recorder.begin_turn(2, Some("You total expenses."), &messages);
        recorder.answered(&response("{\"total\": 10}"), Duration::from_millis(5));
        let usage = [TurnUsage {
            turn: 2,
            input_tokens: Some(40),
            output_tokens: Some(6),
            ..TurnUsage::default()
        }];
        let transcript = recorder.take(&usage);
        assert_eq!(transcript.system, "You total expenses.");
        assert_eq!(transcript.turns.len(), 2);
        let [first, second] = &transcript.turns[..] else {
            unreachable!()
        };
        assert_eq!(first.sent.len(), 1);
        assert_eq!(first.sent[0].text, "total these");
        assert_eq!(
            first.violations,
            ["/total: \"ten\" is not of type \"number\""]
        );
        assert_eq!(first.duration_ms, 7);
        assert_eq!(first.input_tokens, None);
        // The second turn sent the repair message only: the rejected answer is the first's.
        assert_eq!(second.sent.len(), 1);
        assert!(second.sent[0].text.starts_with("Your previous answer"));
        assert_eq!(second.answer.as_ref().unwrap().text, "{\"total\": 10}");
        assert_eq!(
            (second.input_tokens, second.output_tokens),
            (Some(40), Some(6))
        );
        assert!(!transcript.truncated);
    }

    #[test]
    fn a_recorder_exists_for_a_call_that_asked_or_a_host_that_captures_content_and_keeps_only_the_asked()
     {
        assert!(TranscriptRecorder::new(false, false).is_none());
        let asked = TranscriptRecorder::new(true, false).unwrap();
        assert!(asked.kept() && asked.span.is_none());
        let captured = TranscriptRecorder::new(false, true).unwrap();
        assert!(!captured.kept() && captured.span.is_some());
    }

    #[test]
    fn texts_are_cut_at_the_cap_and_known_secrets_redacted() {
        REDACTOR.add(SecretString::from("canary-transcript-secret-81f2"));
        let recorder = TranscriptRecorder::new(true, false).unwrap();
        let long = "x".repeat(MAX_TRANSCRIPT_TEXT_CHARS + 10);
        let messages = vec![
            ChatMessage::user("my key is canary-transcript-secret-81f2"),
            ChatMessage::user(long),
        ];
        recorder.begin_turn(1, None, &messages);
        let transcript = recorder.take(&[]);
        let sent = &transcript.turns[0].sent;
        assert_eq!(sent[0].text, "my key is [REDACTED]");
        assert!(sent[1].truncated);
        assert_eq!(sent[1].text.chars().count(), MAX_TRANSCRIPT_TEXT_CHARS + 1);
        assert!(transcript.truncated);
    }
}
