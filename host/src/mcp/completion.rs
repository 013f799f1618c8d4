//! `completion/complete`: suggestions for what a person is typing into a prompt's argument or
//! a resource template's variable.
//!
//! - A prompt argument (`ref/prompt`) is completed from its property in the input schema:
//!   the values of an `enum` (or a `const`), `true`/`false` for a boolean; anything else has
//!   no suggestions (an empty list — free text is not guessed).
//! - The skill-file template `skill://{skill}/{+path}` (`ref/resource`, see `resources`) is
//!   completed with the names of the skills served and, once `skill` is known (the request's
//!   `context.arguments`), the paths of that skill's files.
//!
//! Suggestions are those starting with the typed value (ignoring case), at most 100 (the MCP
//! cap), with `total` and `hasMore` when there are more. An unknown prompt, template or
//! argument is `-32602`. Not here: the prompts and resources themselves.

use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, ErrorData, Reference};
use serde_json::Value;

use super::prompts::{enum_text, input_schema, properties};
use super::resources::{self, SKILL_TEMPLATE};
use skillet_core::service::SkillService;
use skillet_protocol::SkillDefinition;

/// The answer to `completion/complete` over the published `skills`. Blocking when it lists a
/// skill's files: call it off the async threads.
pub(crate) fn complete(
    service: &dyn SkillService,
    skills: &[SkillDefinition],
    request: &CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    let argument = &request.argument;
    let candidates = match &request.r#ref {
        Reference::Prompt(prompt) => {
            let Some(skill) = skills.iter().find(|s| s.name == prompt.name) else {
                return Err(ErrorData::invalid_params(
                    format!("unknown prompt: {}", prompt.name),
                    None,
                ));
            };
            let schema = input_schema(skill);
            let Some((_, property)) = properties(&schema).find(|(name, _)| **name == argument.name)
            else {
                return Err(ErrorData::invalid_params(
                    format!("prompt {} has no argument {}", skill.name, argument.name),
                    None,
                ));
            };
            choices(property)
        }
        Reference::Resource(template) if template.uri == SKILL_TEMPLATE => {
            match argument.name.as_str() {
                "skill" => skills
                    .iter()
                    .filter(|s| service.skill_folder(&s.name).is_some())
                    .map(|s| s.name.clone())
                    .collect(),
                "path" => {
                    let skill = request
                        .context
                        .as_ref()
                        .and_then(|c| c.arguments.as_ref())
                        .and_then(|a| a.get("skill"));
                    // Only a skill the caller sees: another is a name nothing serves.
                    let visible = skill.filter(|name| skills.iter().any(|s| s.name == **name));
                    match visible.and_then(|name| service.skill_folder(name)) {
                        Some(folder) => resources::file_paths(folder.as_ref()),
                        None => Vec::new(),
                    }
                }
                other => {
                    return Err(ErrorData::invalid_params(
                        format!("the template {SKILL_TEMPLATE} has no variable {other}"),
                        None,
                    ));
                }
            }
        }
        Reference::Resource(template) => {
            return Err(ErrorData::invalid_params(
                format!("unknown resource template: {}", template.uri),
                None,
            ));
        }
        _ => {
            return Err(ErrorData::invalid_params(
                "completion/complete: an unknown kind of reference",
                None,
            ));
        }
    };
    let typed = argument.value.to_lowercase();
    let matching: Vec<String> = candidates
        .into_iter()
        .filter(|c| c.to_lowercase().starts_with(&typed))
        .collect();
    let total = matching.len();
    let values: Vec<String> = matching
        .into_iter()
        .take(CompletionInfo::MAX_VALUES)
        .collect();
    let info = CompletionInfo::with_pagination(
        values,
        u32::try_from(total).ok(),
        total > CompletionInfo::MAX_VALUES,
    )
    .map_err(|e| ErrorData::internal_error(e, None))?;
    Ok(CompleteResult::new(info))
}

/// The values a property can take, when it names them.
fn choices(property: &Value) -> Vec<String> {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return values.iter().map(enum_text).collect();
    }
    if let Some(value) = property.get("const") {
        return vec![enum_text(value)];
    }
    if property.get("type").and_then(Value::as_str) == Some("boolean") {
        return vec!["false".into(), "true".into()];
    }
    Vec::new()
}
