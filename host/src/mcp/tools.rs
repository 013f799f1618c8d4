//! Skills as MCP tools: which skills are offered and how a [`SkillDefinition`] becomes a [`Tool`].
//!
//! Only `Published` skills are tools (`Blocked`, `Created` and `Archived` ones are not offered).
//! A tool's `inputSchema` is the skill's input schema as written; a skill without one (a plain
//! Agent Skills skill, whose input schema is the engine's `{}` = "anything") gets
//! `default_input_schema`, because MCP requires an object schema. Its `outputSchema` is the
//! skill's output schema when that describes an object (MCP only allows object results as
//! `structuredContent`); otherwise the tool has no `outputSchema` and its result is text only.
//!
//! Not here: running a call (`handler`) or mapping its answer (`answer`).

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};

use skillet_core::service::SkillService;
use skillet_protocol::PROMPT_ARGUMENT;
use skillet_protocol::{SkillDefinition, SkillDiscoverRequest, SkillStatus};

/// The `inputSchema` of a skill that declares no input schema: one optional free-text
/// `prompt` ([`PROMPT_ARGUMENT`], the name A2A text parts use too), which the engine sends to the
/// model as the user message. The engine accepts any arguments for such a skill.
pub(crate) fn default_input_schema() -> JsonObject {
    match json!({
        "type": "object",
        "properties": {
            PROMPT_ARGUMENT: {
                "type": "string",
                "description": "What you want the skill to do, in your own words."
            }
        }
    }) {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// The skills the service offers as tools now, in discover order.
pub(crate) fn published_skills(service: &dyn SkillService) -> Vec<SkillDefinition> {
    service
        .discover(&SkillDiscoverRequest::default())
        .skills
        .into_iter()
        .filter(|s| s.status == SkillStatus::Published)
        .collect()
}

/// The MCP tools for `skills` (which should be the `published_skills` of a registry).
pub(crate) fn tools(skills: &[SkillDefinition]) -> Vec<Tool> {
    skills.iter().map(tool).collect()
}

/// One skill as a tool.
pub(crate) fn tool(skill: &SkillDefinition) -> Tool {
    let input = if skill.input_schema.is_empty() {
        default_input_schema()
    } else {
        skill.input_schema.clone()
    };
    let mut tool = Tool::new(
        skill.name.clone(),
        skill.description.clone(),
        Arc::new(input),
    );
    if let Some(title) = display_name(skill) {
        tool = tool.with_title(title);
    }
    if let Some(output) = object_output_schema(skill) {
        tool = tool.with_raw_output_schema(Arc::new(output.clone()));
    }
    tool
}

/// The skill's output schema when it describes an object.
pub(crate) fn object_output_schema(skill: &SkillDefinition) -> Option<&JsonObject> {
    let schema = &skill.output_schema;
    (schema.get("type") == Some(&Value::String("object".into()))).then_some(schema)
}

/// The A2A display name (`a2a-name`), when it differs from the skill's name.
pub(crate) fn display_name(skill: &SkillDefinition) -> Option<String> {
    let name = skill.metadata.as_ref()?.get("a2a")?.get("name")?.as_str()?;
    (name != skill.name).then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn definition(input: Value, output: Value, status: &str) -> SkillDefinition {
        serde_json::from_value(json!({
            "name": "s", "version": "1", "description": "d", "triggers": [],
            "status": status, "input_schema": input, "output_schema": output,
            "when_to_use": "", "argument_hint": "", "source": "user",
            "metadata": {"a2a": {"name": "Nice S"}}
        }))
        .unwrap()
    }

    #[test]
    fn a_skill_with_schemas_keeps_them_exactly() {
        let input = json!({"type": "object", "properties": {"x": {"type": "integer"}}});
        let output = json!({"type": "object", "properties": {"y": {"type": "string"}}});
        let tool = tool(&definition(input.clone(), output.clone(), "Published"));
        assert_eq!(Value::Object((*tool.input_schema).clone()), input);
        assert_eq!(
            tool.output_schema.map(|o| Value::Object((*o).clone())),
            Some(output)
        );
        assert_eq!(tool.title.as_deref(), Some("Nice S"));
    }

    #[test]
    fn a_skill_without_an_input_schema_gets_the_documented_default_and_no_output_schema() {
        let tool = tool(&definition(json!({}), json!({}), "Published"));
        assert_eq!(*tool.input_schema, default_input_schema());
        assert!(tool.output_schema.is_none());
    }

    #[test]
    fn a_non_object_output_schema_is_not_offered() {
        let tool = tool(&definition(
            json!({}),
            json!({"type": "string"}),
            "Published",
        ));
        assert!(tool.output_schema.is_none());
    }
}
