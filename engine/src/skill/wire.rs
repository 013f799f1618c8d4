//! `to_wire`: a skill projected onto the A2E wire type `SkillDefinition`, the one place the
//! domain model ([`SkillSpec`] inside [`CompiledSkill`]) meets the wire — what discover answers
//! and what a checkpoint's skill hash covers. Nothing in the engine carries the projection;
//! each door asks for it when it answers.
//!
//! Not here: reading a programmatic `SkillDefinition` into a skill (`compiled.rs`).

use serde_json::{Map, Value, json};

use super::compiled::CompiledSkill;
use super::registry::RegisteredSkill;
use super::spec::SkillSpec;
use crate::protocol::SkillDefinition;
use crate::schema::CompiledSchema;

impl CompiledSkill {
    /// The skill as discover advertises it, with its *declared* status (see
    /// [`RegisteredSkill::to_wire`] for the current one).
    pub fn to_wire(&self) -> SkillDefinition {
        let SkillSpec {
            name,
            version,
            description,
            triggers,
            status,
            instructions,
            file_path,
            llm_config,
            arguments,
            when_to_use,
            argument_hint,
            source,
            category,
            tags,
            max_turns,
            timeout_seconds,
            icon,
            metadata,
        } = &self.spec;
        let names = |names: &[String]| {
            (!names.is_empty()).then(|| names.iter().cloned().map(Value::String).collect())
        };
        SkillDefinition {
            name: name.clone(),
            version: version.clone(),
            description: description.clone(),
            triggers: triggers.clone(),
            tools: names(&self.tools),
            toolkits: names(&self.toolkits),
            status: *status,
            input_schema: schema_map(self.input_schema.as_ref()),
            output_schema: schema_map(self.output_schema.as_ref()),
            instructions: (self.dir.is_some() || !instructions.is_empty())
                .then(|| instructions.clone()),
            file_path: file_path.clone(),
            llm_config: llm_config.clone(),
            arguments: arguments.clone(),
            when_to_use: when_to_use.clone(),
            argument_hint: argument_hint.clone(),
            source: source.as_str().to_owned(),
            category: category.clone(),
            tags: (!tags.is_empty()).then(|| tags.clone()),
            max_turns: *max_turns,
            timeout_seconds: *timeout_seconds,
            icon: icon.clone(),
            metadata: (!metadata.is_empty()).then(|| metadata.clone()),
        }
    }
}

impl RegisteredSkill {
    /// The skill as discover advertises it now: its current status, and when it is `Blocked`,
    /// why (`blocked_reason`, `missing_*` in its metadata: the registry's module doc).
    pub fn to_wire(&self) -> SkillDefinition {
        let mut wire = self.compiled.to_wire();
        wire.status = self.status;
        if !self.blockers.is_empty() {
            self.blockers
                .write_metadata(wire.metadata.get_or_insert_with(Default::default));
        }
        wire
    }
}

/// A compiled schema as the wire's object: its source document, `false` as `{"not": {}}`, no
/// schema (or `true`) as `{}`.
fn schema_map(schema: Option<&CompiledSchema>) -> Map<String, Value> {
    match schema.map(CompiledSchema::source) {
        Some(Value::Object(m)) => m.clone(),
        Some(Value::Bool(false)) => json!({"not": {}}).as_object().cloned().unwrap_or_default(),
        _ => Map::new(),
    }
}
