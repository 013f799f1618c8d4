//! The opening of a run, shared by a call's preflight (`call`) and
//! [`SkillService::prompt`](crate::service::SkillService::prompt): the arguments checked
//! against the input schema, the instructions rendered, the system prompt assembled.
//!
//! One place, so that a host showing a skill as a prompt (MCP `prompts/get`) shows exactly
//! what the skill's own run would start from, and refuses exactly the arguments a call would.
//! Not here: the call's files section (a prompt has no workspace) or the provider choice.

use serde_json::{Map, Value};

use super::messages;
use crate::protocol::{ErrorCode, ProtocolError};
use crate::service::SkillPrompt;
use crate::skill::{CompiledSkill, Registry};

/// Shows `arguments` to `look` as the JSON value they are (the schema and the template read a
/// `Value`), without copying them: the map is moved into a value and back.
pub(crate) fn viewed_as_value<T>(
    arguments: &mut Map<String, Value>,
    look: impl FnOnce(&Value) -> T,
) -> T {
    let value = Value::Object(std::mem::take(arguments));
    let seen = look(&value);
    if let Value::Object(map) = value {
        *arguments = map;
    }
    seen
}

/// Refuses arguments that break the skill's input schema, listing every violation.
pub(crate) fn check_input(skill: &CompiledSkill, arguments: &Value) -> Result<(), ProtocolError> {
    let Some(schema) = &skill.input_schema else {
        return Ok(());
    };
    let Err(violations) = schema.validate(arguments) else {
        return Ok(());
    };
    let listed: Vec<String> = violations.iter().map(ToString::to_string).collect();
    Err(ProtocolError::new(
        ErrorCode::SchemaViolation,
        format!(
            "arguments do not match the input schema of `{}` ({} violation{}): {}",
            skill.name(),
            violations.len(),
            if violations.len() == 1 { "" } else { "s" },
            listed.join("; ")
        ),
    ))
}

/// The instructions rendered with `arguments`; a placeholder without a value is a
/// `schema_violation` naming it.
pub(crate) fn render_instructions(
    skill: &CompiledSkill,
    arguments: &Value,
) -> Result<String, ProtocolError> {
    skill.render_instructions(arguments).map_err(|e| {
        ProtocolError::new(
            ErrorCode::SchemaViolation,
            format!("cannot render the instructions of `{}`: {e}", skill.name()),
        )
    })
}

/// The output schema's text for the system prompt, when it constrains anything.
pub(crate) fn output_schema_text(skill: &CompiledSkill) -> Option<&str> {
    skill
        .output_schema
        .as_ref()
        .filter(|s| !s.is_unconstrained())
        .map(|s| s.text())
}

/// The prompt of the published skill `name` (see `SkillService::prompt`).
pub(crate) fn prompt(
    skills: &Registry,
    name: &str,
    arguments: &Map<String, Value>,
) -> Result<SkillPrompt, ProtocolError> {
    let skill = skills
        .get(name)
        .filter(|skill| skill.is_runnable())
        .ok_or_else(|| {
            ProtocolError::new(
                ErrorCode::UnknownSkill,
                format!("no published skill `{name}`"),
            )
        })?;
    let value = Value::Object(arguments.clone());
    check_input(&skill.compiled, &value)?;
    let instructions = render_instructions(&skill.compiled, &value)?;
    Ok(SkillPrompt {
        instructions: messages::system_prompt(&instructions, output_schema_text(&skill.compiled)),
        request: (!arguments.is_empty()).then(|| messages::first_user_message(arguments)),
    })
}
