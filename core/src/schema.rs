//! How the engine names data that breaks a schema, for the doors that report it in their own
//! error shapes: one [`Violation`] per failing keyword, and [`json_kind`] for "is a string, not
//! an object" sentences.
//!
//! Not here: compiling and validating schemas (the engine's `schema`); a door checks a call's
//! input through `SkillService::check_input`.

use serde_json::Value;

/// One way an instance fails a schema.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    /// JSON pointer into the validated instance (`/items/0/amount`; `""` = the whole value).
    pub instance_path: String,
    /// JSON pointer of the failing keyword in the schema (`/properties/items/items/required`).
    pub schema_path: String,
    /// Human-readable explanation.
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.instance_path.is_empty() {
            "(root)"
        } else {
            &self.instance_path
        };
        write!(f, "{at}: {}", self.message)
    }
}

/// A JSON value's kind as a noun phrase for messages (`a string`, `an array`, `null`). The one
/// spelling for the engine: the MCP tool arguments check and the CLI's argument parsing use it.
pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
