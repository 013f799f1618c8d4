//! `skillet run --transcript`: the run's transcript printed for a person, after the result —
//! the system prompt once, then each turn with its time and tokens, what it sent (`>`), what
//! the model answered (`<`, tool calls with their arguments) and, for a rejected answer, the
//! violations (`!`). With `--json` the transcript is in the printed response instead
//! (`data.transcript`).
//!
//! Not here: recording it (the engine's `run::transcript`).

use std::fmt::Write as _;

use skillet_protocol::{Transcript, TranscriptMessage, TranscriptRole};

/// The transcript as text, each line indented under its turn.
pub(super) fn render(transcript: &Transcript) -> String {
    let mut out = String::from("── transcript ──\nsystem prompt:\n");
    indent(&mut out, &transcript.system, "  ");
    for turn in &transcript.turns {
        let mut heading = format!("── turn {} · {} ms", turn.turn, turn.duration_ms);
        if let (Some(input), Some(output)) = (turn.input_tokens, turn.output_tokens) {
            let _ = write!(heading, " · {input} in + {output} out tokens");
        }
        out.push_str(&heading);
        out.push('\n');
        for message in &turn.sent {
            message_lines(&mut out, "> ", message);
        }
        match &turn.answer {
            Some(answer) => message_lines(&mut out, "< ", answer),
            None => out.push_str("< (no answer: the request failed)\n"),
        }
        for violation in &turn.violations {
            let _ = writeln!(out, "! rejected: {violation}");
        }
    }
    if transcript.truncated {
        out.push_str("(the transcript was cut at its size limit)\n");
    }
    out
}

fn message_lines(out: &mut String, mark: &str, message: &TranscriptMessage) {
    let who = match (message.role, &message.tool) {
        (TranscriptRole::User, _) => "user".to_owned(),
        (TranscriptRole::Assistant, _) => "model".to_owned(),
        (TranscriptRole::Tool, Some(tool)) if message.is_error => format!("tool {tool} (error)"),
        (TranscriptRole::Tool, Some(tool)) => format!("tool {tool}"),
        (TranscriptRole::Tool, None) => "tool".to_owned(),
    };
    if !message.text.is_empty() || message.tool_calls.is_empty() {
        let _ = writeln!(out, "{mark}{who}:");
        indent(out, &message.text, "    ");
    }
    for call in &message.tool_calls {
        let _ = writeln!(out, "{mark}{who} calls {} {}", call.name, call.arguments);
    }
}

fn indent(out: &mut String, text: &str, prefix: &str) {
    for line in text.lines() {
        out.push_str(prefix);
        out.push_str(line);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillet_protocol::{TranscriptToolCall, TranscriptTurn};

    #[test]
    fn a_turn_shows_what_was_sent_answered_and_rejected() {
        let transcript = Transcript {
            system: "Total it.\nAnswer JSON.".into(),
            turns: vec![TranscriptTurn {
                turn: 1,
                sent: vec![TranscriptMessage {
                    text: "lunch 12".into(),
                    ..Default::default()
                }],
                answer: Some(TranscriptMessage {
                    role: TranscriptRole::Assistant,
                    tool_calls: vec![TranscriptToolCall {
                        id: "c1".into(),
                        name: "calculator".into(),
                        arguments: serde_json::json!({"expression": "12"}),
                    }],
                    ..Default::default()
                }),
                violations: vec!["/total: not a number".into()],
                duration_ms: 8,
                input_tokens: Some(30),
                output_tokens: Some(4),
            }],
            truncated: false,
        };
        assert_eq!(
            render(&transcript),
            "── transcript ──\nsystem prompt:\n  Total it.\n  Answer JSON.\n── turn 1 · 8 ms · 30 in \
             + 4 out tokens\n> user:\n    lunch 12\n< model calls calculator \
             {\"expression\":\"12\"}\n! rejected: /total: not a number\n"
        );
    }
}
