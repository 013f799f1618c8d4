//! [`Registry`]: the skills a host serves — manifest skills and programmatic (native handler)
//! skills — with lookup, discover filtering and dependency resolution.
//!
//! Reads vastly outnumber writes (every call looks a skill up; registration happens at start-up
//! and on reload), so the registry holds an immutable snapshot behind `RwLock<Arc<…>>`: a read
//! clones the `Arc` under a lock held for nanoseconds and never across an `.await`; a write
//! builds a new snapshot and swaps it in. A [`RegisteredSkill`] handed out stays valid (and
//! unchanged) even if the registry changes afterwards.
//!
//! Status: a skill's *declared* status (`a2e-status`, default `Published`) is what it has until
//! [`Registry::resolve_dependencies`] runs. That call marks every declared-`Published` skill with
//! a missing tool or toolkit `Blocked` and records, in its advertised
//! `SkillDefinition.metadata`:
//! - `blocked_reason`: text, e.g. `missing tools: calculator; missing toolkits: github`
//! - `missing_tools` / `missing_toolkits`: arrays of names (present only when non-empty)
//!
//! and puts it back to `Published` (removing those keys) once everything is available. `Created`
//! and `Archived` skills keep their status. Call it again after registering tools, toolkits or
//! skills.
//!
//! [`Registry::resolve_providers`] does the same for the host's verdict on each manifest skill's
//! own provider settings (the executor runs it when it is built with a host default; the CLI
//! also runs it right after loading): a skill asking for an endpoint
//! or setting the host does not allow is `Blocked` with `provider_denied` (the reason) in its
//! metadata and `provider: REASON` in `blocked_reason`. The verdict is kept across later
//! dependency resolutions.
//!
//! [`Registry::resolve_environments`] likewise for a skill whose script environment (its Python
//! requirements, built with `uv`: `crate::environments`) failed to build: `Blocked` with
//! `environment_failed` (uv's message) in its metadata and `environment: REASON` in
//! `blocked_reason`, kept across the other resolutions.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use serde_json::{Value, json};

use super::compiled::CompiledSkill;
use super::error::ManifestError;
use crate::handler::SkillHandler;
use crate::protocol::{SkillDefinition, SkillStatus};

/// How a registered skill runs.
#[derive(Clone)]
pub enum Implementation {
    /// The SKILL.md instructions run by the LLM loop.
    Manifest,
    /// A Rust-native handler.
    Native(Arc<dyn SkillHandler>),
}

impl std::fmt::Debug for Implementation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Implementation::Manifest => f.write_str("Manifest"),
            Implementation::Native(_) => f.write_str("Native(..)"),
        }
    }
}

/// A skill as the registry serves it: the compiled skill, how it runs, and its current status.
/// Derefs to [`CompiledSkill`].
#[derive(Debug, Clone)]
pub struct RegisteredSkill {
    /// The compiled skill (immutable, shared between snapshots).
    pub compiled: Arc<CompiledSkill>,
    /// How it runs.
    pub implementation: Implementation,
    /// Current status (declared, or `Blocked` by dependency resolution).
    pub status: SkillStatus,
    /// Declared tools that were missing at the last resolution.
    pub missing_tools: Vec<String>,
    /// Declared toolkits that were missing at the last resolution.
    pub missing_toolkits: Vec<String>,
    /// Why the host does not allow the skill's own provider settings (`Some`: `Blocked`).
    pub provider_denied: Option<String>,
    /// Why the skill's script environment could not be built (`Some`: `Blocked`).
    pub environment_failed: Option<String>,
    /// The definition as advertised by discover: current status and blocked metadata applied.
    pub advertised: SkillDefinition,
}

impl std::ops::Deref for RegisteredSkill {
    type Target = CompiledSkill;
    fn deref(&self) -> &CompiledSkill {
        &self.compiled
    }
}

