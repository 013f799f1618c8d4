//! The final answer of a model turn: parsing it as JSON (tolerating one fenced ```json block,
//! or prose before and after one JSON object or array, as small local models write),
//! validating it against the skill's output schema, and deciding between accept and repair.
//!
//! Without an output schema (absent, `{}` or `true`), the answer is not parsed: `data` is the
//! model's final text as a JSON string. With one, `data` is the parsed, validated JSON value.
//!
//! Not here: the wording of repair messages (`messages`), or how many repairs are allowed (the
//! turn loop stops when turns run out).

use serde_json::Value;

use crate::schema::{CompiledSchema, Violation};

/// What a final answer turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FinalOutput {
    /// Usable: this is `SkillResult.data`.
    Accepted(Value),
    /// Not JSON at all; the parse error.
    Unparseable(String),
    /// JSON that fails the output schema; every violation.
    Invalid(Vec<Violation>),
}

/// Judges the model's final `text` against `schema` (`None` = no output schema).
pub(super) fn judge(text: &str, schema: Option<&CompiledSchema>) -> FinalOutput {
    let Some(schema) = schema else {
        return FinalOutput::Accepted(Value::String(text.to_owned()));
    };
    let value = match parse_json_answer(text) {
        Ok(value) => value,
        Err(e) => return FinalOutput::Unparseable(e),
    };
    match schema.validate(&value) {
        Ok(()) => FinalOutput::Accepted(value),
        Err(violations) => FinalOutput::Invalid(violations),
    }
}

/// Parses a JSON answer: the whole text, or else the content of its one fenced code block
/// (```` ```json ```` or a bare ```` ``` ````), or else the first JSON object or array inside
/// prose. Two or more fenced blocks are ambiguous and rejected.
pub(crate) fn parse_json_answer(text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err("the answer is empty".to_owned());
    }
    let whole_error = match serde_json::from_str::<Value>(trimmed) {
        Ok(value) => return Ok(value),
        Err(e) => e.to_string(),
    };
    match fenced_blocks(trimmed).as_slice() {
        [] => skillet_providers::find_json_value(trimmed)
            .filter(|v| v.is_object() || v.is_array())
            .ok_or(whole_error),
        [block] => serde_json::from_str::<Value>(block.trim())
            .map_err(|e| format!("the fenced code block is not valid JSON: {e}")),
        blocks => Err(format!(
            "the answer has {} fenced code blocks; expected one JSON value",
            blocks.len()
        )),
    }
}

/// Whether `text` is a JSON object or array that ends before it is complete (a string, array
/// or object left open at the end), alone or in one fenced block: an answer cut off mid-JSON,
/// whatever finish reason the server gave (llama-cpp-python's function-calling chat formats
/// report `stop` for an answer the token limit cut).
pub(crate) fn ends_early(text: &str) -> bool {
    let trimmed = text.trim();
    let json = match fenced_blocks(trimmed).as_slice() {
        [block] => block.trim(),
        _ => trimmed,
    };
    json.starts_with(['{', '['])
        && serde_json::from_str::<serde::de::IgnoredAny>(json).is_err_and(|e| e.is_eof())
}

/// The contents of the ```` ``` ```` fenced blocks of `text` whose info string is empty or
/// `json` (case-insensitive). An unclosed fence ends at the end of the text.
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after_ticks = &rest[open + 3..];
        let line_end = after_ticks.find('\n').unwrap_or(after_ticks.len());
        let info = after_ticks[..line_end].trim();
        let body_start = (line_end + 1).min(after_ticks.len());
        let body = &after_ticks[body_start..];
        let (content, next) = match body.find("```") {
            Some(close) => (&body[..close], &body[close + 3..]),
            None => (body, ""),
        };
        if info.is_empty() || info.eq_ignore_ascii_case("json") {
            blocks.push(content);
        }
        rest = next;
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_left_open_at_the_end_is_an_answer_cut_off() {
        assert!(ends_early(r#"{"summary": "Rust 1.0 shipped in May"#));
        assert!(ends_early("```json\n{\"key_points\": [\"a\", \"b"));
        assert!(ends_early("[1, 2,"));
        // Complete, or broken in another way: not cut off.
        assert!(!ends_early(r#"{"summary": "done"}"#));
        assert!(!ends_early(r#"{"summary": "done"}}"#));
        assert!(!ends_early("I think the summary is"));
        assert!(!ends_early(""));
    }

    fn schema() -> CompiledSchema {
        CompiledSchema::compile(&json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}, "s": {"type": "string"}},
            "required": ["n", "s"]
        }))
        .unwrap()
    }

    #[test]
    fn plain_json_and_one_fenced_block_are_accepted() {
        assert_eq!(parse_json_answer(r#" {"a":1} "#).unwrap(), json!({"a": 1}));
        let fenced = "Here you go:\n```json\n{\"a\": 2}\n```\nThanks.";
        assert_eq!(parse_json_answer(fenced).unwrap(), json!({"a": 2}));
        let bare = "```\n[1,2]\n```";
        assert_eq!(parse_json_answer(bare).unwrap(), json!([1, 2]));
    }

    #[test]
    fn two_fenced_blocks_and_prose_are_rejected() {
        let two = "```json\n{}\n```\nand\n```json\n{}\n```";
        assert!(parse_json_answer(two).unwrap_err().contains("2 fenced"));
        assert!(parse_json_answer("I think the answer is 4").is_err());
        assert_eq!(
            parse_json_answer("Here is the result:\n{\"n\": 4}\nHope this helps!").unwrap(),
            json!({"n": 4})
        );
        assert!(parse_json_answer("   ").unwrap_err().contains("empty"));
    }

    #[test]
    fn judge_lists_every_violation() {
        match judge(r#"{"n": "x"}"#, Some(&schema())) {
            FinalOutput::Invalid(v) => {
                assert_eq!(v.len(), 2, "{v:?}");
                assert!(v.iter().any(|v| v.instance_path == "/n"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn without_a_schema_the_text_is_the_data() {
        assert_eq!(
            judge("hello", None),
            FinalOutput::Accepted(Value::String("hello".into()))
        );
    }
}
