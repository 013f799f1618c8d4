//! [`CompiledSkill`]: everything the run loop and the host need about one skill, validated and
//! compiled once (its [`SkillSpec`], template, schemas, hints, A2A data), immutable afterwards.
//! The wire's `SkillDefinition` is not kept here: `to_wire` (`wire.rs`) projects it.

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::error::ManifestError;
pub use super::keys::TemplateMode;
use super::resources::SkillResources;
use super::spec::{SkillSource, SkillSpec, UnknownSource};
use crate::protocol::SkillDefinition;
use crate::schema::CompiledSchema;
use crate::template::{RenderError, Template};

/// Sampling hints from `a2a-max-tokens`, `a2a-temperature`, `a2a-top-p`, and the reasoning
/// settings of `a2e-reasoning-effort`, `a2e-thinking-budget-tokens`, `a2e-think`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecutionHints {
    /// Upper bound on generated tokens per model call.
    pub max_tokens: Option<u32>,
    /// Sampling temperature (0..=2).
    pub temperature: Option<f32>,
    /// Nucleus sampling (0..=1).
    pub top_p: Option<f32>,
    /// The structured-output mode this skill works best with (`a2e-structured-output`), used
    /// where the host's provider leaves the mode on `auto`.
    pub structured_output: Option<skillet_providers::OutputMode>,
    /// The most a run of this skill may cost, in USD (`a2e-max-cost-usd`; the host's
    /// `[limits] max_cost_usd` applies too, the smaller wins).
    pub max_cost_usd: Option<f64>,
    /// How much the model reasons on this skill, over its provider's settings (each field
    /// reaches only the API that has it).
    pub reasoning: skillet_providers::Reasoning,
}

/// The A2A `AgentSkill` data of a skill (`a2a-*` keys, with defaults applied).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct A2aMetadata {
    /// Wire id: `a2a-id`, else the skill name.
    pub id: String,
    /// Display name (`a2a-name`); the projection falls back to the skill name.
    pub display_name: Option<String>,
    /// `a2a-tags` as declared (may be empty; see `A2aMetadata::card_tags`).
    pub tags: Vec<String>,
    /// `a2a-examples`.
    pub examples: Vec<String>,
    /// `a2a-input-modes` (empty = the card's defaults).
    pub input_modes: Vec<String>,
    /// `a2a-output-modes` (empty = the card's defaults).
    pub output_modes: Vec<String>,
    /// `a2a-security-requirements`: opaque A2A `SecurityRequirement` objects.
    pub security_requirements: Vec<Value>,
}

impl A2aMetadata {
    /// Tags for the Agent Card, which must be non-empty: the declared tags, else the skill's
    /// category, else `["skill"]`.
    pub(crate) fn card_tags(&self, category: Option<&str>) -> Vec<String> {
        if !self.tags.is_empty() {
            self.tags.clone()
        } else if let Some(c) = category {
            vec![c.to_owned()]
        } else {
            vec!["skill".to_owned()]
        }
    }
}

/// One skill, loaded and compiled. Share it in an `Arc`; nothing in it changes after load.
#[derive(Debug, Clone)]
pub struct CompiledSkill {
    /// What the skill declares, as loaded (status is the *declared* one; the registry's
    /// `RegisteredSkill` carries the current status). The wire's `SkillDefinition` is
    /// projected from it and the fields below by `to_wire`.
    pub spec: SkillSpec,
    /// The instructions, compiled ([`Template::literal`] when the body is not a template).
    pub template: Template,
    /// Whether the body is a strict template or literal text.
    pub template_mode: TemplateMode,
    /// Compiled `input_schema`; `None` when the skill declares none.
    pub input_schema: Option<CompiledSchema>,
    /// Compiled `output_schema`; `None` when the skill declares none (free-form output).
    pub output_schema: Option<CompiledSchema>,
    /// Sampling hints.
    pub hints: ExecutionHints,
    /// A2A projection data.
    pub a2a: A2aMetadata,
    /// The skill directory (`None` for programmatic skills).
    pub dir: Option<PathBuf>,
    /// Warnings found while loading (never errors: a skill with errors does not load).
    pub warnings: Vec<ManifestError>,
    /// Declared tool names (`a2e-tools`), in declaration order.
    pub tools: Vec<String>,
    /// Declared toolkit names (`a2e-toolkits`), in declaration order.
    pub toolkits: Vec<String>,
    /// Python requirement lines declared in `metadata.a2e-requirements` (the folder's
    /// `requirements.txt` and `pyproject.toml` are read by `crate::environments`).
    pub requirements: Vec<String>,
    /// System tools the skill's scripts run, from `metadata.a2e-system-tools` (bare program
    /// names; the host decides whether to offer them: `[skills.scripts] tools`).
    pub system_tools: Vec<String>,
    /// Tool names declared in `metadata.a2e-approval`: their calls need a person's approval on
    /// top of the host's `[tools.NAME] approval` (a skill can add approvals, never remove one).
    pub approval: Vec<String>,
    /// The files beside `SKILL.md` and the mapped `allowed-tools` (empty for programmatic
    /// skills).
    pub resources: SkillResources,
}