impl RegisteredSkill {
    fn new(compiled: Arc<CompiledSkill>, implementation: Implementation) -> Self {
        RegisteredSkill {
            status: compiled.definition.status,
            advertised: compiled.definition.clone(),
            compiled,
            implementation,
            missing_tools: Vec::new(),
            missing_toolkits: Vec::new(),
            provider_denied: None,
            environment_failed: None,
        }
    }

    /// Whether a call may run this skill now (status `Published`).
    pub fn is_runnable(&self) -> bool {
        self.status == SkillStatus::Published
    }

    fn with_missing(
        self: &Arc<Self>,
        tools: Vec<String>,
        toolkits: Vec<String>,
    ) -> Arc<RegisteredSkill> {
        self.with_blockers(
            tools,
            toolkits,
            self.provider_denied.clone(),
            self.environment_failed.clone(),
        )
    }

    /// This skill with these blockers: `self` again (shared, not copied) when they change
    /// nothing, as for most skills on most resolutions.
    fn with_blockers(
        self: &Arc<Self>,
        tools: Vec<String>,
        toolkits: Vec<String>,
        provider_denied: Option<String>,
        environment_failed: Option<String>,
    ) -> Arc<RegisteredSkill> {
        let declared = self.compiled.definition.status;
        let blocked = declared == SkillStatus::Published
            && !(tools.is_empty()
                && toolkits.is_empty()
                && provider_denied.is_none()
                && environment_failed.is_none());
        let status = if blocked {
            SkillStatus::Blocked
        } else {
            declared
        };
        let (tools, toolkits) = if blocked {
            (tools, toolkits)
        } else {
            (Vec::new(), Vec::new())
        };
        if status == self.status
            && tools == self.missing_tools
            && toolkits == self.missing_toolkits
            && provider_denied == self.provider_denied
            && environment_failed == self.environment_failed
        {
            return Arc::clone(self);
        }
        let mut advertised = self.compiled.definition.clone();
        advertised.status = status;
        if blocked {
            let metadata = advertised.metadata.get_or_insert_with(Default::default);
            let mut reasons = Vec::new();
            if !tools.is_empty() {
                reasons.push(format!("missing tools: {}", tools.join(", ")));
                metadata.insert("missing_tools".to_owned(), json!(tools));
            }
            if !toolkits.is_empty() {
                reasons.push(format!("missing toolkits: {}", toolkits.join(", ")));
                metadata.insert("missing_toolkits".to_owned(), json!(toolkits));
            }
            if let Some(denied) = &provider_denied {
                reasons.push(denied.clone());
                metadata.insert("provider_denied".to_owned(), json!(denied));
            }
            if let Some(failed) = &environment_failed {
                reasons.push(format!("environment: {failed}"));
                metadata.insert("environment_failed".to_owned(), json!(failed));
            }
            metadata.insert(
                "blocked_reason".to_owned(),
                Value::String(reasons.join("; ")),
            );
        }
        Arc::new(RegisteredSkill {
            compiled: self.compiled.clone(),
            implementation: self.implementation.clone(),
            status,
            missing_tools: tools,
            missing_toolkits: toolkits,
            provider_denied,
            environment_failed,
            advertised,
        })
    }
}

/// Why a registration was refused.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RegistryError {
    /// A skill with this name is already registered; nothing was replaced.
    #[error(
        "duplicate skill name `{name}`: already registered from {existing}, refused from {refused}"
    )]
    Duplicate {
        /// The contested name.
        name: String,
        /// Where the registered one came from (SKILL.md path or `native`).
        existing: String,
        /// Where the refused one came from.
        refused: String,
    },
    /// A programmatic definition did not compile (bad schema, bad dependency entry, empty name).
    #[error("invalid skill definition: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<ManifestError>),
}

type Snapshot = BTreeMap<String, Arc<RegisteredSkill>>;

/// The skills a host serves. Cheap to read from many tasks at once; see the module doc.
#[derive(Debug, Default)]
pub struct Registry {
    snapshot: RwLock<Arc<Snapshot>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Registers a loaded manifest skill.
    pub fn register(&self, skill: CompiledSkill) -> Result<(), RegistryError> {
        self.insert(Arc::new(skill), Implementation::Manifest)
    }

