//! Skills as MCP prompts: `prompts/list` and `prompts/get`, so a person can pick a skill in
//! their host (Claude Desktop, an IDE) and run it on the host's own model.
//!
//! Every skill offered as a tool (`tools::published_skills`) is also a prompt of the same name.
//! Its arguments are the top-level properties of the tool's `inputSchema` (a skill without one
//! gets the same optional `prompt` argument its tool has), `required` as the schema says, and
//! each described by the property's `description` plus its type when it is not a string (MCP
//! prompt arguments are strings). `prompts/get` turns the strings into the schema's types
//! (`"5"` for an integer property, `"true"` for a boolean, JSON text for an object or array),
//! and the engine checks them against the input schema and renders the instructions exactly as
//! a call would ([`SkillService::prompt`](skillet_core::service::SkillService::prompt)). The
//! result is the opening of the skill's own run: the system prompt (instructions and, with an
//! output schema, the output format) as a user message — MCP prompts have no system role —
//! then, when there are arguments, the run's first user message.
//!
//! Every refusal is JSON-RPC `-32602`: an unknown prompt, a missing required argument, an
//! argument of the wrong type, arguments the input schema refuses, a placeholder without a
//! value. Not here: `completion/complete` (`completion`).

use rmcp::model::{
    ErrorData, GetPromptRequestParams, GetPromptResult, JsonObject, Prompt, PromptArgument,
    PromptMessage, Role,
};
use serde_json::Value;

use super::tools;
use skillet_core::service::SkillService;
use skillet_protocol::{ErrorCode, SkillDefinition};

/// The prompts for `skills` (the `published_skills` of the service).
pub(crate) fn prompts(skills: &[SkillDefinition]) -> Vec<Prompt> {
    skills.iter().map(prompt).collect()
}

/// One skill as a prompt.
fn prompt(skill: &SkillDefinition) -> Prompt {
    let mut prompt = Prompt::new(
        skill.name.clone(),
        Some(skill.description.clone()),
        Some(arguments(&input_schema(skill))),
    );
    prompt.title = tools::display_name(skill);
    prompt
}

/// The schema a prompt's arguments come from: the tool's `inputSchema`.
pub(crate) fn input_schema(skill: &SkillDefinition) -> JsonObject {
    if skill.input_schema.is_empty() {
        tools::default_input_schema()
    } else {
        skill.input_schema.clone()
    }
}

/// The top-level properties of `schema` as prompt arguments, in the schema's order.
fn arguments(schema: &JsonObject) -> Vec<PromptArgument> {
    let required = required(schema);
    properties(schema)
        .map(|(name, property)| {
            let mut argument =
                PromptArgument::new(name.clone()).with_required(required.iter().any(|r| r == name));
            if let Some(title) = property.get("title").and_then(Value::as_str) {
                argument = argument.with_title(title);
            }
            if let Some(description) = describe(property) {
                argument = argument.with_description(description);
            }
            argument
        })
        .collect()
}

/// The top-level properties of an object schema.
pub(crate) fn properties(schema: &JsonObject) -> impl Iterator<Item = (&String, &Value)> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
}

fn required(schema: &JsonObject) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|name| name.as_str().map(str::to_owned))
        .collect()
}

/// The property's description, with what to type when it is not free text.
fn describe(property: &Value) -> Option<String> {
    let description = property.get("description").and_then(Value::as_str);
    let hint = type_hint(property);
    match (description, hint) {
        (Some(text), Some(hint)) => Some(format!("{text} ({hint})")),
        (Some(text), None) => Some(text.to_owned()),
        (None, hint) => hint,
    }
}

fn type_hint(property: &Value) -> Option<String> {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        let shown: Vec<String> = values.iter().map(enum_text).collect();
        return Some(format!("one of: {}", shown.join(", ")));
    }
    let hints: Vec<&str> = types(property)
        .iter()
        .filter_map(|t| match *t {
            "integer" => Some("an integer"),
            "number" => Some("a number"),
            "boolean" => Some("true or false"),
            "object" => Some("a JSON object"),
            "array" => Some("a JSON array"),
            _ => None,
        })
        .collect();
    (!hints.is_empty() && !types(property).contains(&"string")).then(|| hints.join(" or "))
}