impl CompiledSkill {
    /// The skill's unique name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// Renders the instructions with the call's arguments.
    pub fn render_instructions(&self, arguments: &Value) -> Result<String, RenderError> {
        self.template.render(arguments)
    }

    /// Builds a compiled skill from a programmatic definition (a native handler's skill):
    /// compiles its schemas, reads tool/toolkit names (strings or objects with a `name`), and
    /// keeps `instructions` as literal text. Names follow the A2E rules (non-empty), not the
    /// stricter SKILL.md directory rules, so `code_review` is fine here.
    pub(crate) fn from_definition(
        definition: SkillDefinition,
    ) -> Result<CompiledSkill, Vec<ManifestError>> {
        let file = PathBuf::from(
            definition
                .file_path
                .clone()
                .unwrap_or_else(|| format!("<native:{}>", definition.name)),
        );
        let mut errors = Vec::new();
        if definition.name.trim().is_empty() {
            errors.push(ManifestError::error(
                &file,
                "definition.name",
                "`name` is empty",
            ));
        }
        let mut schema = |map: &Map<String, Value>, which: &str| {
            if map.is_empty() {
                return None;
            }
            match CompiledSchema::compile(&Value::Object(map.clone())) {
                Ok(s) => Some(s),
                Err(e) => {
                    errors.push(ManifestError::error(
                        &file,
                        format!("definition.{which}#{}", e.pointer),
                        e.reason,
                    ));
                    None
                }
            }
        };
        let input_schema = schema(&definition.input_schema, "input_schema");
        let output_schema = schema(&definition.output_schema, "output_schema");
        let tools = dependency_names(definition.tools.as_deref(), "tools", &file, &mut errors);
        let toolkits = dependency_names(
            definition.toolkits.as_deref(),
            "toolkits",
            &file,
            &mut errors,
        );
        let source = definition
            .source
            .parse()
            .unwrap_or_else(|e: UnknownSource| {
                errors.push(ManifestError::error(
                    &file,
                    "definition.source",
                    e.to_string(),
                ));
                SkillSource::System
            });
        if !errors.is_empty() {
            return Err(errors);
        }
        let a2a = A2aMetadata {
            id: definition.name.clone(),
            tags: definition.tags.clone().unwrap_or_default(),
            ..A2aMetadata::default()
        };
        let template = Template::literal(definition.instructions.as_deref().unwrap_or(""));
        Ok(CompiledSkill {
            template,
            template_mode: TemplateMode::Literal,
            input_schema,
            output_schema,
            hints: ExecutionHints::default(),
            a2a,
            dir: None,
            warnings: Vec::new(),
            tools,
            toolkits,
            requirements: Vec::new(),
            system_tools: Vec::new(),
            approval: Vec::new(),
            resources: SkillResources::default(),
            spec: spec_of(definition, source),
        })
    }
}

/// A programmatic definition's declarations (its tools, toolkits and schemas are read by
/// [`CompiledSkill::from_definition`]).
fn spec_of(definition: SkillDefinition, source: SkillSource) -> SkillSpec {
    let SkillDefinition {
        name,
        version,
        description,
        triggers,
        tools: _,
        toolkits: _,
        status,
        input_schema: _,
        output_schema: _,
        instructions,
        file_path,
        llm_config,
        arguments,
        when_to_use,
        argument_hint,
        source: _,
        category,
        tags,
        max_turns,
        timeout_seconds,
        icon,
        metadata,
    } = definition;
    SkillSpec {
        name,
        version,
        description,
        triggers,
        status,
        instructions: instructions.unwrap_or_default(),
        file_path,
        llm_config,
        arguments,
        when_to_use,
        argument_hint,
        source,
        category,
        tags: tags.unwrap_or_default(),
        max_turns,
        timeout_seconds,
        icon,
        metadata: metadata.unwrap_or_default(),
    }
}

fn dependency_names(
    values: Option<&[Value]>,
    field: &str,
    file: &std::path::Path,
    errors: &mut Vec<ManifestError>,
) -> Vec<String> {
    let mut names = Vec::new();
    for (i, value) in values.unwrap_or_default().iter().enumerate() {
        let name = match value {
            Value::String(s) => Some(s.as_str()),
            Value::Object(o) => o.get("name").and_then(Value::as_str),
            _ => None,
        };
        match name {
            Some(n) if !n.trim().is_empty() => names.push(n.to_owned()),
            _ => errors.push(ManifestError::error(
                file,
                format!("definition.{field}[{i}]"),
                format!("a dependency must be a name or an object with a `name`, found {value}"),
            )),
        }
    }
    names
}
