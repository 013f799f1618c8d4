//! [`SkilletBuilder`]: skills (directories, or SKILL.md texts held in memory), the Rust output
//! types of skills without an output schema, providers (from the environment, a spec, the
//! caller's own [`Provider`]s by name, or a scripted [`MockModel`]), tools and limits → a
//! [`Skillet`], or a [`BuildError`] that lists every problem (each skill's, with its file)
//! instead of dropping any.

use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde_json::Value;
use skillet_providers::{EnvError, OverridePolicy, Provider, ProviderPool, ProviderSpec};

use super::env_provider::{DefaultModel, EnvLookup};
use super::mock::{MOCK_PROVIDER, MockModel};
use super::skillet::Skillet;
use super::typed_schema::output_schema_for;
use crate::run::{Executor, Limits, ProviderRegistry, ProviderRegistryError, SkillProviderPolicy};
use crate::schema::CompiledSchema;
use crate::skill::{
    CompiledSkill, ManifestError, Registry, RegistryError, SkillMd, SkillSource, load_skills_root,
};
use crate::tools::{self, Tool, ToolRegistry, Toolkit};

/// Why a [`Skillet`] could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Skills did not load: every problem, each with its file (and line when known).
    #[error("{} problem{} loading skills:\n{}", problems.len(), if problems.len() == 1 { "" } else { "s" }, lines(problems))]
    Skills {
        /// Every problem (the errors, and the warnings of the skills that failed).
        problems: Vec<ManifestError>,
    },
    /// The environment names no usable provider.
    #[error("provider from the environment: {0}")]
    Env(#[from] EnvError),
    /// The default provider is unusable (a bad spec, an unregistered name).
    #[error("{0}")]
    DefaultProvider(String),
    /// A provider could not be registered under its name.
    #[error(transparent)]
    Provider(#[from] ProviderRegistryError),
    /// A tool or toolkit could not be registered (a duplicate name).
    #[error(transparent)]
    Tool(#[from] tools::RegistryError),
}

fn lines(problems: &[ManifestError]) -> String {
    problems
        .iter()
        .map(|p| format!("  {p}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Configures a [`Skillet`]; start with [`Skillet::builder`]. Everything is optional; without
/// a default provider every skill must name its own.
#[must_use]
pub struct SkilletBuilder {
    skill_dirs: Vec<PathBuf>,
    inline_skills: Vec<SkillMd>,
    /// Skill name → the output schema derived from its Rust output type.
    output_types: Vec<(String, Value)>,
    default: DefaultModel,
    default_model: Option<String>,
    providers: ProviderRegistry,
    tools: ToolRegistry,
    builtin_tools: bool,
    /// The first registration that failed, reported by `build`.
    problem: Option<BuildError>,
    limits: Limits,
    override_policy: OverridePolicy,
    skill_policy: SkillProviderPolicy,
    pool: Option<Arc<ProviderPool>>,
    approvals: crate::run::ApprovalPolicy,
}

impl Default for SkilletBuilder {
    fn default() -> Self {
        SkilletBuilder {
            skill_dirs: Vec::new(),
            inline_skills: Vec::new(),
            output_types: Vec::new(),
            default: DefaultModel::None,
            default_model: None,
            providers: ProviderRegistry::new(),
            tools: ToolRegistry::new(),
            builtin_tools: false,
            problem: None,
            limits: Limits::default(),
            override_policy: OverridePolicy::default(),
            skill_policy: SkillProviderPolicy::default(),
            pool: None,
            approvals: crate::run::ApprovalPolicy::default(),
        }
    }
}

impl std::fmt::Debug for SkilletBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkilletBuilder")
            .field("skill_dirs", &self.skill_dirs)
            .field("inline_skills", &self.inline_skills.len())
            .field("providers", &self.providers)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl SkilletBuilder {
    /// Loads every skill folder (`<dir>/<name>/SKILL.md`) under `dir`; call it once per
    /// directory. A skill that does not load fails [`Self::build`] with its problems.
    pub fn skills_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.skill_dirs.push(dir.into());
        self
    }

    /// Adds a skill defined in memory from its SKILL.md text (frontmatter and body), so a skill
    /// needs no folder on disk; its name is its frontmatter `name`. The text is checked as a
    /// folder's SKILL.md is (same size cap, parser and key rules); a problem fails
    /// [`Self::build`]. For schemas as values, use [`Self::skill`].
    pub fn skill_md(self, text: impl Into<String>) -> Self {
        self.skill(SkillMd::new(text))
    }

    /// Adds a skill defined in memory, with its schemas as values:
    /// `SkillMd::new(text).input_schema(json!(...))` (see [`SkillMd`]).
    pub fn skill(mut self, skill: SkillMd) -> Self {
        self.inline_skills.push(skill);
        self
    }

    /// Skill `name` answers in `T`: when the skill declares no output schema, its output schema
    /// is derived from `T` ([`output_schema_for`](super::output_schema_for)), so the model's
    /// answer is validated and repaired until it decodes as `T` and
    /// [`Skillet::run_typed`] returns one — one Rust type, no schema file. A skill that has an
    /// output schema keeps it. An unknown `name` fails [`Self::build`].
    pub fn output_type<T: JsonSchema>(mut self, name: impl Into<String>) -> Self {
        self.output_types
            .push((name.into(), output_schema_for::<T>()));
        self
    }

    /// The default model is `model`, a scripted model for offline tests: each turn takes its
    /// next answer, and a clone of it shows what the model was sent ([`MockModel`]). Registered
    /// as the provider `mock-model`.
    pub fn mock(self, model: MockModel) -> Self {
        self.provider(MOCK_PROVIDER, Arc::new(model))
            .default_provider(MOCK_PROVIDER)
    }

    /// The default model comes from the environment: `OPENAI_API_KEY`/`OPENAI_BASE_URL`,
    /// `ANTHROPIC_API_KEY`/`ANTHROPIC_BASE_URL`, `OLLAMA_HOST`, with `SKILLET_PROVIDER` to choose
    /// among several and `SKILLET_MODEL` for the model (else [`Self::default_model`]). Read at
    /// [`Self::build`]; see [`skillet_providers::EnvProvider`] for the exact rules.
    pub fn provider_from_env(mut self) -> Self {
        self.default = DefaultModel::Env(None);
        self
    }

    /// Like [`Self::provider_from_env`], reading the variables through `lookup` instead of the
    /// process environment (for hosts with their own configuration source, and tests).
    pub fn provider_from_vars(
        mut self,
        lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        let lookup: EnvLookup = Arc::new(lookup);
        self.default = DefaultModel::Env(Some(lookup));
        self
    }

    /// The model of the environment's provider when `SKILLET_MODEL` is unset.
    pub fn default_model(mut self, model: impl Into<String>) -> Self {
        self.default_model = Some(model.into());
        self
    }

    /// The default model is this spec (e.g. `ProviderSpec::new(kind, model, base_url)`).
    pub fn default_spec(mut self, spec: ProviderSpec) -> Self {
        self.default = DefaultModel::Spec(Box::new(spec));
        self
    }

    /// Registers your own provider as `name`: usable as the default
    /// ([`Self::default_provider`]), from a skill's `a2e-provider: <name>`, and from a call's
    /// override when allowed ([`Self::allow_provider_override`]). The name may not be a
    /// built-in kind's (`ollama`, `openai`, ...). See [`ProviderRegistry`].
    pub fn provider(mut self, name: impl Into<String>, provider: Arc<dyn Provider>) -> Self {
        if let Err(e) = self.providers.register(name, provider) {
            self.problem.get_or_insert(e.into());
        }
        self
    }

    /// The default model is the provider registered as `name` (with [`Self::provider`]).
    pub fn default_provider(mut self, name: impl Into<String>) -> Self {
        self.default = DefaultModel::Registered(name.into());
        self
    }

    /// Lets a call choose the provider registered as `name` ([`Call::provider`](super::Call::provider)
    /// or an `llm_override` naming it). Default: no call may.
    pub fn allow_provider_override(mut self, name: impl Into<String>) -> Self {
        self.providers.allow_override(name);
        self
    }

    /// The rules for calls' `llm_override`s naming built-in kinds (default: deny all).
    pub fn override_policy(mut self, policy: OverridePolicy) -> Self {
        self.override_policy = policy;
        self
    }

    /// What skills' own provider settings may choose (default: the model only, on the default
    /// provider).
    pub fn skill_provider_policy(mut self, policy: SkillProviderPolicy) -> Self {
        self.skill_policy = policy;
        self
    }

    /// Registers a tool skills may declare (`a2e-tools`); typed ones come from
    /// [`tool_fn`](super::tool_fn).
    pub fn tool(mut self, tool: Arc<dyn Tool>) -> Self {
        if let Err(e) = self.tools.register_tool(tool) {
            self.problem.get_or_insert(e.into());
        }
        self
    }

    /// Registers a toolkit skills may declare (`a2e-toolkits`).
    pub fn toolkit(mut self, toolkit: Arc<dyn Toolkit>) -> Self {
        if let Err(e) = self.tools.register_toolkit(toolkit) {
            self.problem.get_or_insert(e.into());
        }
        self
    }

    /// Registers the engine's small deterministic tools (`calculator`, ... see
    /// [`tools::builtin`]), which the bundled skills use.
    pub fn builtin_tools(mut self) -> Self {
        self.builtin_tools = true;
        self
    }

    /// The host's limits (turns, timeouts, event cap, ...).
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Which tool calls need a person's approval, and what a run nobody can be asked about
    /// gets (default: none is gated; see [`crate::run::ApprovalPolicy`]). A run through
    /// [`Skillet`] has nobody to ask, so its gated calls follow [`crate::run::Unasked`].
    pub fn approvals(mut self, policy: crate::run::ApprovalPolicy) -> Self {
        self.approvals = policy;
        self
    }

    /// The provider pool to share with other hosts in the process (one is made otherwise).
    pub fn provider_pool(mut self, pool: Arc<ProviderPool>) -> Self {
        self.pool = Some(pool);
        self
    }

    /// Loads the skills, registers tools and providers, resolves the default model.
    pub fn build(self) -> Result<Skillet, BuildError> {
        let SkilletBuilder {
            skill_dirs,
            inline_skills,
            output_types,
            default,
            default_model,
            providers,
            mut tools,
            builtin_tools,
            problem,
            limits,
            override_policy,
            skill_policy,
            pool,
            approvals,
        } = self;
        if let Some(problem) = problem {
            return Err(problem);
        }
        let (skills, warnings) = load(&skill_dirs, &inline_skills, &output_types)?;
        if builtin_tools {
            for tool in tools::builtin::all() {
                tools.register_tool(tool)?;
            }
        }
        let tools = Arc::new(tools);
        skills.resolve_dependencies(&|t| tools.has_tool(t), &|k| tools.toolkit(k).is_some());
        let mut builder = Executor::builder()
            .skills(Arc::new(skills))
            .tools(tools)
            .provider_registry(providers)
            .override_policy(override_policy)
            .skill_provider_policy(skill_policy)
            .limits(limits)
            .approvals(approvals);
        if let Some(pool) = pool {
            builder = builder.provider_pool(pool);
        }
        let builder = default.apply(builder, default_model.as_deref())?;
        let executor = builder.build().map_err(|e| match e {
            crate::run::BuildError::DefaultProvider(error) => {
                BuildError::DefaultProvider(error.to_string())
            }
        })?;
        Ok(Skillet::new(executor, warnings))
    }
}

/// Loads every directory and every in-memory skill into one registry, each skill with the
/// output schema of its Rust output type when it has none: the skills, or every problem.
fn load(
    dirs: &[PathBuf],
    inline: &[SkillMd],
    output_types: &[(String, Value)],
) -> Result<(Registry, Vec<ManifestError>), BuildError> {
    let registry = Registry::new();
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    let mut typed = OutputTypes::new(output_types);
    for dir in dirs {
        let mut report = load_skills_root(dir, SkillSource::Project);
        warnings.extend(report.warnings().cloned());
        problems.append(&mut report.errors);
        let paths: Vec<(String, PathBuf)> = report
            .skills
            .iter()
            .map(|s| (s.name().to_owned(), skill_md(s, dir)))
            .collect();
        typed.apply(&mut report.skills, &mut problems);
        for refused in registry.register_all(report.skills) {
            problems.push(registration_problem(&refused, &paths, dir));
        }
    }
    for skill in inline {
        let file = skill.file();
        match skill.load(SkillSource::Project) {
            Ok(compiled) => {
                warnings.extend(compiled.warnings.iter().cloned());
                let mut one = vec![compiled];
                typed.apply(&mut one, &mut problems);
                for refused in registry.register_all(one) {
                    problems.push(ManifestError::error(
                        &file,
                        "frontmatter.name",
                        refused.to_string(),
                    ));
                }
            }
            Err(found) => problems.extend(found),
        }
    }
    problems.extend(typed.unknown());
    if problems.iter().any(ManifestError::is_error) {
        return Err(BuildError::Skills { problems });
    }
    Ok((registry, warnings))
}

fn skill_md(skill: &crate::skill::CompiledSkill, dir: &std::path::Path) -> PathBuf {
    match &skill.spec.file_path {
        Some(path) => PathBuf::from(path),
        None => dir.join(skill.name()).join("SKILL.md"),
    }
}

/// A refused registration (a name loaded twice) as a problem of the refused skill's file.
fn registration_problem(
    refused: &RegistryError,
    paths: &[(String, PathBuf)],
    dir: &std::path::Path,
) -> ManifestError {
    let file = match refused {
        RegistryError::Duplicate { name, .. } => paths
            .iter()
            .find(|(n, _)| n == name)
            .map_or_else(|| dir.to_path_buf(), |(_, p)| p.clone()),
        RegistryError::Invalid(_) => dir.to_path_buf(),
    };
    ManifestError::error(&file, "frontmatter.name", refused.to_string())
}

impl Skillet {
    /// Starts configuring skills, providers and tools.
    pub fn builder() -> SkilletBuilder {
        SkilletBuilder::default()
    }
}

/// The output types the builder was given, and which of them found their skill.
struct OutputTypes<'a> {
    types: &'a [(String, Value)],
    used: Vec<bool>,
}

impl<'a> OutputTypes<'a> {
    fn new(types: &'a [(String, Value)]) -> Self {
        OutputTypes {
            types,
            used: vec![false; types.len()],
        }
    }

    /// Gives each skill without an output schema the one derived from its output type.
    fn apply(&mut self, skills: &mut [CompiledSkill], problems: &mut Vec<ManifestError>) {
        for skill in skills.iter_mut() {
            for (i, (name, schema)) in self.types.iter().enumerate() {
                if name != skill.name() {
                    continue;
                }
                self.used[i] = true;
                if skill.output_schema.is_some() {
                    continue;
                }
                match CompiledSchema::compile(schema) {
                    Ok(compiled) => skill.output_schema = Some(compiled),
                    Err(e) => problems.push(ManifestError::error(
                        std::path::Path::new(name),
                        format!("output_type#{}", e.pointer),
                        format!("the schema derived from the Rust output type: {}", e.reason),
                    )),
                }
            }
        }
    }

    /// A problem for each output type whose skill was not loaded.
    fn unknown(&self) -> Vec<ManifestError> {
        self.types
            .iter()
            .zip(&self.used)
            .filter(|(_, used)| !**used)
            .map(|((name, _), _)| {
                ManifestError::error(
                    std::path::Path::new(name),
                    "output_type",
                    format!(
                        "no skill named {name:?} was loaded: `output_type` names a skill of a \
                         skills directory or a `skill_md`"
                    ),
                )
            })
            .collect()
    }
}
