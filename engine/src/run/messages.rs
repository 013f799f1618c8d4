//! The text the engine itself says to a model: the system prompt, the first user message, and
//! the repair messages after an unusable final answer.
//!
//! Rules (also in the `run` module docs):
//! - **system** = the rendered instructions, trailing whitespace trimmed (bytes on every turn
//!   that tell the model nothing); when the skill has an output schema, followed by an
//!   "Output format" section that asks for one JSON value and shows the schema.
//! - **first user message** = the text of the `prompt` argument when the arguments are exactly
//!   one string field named `prompt`; otherwise the arguments object as compact JSON (`{}` when
//!   there are none).
//! - **loop stopped** = the tool result of each call of a turn that repeats a call the
//!   `tool_loop_threshold`-th time in a row: not run, answer now.
//! - **repair** = a user message that lists every problem (instance path + message, or the JSON
//!   parse error) and asks for the corrected JSON only.
//!
//! Not here: deciding when to repair (`output`), or the conversation's storage (`agent`).

use serde_json::{Map, Value};

use crate::schema::Violation;

/// The system prompt: instructions plus, with an output schema (its compact JSON text, written
/// once per skill: [`CompiledSchema::text`](crate::schema::CompiledSchema::text)), the
/// output-format section. Allocated at its exact size: a call in flight holds it for every turn.
pub(crate) fn system_prompt(instructions: &str, output_schema: Option<&str>) -> String {
    let instructions = instructions.trim_end();
    let Some(schema) = output_schema else {
        return instructions.to_owned();
    };
    const SECTION: &str = "## Output format\n\nGive your final answer as one JSON value \
         matching this JSON Schema, and nothing else:\n\n";
    let gap = if instructions.is_empty() { "" } else { "\n\n" };
    let mut text =
        String::with_capacity(instructions.len() + gap.len() + SECTION.len() + schema.len());
    for part in [instructions, gap, SECTION, schema] {
        text.push_str(part);
    }
    text
}

pub use skillet_protocol::PROMPT_ARGUMENT;

/// The first user message for `arguments` (see the module docs for the rule).
pub(crate) fn first_user_message(arguments: &Map<String, Value>) -> String {
    if arguments.len() == 1
        && let Some(Value::String(prompt)) = arguments.get(PROMPT_ARGUMENT)
    {
        return prompt.clone();
    }
    // Serialized from the borrowed map: no copy of the arguments.
    serde_json::to_string(arguments)
        .unwrap_or_else(|_| Value::Object(arguments.clone()).to_string())
}

/// The repair message after a final answer that is not JSON. `schema` is quoted when the
/// system prompt does not state it (the wire carried it, yet the answer missed it).
pub(crate) fn repair_unparseable(error: &str, schema: Option<&str>) -> String {
    let mut text = format!(
        "Your previous answer could not be used: it is not valid JSON ({error}). Answer again \
         with only a single JSON value that matches the output schema"
    );
    push_schema(&mut text, schema);
    text
}

/// Ends a repair message: a full stop, or the schema the answer must match.
fn push_schema(text: &mut String, schema: Option<&str>) {
    match schema {
        Some(schema) => {
            text.push_str(": ");
            text.push_str(schema);
        }
        None => text.push('.'),
    }
}

/// The tool result of each call of a turn that repeated `name` with the same arguments
/// `streak` times in a row: the calls are not run, the answer is due.
pub(crate) fn loop_stopped(name: &str, streak: u32) -> String {
    format!(
        "Not run: `{name}` was called {streak} times in a row with the same arguments, and its \
         result is above. Do not call tools again: give your final answer now."
    )
}

/// The repair message after a final answer the token limit cut off mid-JSON.
pub(crate) fn repair_cut_off() -> String {
    "Your previous answer was cut off by the token limit before the JSON was complete. Answer \
     again with only the JSON value, shorter: no explanation, no reasoning."
        .to_owned()
}

/// How many violations a repair's `log` line names; the rest are counted.
const LOGGED_VIOLATIONS: usize = 3;

/// The longest violation message a repair's `log` line carries (a message quotes the model's
/// value, which can be long); the repair message to the model has them whole.
const LOGGED_MESSAGE_CHARS: usize = 200;

/// The `log` line of a repair turn: each of the first few violations (path and message), the
/// count of the rest, and what happens next — what a person watching the run needs to know why
/// the model is asked again. It ends with "asking the model to repair it", which `eval` reads.
pub(crate) fn repair_log(violations: &[Violation]) -> String {
    let count = violations.len();
    let mut text = format!(
        "final answer rejected ({count} problem{}: ",
        if count == 1 { "" } else { "s" }
    );
    for (i, violation) in violations.iter().take(LOGGED_VIOLATIONS).enumerate() {
        if i > 0 {
            text.push_str("; ");
        }
        let shown = violation.to_string();
        let mut cut: String = shown.chars().take(LOGGED_MESSAGE_CHARS).collect();
        if cut.len() < shown.len() {
            cut.push('…');
        }
        text.push_str(&cut);
    }
    if count > LOGGED_VIOLATIONS {
        text.push_str(&format!("; and {} more", count - LOGGED_VIOLATIONS));
    }
    text.push_str("); asking the model to repair it");
    text
}

