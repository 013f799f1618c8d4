//! [`Registry`]: the skills a host serves — manifest skills and programmatic (native handler)
//! skills — with lookup, discover filtering and dependency resolution.
//!
//! Reads vastly outnumber writes (every call looks a skill up; registration happens at start-up
//! and on reload, `reload`), so the registry holds an immutable snapshot behind `RwLock<Arc<…>>`: a read
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
//! `blocked_reason`, kept across the other resolutions; and [`Registry::resolve_system_tools`]
//! for the system tools its scripts need (`metadata.a2e-system-tools`) that the host does not
//! offer (`missing_system_tools`). What blocks a skill is its [`Blockers`].

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use super::blockers::Blockers;
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
#[derive(Debug, Clone)]
pub struct RegisteredSkill {
    /// The compiled skill (immutable, shared between snapshots).
    pub compiled: Arc<CompiledSkill>,
    /// How it runs.
    pub implementation: Implementation,
    /// Current status (declared, or `Blocked` by dependency resolution).
    pub status: SkillStatus,
    /// What blocked it at the last resolutions (empty unless `Blocked`).
    pub blockers: Blockers,
}

impl RegisteredSkill {
    fn new(compiled: Arc<CompiledSkill>, implementation: Implementation) -> Self {
        RegisteredSkill {
            status: compiled.spec.status,
            compiled,
            implementation,
            blockers: Blockers::default(),
        }
    }

    /// Whether a call may run this skill now (status `Published`).
    pub fn is_runnable(&self) -> bool {
        self.status == SkillStatus::Published
    }

    /// This skill with these blockers: `self` again (shared, not copied) when they change
    /// nothing, as for most skills on most resolutions. Only a declared-`Published` skill is
    /// blocked; any other keeps its declared status and no blockers.
    pub(super) fn with_blockers(self: &Arc<Self>, blockers: Blockers) -> Arc<RegisteredSkill> {
        let declared = self.compiled.spec.status;
        let blocked = declared == SkillStatus::Published && !blockers.is_empty();
        let (status, blockers) = if blocked {
            (SkillStatus::Blocked, blockers)
        } else {
            (declared, Blockers::default())
        };
        if status == self.status && blockers == self.blockers {
            return Arc::clone(self);
        }
        Arc::new(RegisteredSkill {
            compiled: self.compiled.clone(),
            implementation: self.implementation.clone(),
            status,
            blockers,
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

pub(super) type Snapshot = BTreeMap<String, Arc<RegisteredSkill>>;

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

    /// Builds the next snapshot from the current one under the write lock and swaps it in
    /// (`build` must not call host code: it runs under our lock).
    pub(super) fn swap_snapshot(&self, build: impl FnOnce(&Snapshot) -> Snapshot) {
        let mut guard = self.snapshot.write().unwrap_or_else(|e| e.into_inner());
        let next = build(&guard);
        *guard = Arc::new(next);
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

    /// The skills matching the filters as discover advertises them ([`RegisteredSkill::to_wire`]),
    /// sorted by name (all statuses: a client sees `Blocked` skills and why).
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
                let spec = &s.compiled.spec;
                let tags_ok = filter_tags.is_empty()
                    || spec
                        .tags
                        .iter()
                        .any(|t| filter_tags.iter().any(|f| eq(t, f)));
                let category_ok = filter_categories.is_empty()
                    || spec
                        .category
                        .as_deref()
                        .is_some_and(|c| filter_categories.iter().any(|f| eq(c, f)));
                tags_ok && category_ok
            })
            .map(|s| s.to_wire())
            .collect()
    }

    /// Re-computes every skill's status against the tools and toolkits the host has (see the
    /// module doc for what a client sees).
    pub fn resolve_dependencies(
        &self,
        tool_available: &dyn Fn(&str) -> bool,
        toolkit_available: &dyn Fn(&str) -> bool,
    ) {
        self.rejudge(&|skill, blockers| {
            let missing = |names: &[String], available: &dyn Fn(&str) -> bool| {
                names.iter().filter(|n| !available(n)).cloned().collect()
            };
            blockers.missing_tools = missing(&skill.compiled.tools, tool_available);
            blockers.missing_toolkits = missing(&skill.compiled.toolkits, toolkit_available);
        });
    }

    /// Re-computes every manifest skill's provider verdict: `denied` answers why the host does
    /// not allow a skill's own provider settings (`None`: allowed). Programmatic skills are the
    /// host's own code and are not judged. The other blockers are kept as they are.
    pub fn resolve_providers(&self, denied: &dyn Fn(&CompiledSkill) -> Option<String>) {
        self.rejudge_manifests(&|skill, blockers| blockers.provider_denied = denied(skill));
    }

    /// Re-computes every manifest skill's environment verdict: `failed` answers why a skill's
    /// script environment could not be built (`None`: built, or none needed). The other
    /// blockers are kept as they are.
    pub fn resolve_environments(&self, failed: &dyn Fn(&CompiledSkill) -> Option<String>) {
        self.rejudge_manifests(&|skill, blockers| blockers.environment_failed = failed(skill));
    }

    /// Re-computes every manifest skill's system-tool verdict: `missing` lists the system tools
    /// (`metadata.a2e-system-tools`) the host does not offer its scripts, each with why. The
    /// other blockers are kept as they are.
    pub fn resolve_system_tools(&self, missing: &dyn Fn(&CompiledSkill) -> Vec<String>) {
        self.rejudge_manifests(&|skill, blockers| blockers.missing_system_tools = missing(skill));
    }

    /// [`Registry::rejudge`] for manifest skills only: programmatic skills are the host's own
    /// code, and a verdict on a SKILL.md's declarations does not apply to them.
    fn rejudge_manifests(&self, judge: &dyn Fn(&CompiledSkill, &mut Blockers)) {
        self.rejudge(&|skill, blockers| {
            if matches!(skill.implementation, Implementation::Manifest) {
                judge(&skill.compiled, blockers);
            }
        });
    }

    /// Builds the next snapshot by letting `judge` update each skill's blockers, and swaps it
    /// in. `judge` may be host code: it is never called under our lock (it may read the
    /// registry). The snapshot is computed from a copy and swapped in only if nothing was
    /// registered meanwhile; otherwise it is computed again.
    fn rejudge(&self, judge: &dyn Fn(&RegisteredSkill, &mut Blockers)) {
        loop {
            let base = self.current();
            let next: Snapshot = base
                .iter()
                .map(|(name, skill)| {
                    let mut blockers = skill.blockers.clone();
                    judge(skill, &mut blockers);
                    (name.clone(), skill.with_blockers(blockers))
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

pub(super) fn origin(skill: &CompiledSkill) -> String {
    match (&skill.spec.file_path, &skill.dir) {
        (Some(path), Some(_)) => path.clone(),
        _ => "native".to_owned(),
    }
}
