//! The text the engine itself says to a model: the system prompt, the first user message, and
//! the repair messages after an unusable final answer.
//!
//! Rules (also in the `run` module docs):
//! - **system** = the rendered instructions; when the skill has an output schema, followed by an
//!   "Output format" section that asks for one JSON value and shows the schema.
//! - **first user message** = the text of the `prompt` argument when the arguments are exactly
//!   one string field named `prompt`; otherwise the arguments object as compact JSON (`{}` when
//!   there are none).
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
    let Some(schema) = output_schema else {
        return instructions.to_owned();
    };
    const SECTION: &str = "## Output format\n\nWhen you give your final answer, answer with a \
         single JSON value that matches this JSON Schema, and nothing else (no prose, no code \
         fence):\n\n";
    let instructions = instructions.trim_end();
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

/// The repair message after a final answer that is not JSON.
pub(crate) fn repair_unparseable(error: &str) -> String {
    format!(
        "Your previous answer could not be used: it is not valid JSON ({error}). Answer again \
         with only a single JSON value that matches the output schema."
    )
}

/// The repair message after a final answer the token limit cut off mid-JSON.
pub(crate) fn repair_cut_off() -> String {
    "Your previous answer was cut off by the token limit before the JSON was complete. Answer \
     again with only the JSON value, shorter: no explanation, no reasoning."
        .to_owned()
}

/// The repair message after a final answer that failed the output schema; lists every
/// violation.
pub(crate) fn repair_violations(violations: &[Violation]) -> String {
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
    text.push_str("Answer again with only the corrected JSON value.");
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
        let exact = "Do it.\n\n## Output format\n\nWhen you give your final answer, answer with a \
                     single JSON value that matches this JSON Schema, and nothing else (no prose, \
                     no code fence):\n\n{\"type\":\"object\"}";
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
        let text = repair_violations(&[v("/a", "is not a number"), v("", "missing b")]);
        assert!(text.contains("2 problems"));
        assert!(text.contains("- /a: is not a number\n"));
        assert!(text.contains("- (root): missing b\n"));
    }
}