/// The repair message after a final answer that failed the output schema; lists every
/// violation, and quotes `schema` when the system prompt does not state it.
pub(crate) fn repair_violations(violations: &[Violation], schema: Option<&str>) -> String {
    let mut text = format!(
        "Your previous answer does not match the output schema ({} problem{}):\n",
        violations.len(),
        if violations.len() == 1 { "" } else { "s" }
    );
    for v in violations {
        text.push_str("- ");
        text.push_str(&v.to_string());
        text.push('\n');
    }
    text.push_str("Answer again with only the corrected JSON value");
    if schema.is_some() {
        text.push_str(", matching the output schema");
    }
    push_schema(&mut text, schema);
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_single_prompt_string_is_sent_as_its_text() {
        let args = json!({"prompt": "Summarize this"});
        assert_eq!(
            first_user_message(args.as_object().unwrap()),
            "Summarize this"
        );
    }

    #[test]
    fn other_arguments_are_sent_as_compact_json() {
        let args = json!({"prompt": "x", "n": 2});
        assert_eq!(
            first_user_message(args.as_object().unwrap()),
            r#"{"prompt":"x","n":2}"#
        );
        assert_eq!(first_user_message(&Map::new()), "{}");
        let non_string = json!({"prompt": 3});
        assert_eq!(
            first_user_message(non_string.as_object().unwrap()),
            r#"{"prompt":3}"#
        );
    }

    #[test]
    fn system_prompt_shows_the_schema_only_when_there_is_one() {
        assert_eq!(system_prompt("Do it.", None), "Do it.");
        let schema = json!({"type": "object"}).to_string();
        let with = system_prompt("Do it.", Some(&schema));
        assert!(with.starts_with("Do it.\n\n## Output format"));
        assert!(with.ends_with(r#"{"type":"object"}"#));
        let exact = "Do it.\n\n## Output format\n\nGive your final answer as one JSON value \
                     matching this JSON Schema, and nothing else:\n\n{\"type\":\"object\"}";
        assert_eq!(with, exact);
        // Trailing blank space of the instructions is trimmed; empty instructions add no gap.
        assert_eq!(system_prompt("Do it. \n\n", Some(&schema)), exact);
        let bare = system_prompt("", Some("true"));
        assert_eq!(bare.capacity(), bare.len(), "allocated at its exact size");
        assert!(bare.starts_with("## Output format") && bare.ends_with("\n\ntrue"));
    }

    #[test]
    fn repair_lists_every_violation_with_its_path() {
        let v = |path: &str, msg: &str| Violation {
            instance_path: path.into(),
            schema_path: String::new(),
            message: msg.into(),
        };
        let text = repair_violations(&[v("/a", "is not a number"), v("", "missing b")], None);
        assert!(text.contains("2 problems"));
        assert!(text.contains("- /a: is not a number\n"));
        assert!(text.contains("- (root): missing b\n"));
        assert!(text.ends_with("corrected JSON value."), "{text}");
    }

    #[test]
    fn a_repair_quotes_the_schema_the_system_prompt_does_not_state() {
        let schema = r#"{"type":"object","required":["a"]}"#;
        let v = Violation {
            instance_path: String::new(),
            schema_path: String::new(),
            message: "missing a".into(),
        };
        let violations = repair_violations(std::slice::from_ref(&v), Some(schema));
        assert!(
            violations.ends_with(&format!("matching the output schema: {schema}")),
            "{violations}"
        );
        let unparseable = repair_unparseable("expected value", Some(schema));
        assert!(
            unparseable.ends_with(&format!(": {schema}")),
            "{unparseable}"
        );
        assert!(repair_unparseable("expected value", None).ends_with("output schema."));
    }

    #[test]
    fn the_repair_log_names_the_first_violations_and_counts_the_rest() {
        let v = |path: &str, msg: &str| Violation {
            instance_path: path.into(),
            schema_path: String::new(),
            message: msg.into(),
        };
        let one = repair_log(&[v(
            "/action_items/0/due",
            "\"next Friday\" is not a \"date\"",
        )]);
        assert_eq!(
            one,
            "final answer rejected (1 problem: /action_items/0/due: \"next Friday\" is not a \
             \"date\"); asking the model to repair it"
        );
        let many: Vec<Violation> = (0..5).map(|i| v(&format!("/{i}"), "bad")).collect();
        let text = repair_log(&many);
        assert!(
            text.starts_with(
                "final answer rejected (5 problems: /0: bad; /1: bad; /2: bad; and 2 more)"
            ),
            "{text}"
        );
        let long = repair_log(&[v("/x", &"y".repeat(1000))]);
        assert!(long.len() < 300 && long.contains('…'), "{long}");
        assert!(long.ends_with("asking the model to repair it"));
    }
}