    /// Registers every loaded skill; returns the refusals (duplicates), in order. The skills
    /// go into one new snapshot (one copy of the map, however many skills).
    pub fn register_all(
        &self,
        skills: impl IntoIterator<Item = CompiledSkill>,
    ) -> Vec<RegistryError> {
        let mut guard = self.snapshot.write().unwrap_or_else(|e| e.into_inner());
        let mut next = Snapshot::clone(&guard);
        let refused = skills
            .into_iter()
            .filter_map(|skill| add_to(&mut next, Arc::new(skill), Implementation::Manifest).err())
            .collect();
        *guard = Arc::new(next);
        refused
    }

    /// Registers a programmatic skill: `definition` describes it (its schemas are compiled here)
    /// and `handler` runs it.
    pub fn register_native(
        &self,
        definition: SkillDefinition,
        handler: Arc<dyn SkillHandler>,
    ) -> Result<(), RegistryError> {
        let compiled =
            CompiledSkill::from_definition(definition).map_err(RegistryError::Invalid)?;
        self.insert(Arc::new(compiled), Implementation::Native(handler))
    }

    fn insert(
        &self,
        skill: Arc<CompiledSkill>,
        implementation: Implementation,
    ) -> Result<(), RegistryError> {
        let mut guard = self.snapshot.write().unwrap_or_else(|e| e.into_inner());
        let mut next = Snapshot::clone(&guard);
        add_to(&mut next, skill, implementation)?;
        *guard = Arc::new(next);
        Ok(())
    }