/// An `enum` value as the text a person types for it.
pub(crate) fn enum_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The JSON types a property allows (`type` as a string or a list).
fn types(property: &Value) -> Vec<&str> {
    match property.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// `prompts/get`: the opening of the skill's run for the given arguments.
pub(crate) fn get(
    service: &dyn SkillService,
    skills: &[SkillDefinition],
    request: GetPromptRequestParams,
) -> Result<GetPromptResult, ErrorData> {
    let Some(skill) = skills.iter().find(|s| s.name == request.name) else {
        return Err(ErrorData::invalid_params(
            format!("unknown prompt: {}", request.name),
            None,
        ));
    };
    let schema = input_schema(skill);
    let arguments = typed_arguments(&schema, request.arguments.unwrap_or_default())
        .map_err(|reason| ErrorData::invalid_params(format!("{}: {reason}", skill.name), None))?;
    let opening = service.prompt(&skill.name, &arguments).map_err(|error| {
        let message = format!("{}: {}", skill.name, error.message);
        match error.code {
            ErrorCode::UnknownSkill | ErrorCode::SchemaViolation => {
                ErrorData::invalid_params(message, None)
            }
            _ => ErrorData::internal_error(message, None),
        }
    })?;
    let mut messages = vec![PromptMessage::new_text(Role::User, opening.instructions)];
    if let Some(request) = opening.request {
        messages.push(PromptMessage::new_text(Role::User, request));
    }
    Ok(GetPromptResult::new(messages).with_description(skill.description.clone()))
}

/// The prompt's string arguments as the values the schema's properties declare; a missing
/// required argument or a string that is not of the declared type is refused.
fn typed_arguments(schema: &JsonObject, given: JsonObject) -> Result<JsonObject, String> {
    let missing: Vec<String> = required(schema)
        .into_iter()
        .filter(|name| !given.contains_key(name))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "missing required argument{} {}",
            if missing.len() == 1 { "" } else { "s" },
            missing
                .iter()
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let declared: JsonObject = properties(schema)
        .map(|(name, property)| (name.clone(), property.clone()))
        .collect();
    given
        .into_iter()
        .map(|(name, value)| {
            let typed = match (declared.get(&name), value) {
                (Some(property), Value::String(text)) => typed_value(&name, property, text)?,
                // Undeclared arguments and values already typed go to the schema as they are.
                (_, value) => value,
            };
            Ok((name, typed))
        })
        .collect()
}

/// `text` as a value of one of the property's types (the first that reads it).
fn typed_value(name: &str, property: &Value, text: String) -> Result<Value, String> {
    let allowed = types(property);
    if allowed.is_empty() || allowed.contains(&"string") {
        return Ok(Value::String(text));
    }
    let trimmed = text.trim();
    for kind in &allowed {
        let read = match *kind {
            "integer" => trimmed.parse::<i64>().ok().map(Value::from),
            "number" => trimmed.parse::<i64>().ok().map(Value::from).or_else(|| {
                trimmed
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map(Value::Number)
            }),
            "boolean" => match trimmed {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            "null" => (trimmed == "null").then_some(Value::Null),
            "object" => serde_json::from_str::<Value>(trimmed)
                .ok()
                .filter(Value::is_object),
            "array" => serde_json::from_str::<Value>(trimmed)
                .ok()
                .filter(Value::is_array),
            _ => None,
        };
        if let Some(value) = read {
            return Ok(value);
        }
    }
    Err(format!(
        "argument `{name}` must be {}; got {text:?}",
        allowed
            .iter()
            .map(|kind| match *kind {
                "integer" => "an integer",
                "number" => "a number",
                "boolean" => "true or false",
                "object" => "a JSON object",
                "array" => "a JSON array",
                "null" => "null",
                other => other,
            })
            .collect::<Vec<_>>()
            .join(" or ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn arguments_follow_the_top_level_properties_with_required_flags_and_hints() {
        let schema = schema(json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "The text."},
                "max_words": {"type": "integer", "description": "Upper bound."},
                "tone": {"enum": ["formal", "casual"]}
            },
            "required": ["text"]
        }));
        let arguments = arguments(&schema);
        let shown: Vec<(&str, Option<bool>, Option<&str>)> = arguments
            .iter()
            .map(|a| (a.name.as_str(), a.required, a.description.as_deref()))
            .collect();
        assert_eq!(
            shown,
            [
                ("text", Some(true), Some("The text.")),
                ("max_words", Some(false), Some("Upper bound. (an integer)")),
                ("tone", Some(false), Some("one of: formal, casual")),
            ]
        );
    }

    #[test]
    fn strings_become_the_declared_types_and_wrong_ones_are_refused() {
        let schema = schema(json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"},
                "o": {"type": "object"}, "s": {"type": "string"}, "either": {"type": ["integer", "string"]}
            },
            "required": ["s"]
        }));
        let given = schema_args(json!({
            "n": "5", "x": "2.5", "b": "true", "o": "{\"k\": 1}", "s": "5", "either": "7"
        }));
        assert_eq!(
            Value::Object(typed_arguments(&schema, given).unwrap()),
            json!({"n": 5, "x": 2.5, "b": true, "o": {"k": 1}, "s": "5", "either": "7"})
        );
        let wrong = typed_arguments(&schema, schema_args(json!({"s": "a", "n": "many"})));
        assert_eq!(
            wrong.unwrap_err(),
            "argument `n` must be an integer; got \"many\""
        );
        let missing = typed_arguments(&schema, schema_args(json!({"n": "1"})));
        assert_eq!(missing.unwrap_err(), "missing required argument `s`");
    }

    fn schema_args(value: Value) -> JsonObject {
        schema(value)
    }
}
