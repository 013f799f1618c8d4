//! [`SkillSpec`] and [`SkillSource`]: what a skill declares about itself, as the engine keeps it
//! — the domain model the loader produces and the run path, the registry and the doors read.
//!
//! Not here: the wire type. `SkillDefinition` (`skillet-protocol`) is what `skill/discover`
//! answers; it is *projected* from a skill by one function, `to_wire` (`wire.rs`), when a door
//! answers, and read back into a spec only for programmatic skills (`from_definition` in
//! `compiled.rs`). Compiled parts (template, schemas, hints, A2A data) are beside the spec in
//! [`CompiledSkill`](super::CompiledSkill).

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

use crate::protocol::{LLMConfig, SkillStatus};

/// Where a skill comes from (A2E `source`): the loader's argument for a folder, the definition's
/// for a programmatic skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SkillSource {
    /// The user's own skills.
    User,
    /// Skills the host ships or registers itself.
    System,
    /// Skills of the project at hand (the CLI's `./skills`).
    Project,
}

impl SkillSource {
    /// The A2E spelling: `user`, `system` or `project`.
    pub fn as_str(self) -> &'static str {
        match self {
            SkillSource::User => "user",
            SkillSource::System => "system",
            SkillSource::Project => "project",
        }
    }
}

impl fmt::Display for SkillSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `source` that is not `user`, `system` or `project`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`source` must be `user`, `system` or `project`, found `{0}`")]
pub struct UnknownSource(pub String);

impl FromStr for SkillSource {
    type Err = UnknownSource;
    fn from_str(s: &str) -> Result<Self, UnknownSource> {
        match s {
            "user" => Ok(SkillSource::User),
            "system" => Ok(SkillSource::System),
            "project" => Ok(SkillSource::Project),
            other => Err(UnknownSource(other.to_owned())),
        }
    }
}

/// What a skill declares about itself, with the documented defaults applied (the `skill`
/// module doc's key tables). Declared tools and toolkits, as names, and the compiled schemas
/// are on [`CompiledSkill`](super::CompiledSkill).
#[derive(Debug, Clone, PartialEq)]
pub struct SkillSpec {
    /// The skill's unique name.
    pub name: String,
    /// The skill's own version string.
    pub version: String,
    /// What the skill does.
    pub description: String,
    /// Trigger phrases for auto-invocation.
    pub triggers: Vec<String>,
    /// The *declared* status (`a2e-status`); the registry's `RegisteredSkill` has the current.
    pub status: SkillStatus,
    /// The SKILL.md body as written (a programmatic skill's `instructions`, empty when none).
    pub instructions: String,
    /// The SKILL.md path (for a folder skill, always); what a programmatic definition gave.
    pub file_path: Option<String>,
    /// The skill's own model choice (never a credential: the loader refuses one).
    pub llm_config: Option<LLMConfig>,
    /// Default arguments (`a2e-arguments`), when declared.
    pub arguments: Option<Vec<String>>,
    /// When an agent should use this skill.
    pub when_to_use: String,
    /// How to build the arguments.
    pub argument_hint: String,
    /// Where the skill comes from.
    pub source: SkillSource,
    /// A grouping label, when declared.
    pub category: Option<String>,
    /// Labels discover filters on (empty: none declared).
    pub tags: Vec<String>,
    /// The most model turns one call may take; None: the host's default.
    pub max_turns: Option<u32>,
    /// The call's timeout in seconds; None: the host's default.
    pub timeout_seconds: Option<u64>,
    /// An icon for user interfaces.
    pub icon: Option<String>,
    /// The author's other metadata keys and the engine's (`license`, `a2a`, ...; see
    /// `RESERVED_METADATA_KEYS`). Empty: none.
    pub metadata: Map<String, Value>,
}