    fn current(&self) -> Arc<Snapshot> {
        self.snapshot
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The skill registered under `name`.
    pub fn get(&self, name: &str) -> Option<Arc<RegisteredSkill>> {
        self.current().get(name).cloned()
    }

    /// Every registered skill, sorted by name.
    pub fn skills(&self) -> Vec<Arc<RegisteredSkill>> {
        self.current().values().cloned().collect()
    }

    /// Number of registered skills.
    pub fn len(&self) -> usize {
        self.current().len()
    }

    /// Whether no skill is registered.
    pub fn is_empty(&self) -> bool {
        self.current().is_empty()
    }

    /// The advertised definitions matching the filters, sorted by name (all statuses: a client
    /// sees `Blocked` skills and why).
    ///
    /// - `filter_tags`: a skill matches if it has **any** of the tags (OR); empty = no filter.
    /// - `filter_categories`: a skill matches if its category is one of them; empty = no filter.
    /// - Both filters must match. Comparisons ignore ASCII case.
    pub fn discover(
        &self,
        filter_tags: &[String],
        filter_categories: &[String],
    ) -> Vec<SkillDefinition> {
        let eq = |a: &str, b: &String| a.eq_ignore_ascii_case(b);
        self.current()
            .values()
            .filter(|s| {
                let def = &s.advertised;
                let tags_ok = filter_tags.is_empty()
                    || def
                        .tags
                        .iter()
                        .flatten()
                        .any(|t| filter_tags.iter().any(|f| eq(t, f)));
                let category_ok = filter_categories.is_empty()
                    || def
                        .category
                        .as_deref()
                        .is_some_and(|c| filter_categories.iter().any(|f| eq(c, f)));
                tags_ok && category_ok
            })
            .map(|s| s.advertised.clone())
            .collect()
    }

    /// Re-computes every skill's status against the tools and toolkits the host has (see the
    /// module doc for what a client sees).
    pub fn resolve_dependencies(
        &self,
        tool_available: &dyn Fn(&str) -> bool,
        toolkit_available: &dyn Fn(&str) -> bool,
    ) {
        // The availability callbacks are host code: never call them under our lock (they may
        // read the registry). Compute from a snapshot, then swap it in only if nothing was
        // registered meanwhile; otherwise recompute.
        loop {
            let base = self.current();
            let next: Snapshot = base
                .iter()
                .map(|(name, skill)| {
                    let missing_tools: Vec<String> = skill
                        .tools
                        .iter()
                        .filter(|t| !tool_available(t))
                        .cloned()
                        .collect();
                    let missing_toolkits: Vec<String> = skill
                        .toolkits
                        .iter()
                        .filter(|t| !toolkit_available(t))
                        .cloned()
                        .collect();
                    (
                        name.clone(),
                        skill.with_missing(missing_tools, missing_toolkits),
                    )
                })
                .collect();
            let mut guard = self.snapshot.write().unwrap_or_else(|e| e.into_inner());
            if Arc::ptr_eq(&guard, &base) {
                *guard = Arc::new(next);
                return;
            }
        }
    }
}

impl Registry {
    /// Re-computes every manifest skill's provider verdict: `denied` answers why the host does
    /// not allow a skill's own provider settings (`None`: allowed). Programmatic skills are the
    /// host's own code and are not judged. Missing tools and toolkits are kept as they are.
    pub fn resolve_providers(&self, denied: &dyn Fn(&CompiledSkill) -> Option<String>) {
        // Same discipline as `resolve_dependencies`: never call host code under our lock.
        loop {
            let base = self.current();
            let next: Snapshot = base
                .iter()
                .map(|(name, skill)| {
                    let verdict = match skill.implementation {
                        Implementation::Manifest => denied(&skill.compiled),
                        Implementation::Native(_) => None,
                    };
                    let tools = skill.missing_tools.clone();
                    let toolkits = skill.missing_toolkits.clone();
                    let environment = skill.environment_failed.clone();
                    let next = skill.with_blockers(tools, toolkits, verdict, environment);
                    (name.clone(), next)
                })
                .collect();
            let mut guard = self.snapshot.write().unwrap_or_else(|e| e.into_inner());
            if Arc::ptr_eq(&guard, &base) {
                *guard = Arc::new(next);
                return;
            }
        }
    }
}

impl Registry {
    /// Re-computes every manifest skill's environment verdict: `failed` answers why a skill's
    /// script environment could not be built (`None`: built, or none needed). Everything else
    /// is kept as it is.
    pub fn resolve_environments(&self, failed: &dyn Fn(&CompiledSkill) -> Option<String>) {
        // Same discipline as `resolve_dependencies`: never call host code under our lock.
        loop {
            let base = self.current();
            let next: Snapshot = base
                .iter()
                .map(|(name, skill)| {
                    let verdict = match skill.implementation {
                        Implementation::Manifest => failed(&skill.compiled),
                        Implementation::Native(_) => None,
                    };
                    let next = skill.with_blockers(
                        skill.missing_tools.clone(),
                        skill.missing_toolkits.clone(),
                        skill.provider_denied.clone(),
                        verdict,
                    );
                    (name.clone(), next)
                })
                .collect();
            let mut guard = self.snapshot.write().unwrap_or_else(|e| e.into_inner());
            if Arc::ptr_eq(&guard, &base) {
                *guard = Arc::new(next);
                return;
            }
        }
    }
}

/// Adds `skill` to `snapshot` unless its name is taken.
fn add_to(
    snapshot: &mut Snapshot,
    skill: Arc<CompiledSkill>,
    implementation: Implementation,
) -> Result<(), RegistryError> {
    let name = skill.name().to_owned();
    if let Some(existing) = snapshot.get(&name) {
        return Err(RegistryError::Duplicate {
            name,
            existing: origin(&existing.compiled),
            refused: origin(&skill),
        });
    }
    snapshot.insert(name, Arc::new(RegisteredSkill::new(skill, implementation)));
    Ok(())
}

fn origin(skill: &CompiledSkill) -> String {
    match (&skill.definition.file_path, &skill.dir) {
        (Some(path), Some(_)) => path.clone(),
        _ => "native".to_owned(),
    }
}
