//! Assembling a host from the command line and `skillet.toml`: configuration, skills, tools,
//! the model (a configured provider or the embedded mock) and the executor. Shared by `run`,
//! `discover`, `serve` and `card`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::args::GlobalArgs;
use super::exit::Failure;
use super::locate::{self, BaseDirs};
use skillet_sandbox::{ProcessBackend, SandboxBackend};

use crate::config::{Config, ProviderChoice, ProviderShortcuts, ToolConfig, ToolkitConfig};
use crate::embedded::EmbeddedMock;
use skillet_engine::environments::{EnvironmentState, RETRY_FIRST, SkillFolder};
use skillet_engine::files::FileSupport;
use skillet_engine::run::{CardIdentity, Executor, HostEndpoint};
use skillet_engine::sandboxed::{CommandTool, PluginHost};
use skillet_engine::skill::{self, CompiledSkill, Registry};
use skillet_engine::tools::{ToolRegistry, builtin};
use skillet_protocol::LLMConfig;
use skillet_providers::ProviderKind;
use skillet_toolkits::mcp;

pub use super::console::Console;

/// Configuration, skills and tools, before a model is chosen.
#[derive(Debug)]
pub struct HostParts {
    /// The configuration in force.
    pub config: Config,
    /// The loaded skills (dependency status resolved against `tools`).
    pub skills: Arc<Registry>,
    /// Built-in tools (and, later, configured ones).
    pub tools: Arc<ToolRegistry>,
    /// The provider choice from config and shortcuts.
    pub choice: ProviderChoice,
    /// What skill runs may touch (`[skills.*]`): workspaces, scripts with their resolved
    /// interpreters and Python environments.
    pub files: FileSupport,
}

/// Loads the configuration the global options name, else the first file found where
/// `locate` looks (logged at `-v`).
pub fn load_config(global: &GlobalArgs) -> Result<Config, Failure> {
    let file = locate::config_file(global.config.as_deref(), &BaseDirs::from_env());
    tracing::info!("config: {file}");
    match file.path() {
        Some(path) => Config::load(path).map_err(Failure::setup),
        None => Ok(Config::default()),
    }
}

/// The skill roots in force: `--skills-dir`, else the config's, else `./skills` or the user's
/// (`locate`); and whether they were named explicitly (a missing explicit root is an error, a
/// missing default is not).
pub fn skill_roots(global: &GlobalArgs, config: &Config) -> (Vec<PathBuf>, bool) {
    if !global.skills_dirs.is_empty() {
        (global.skills_dirs.clone(), true)
    } else if !config.skills_dirs.is_empty() {
        (config.skills_dirs.clone(), true)
    } else {
        let root = locate::default_skills_dir(&BaseDirs::from_env());
        tracing::info!("skills: {}", root.display());
        (vec![root], false)
    }
}

/// Loads configuration, skills and tools, starts the configured toolkits and plugins (their
/// failures are warnings: skills that need them show as `Blocked`); `extra_skill` (a skill
/// folder named on the command line) replaces the skill roots.
pub async fn load_parts(
    global: &GlobalArgs,
    console: Console,
    extra_skill: Option<CompiledSkill>,
) -> Result<HostParts, Failure> {
    let config = load_config(global)?;
    let shortcuts = ProviderShortcuts {
        provider: global.provider.clone(),
        model: global.model(),
        base_url: global.base_url.clone(),
    };
    let choice = ProviderChoice::resolve_listing_models(&config, &shortcuts)
        .await
        .map_err(Failure::setup)?;
    redact_configured_secrets(&config, &choice);
    // Before the skills load: the platform probe forks, and a fork is cheaper while the
    // process is small (a fork copies the page tables of every skill loaded).
    let backend: Arc<dyn SandboxBackend> = Arc::new(ProcessBackend::new());
    let skills = Arc::new(Registry::new());
    if let Some(skill) = extra_skill {
        skills.register(skill).map_err(Failure::setup)?;
    } else {
        let (roots, explicit) = skill_roots(global, &config);
        for root in roots {
            load_root(&skills, &root, explicit, console)?;
        }
    }
    if !config.tools.is_empty() || !config.plugins.is_empty() || config.skills.scripts.enabled {
        // What isolation the sandboxed programs actually get on this machine.
        tracing::info!("{}", backend.platform_report());
    }
    let tools = Arc::new(tool_registry(&config, &backend)?);
    for failure in tools.start_toolkits().await {
        console.warn(failure);
    }
    for (name, plugin) in &config.plugins {
        match PluginHost::start(name.clone(), plugin.clone(), Arc::clone(&backend)).await {
            Ok(host) => {
                for refused in host.register_into(&skills) {
                    console.warn(format!("plugins.{name}: {refused}"));
                }
            }
            Err(e) => console.warn(format!("plugins.{name}: {e}")),
        }
    }
    let files = FileSupport::new(config.skills.clone());
    judge_skills(&skills, &tools, &config, &choice, &files);
    Ok(HostParts {
        config,
        skills,
        tools,
        choice,
        files,
    })
}

/// Judges freshly registered `skills` against the host: the tools and toolkits they need,
/// `[skill_provider]` on their own provider settings, their script environments and system
/// tools. At start-up, and on each hot reload (`watch`) before the reloaded skills are served.
pub fn judge_skills(
    skills: &Registry,
    tools: &ToolRegistry,
    config: &Config,
    choice: &ProviderChoice,
    files: &FileSupport,
) {
    skills.resolve_dependencies(&|t| tools.has_tool(t), &|k| {
        tools.toolkit_status(k).is_some_and(|s| s.is_usable())
    });
    judge_skill_providers(skills, config, choice);
    judge_environments(skills, files);
}

/// Marks the skills whose Python environment cannot be built `Blocked` (a refused
/// declaration, no uv, no usable interpreter, or a build that failed in this process), and
/// those whose scripts need a system tool the host does not offer (`a2e-system-tools`), so
/// every command shows them as a served host would. Only when scripts are enabled: otherwise
/// no environment is ever needed.
pub fn judge_environments(skills: &Registry, files: &FileSupport) {
    if !files.scripts_enabled() {
        return;
    }
    let tools = files.system_tools();
    skills.resolve_system_tools(&|skill| tools.missing_for(&skill.system_tools));
    let environments = files.environments();
    skills.resolve_environments(&|skill| {
        if !skill.resources.has_scripts() {
            return None;
        }
        environments
            .states(&SkillFolder::of(skill))
            .into_iter()
            .find_map(|state| match state {
                EnvironmentState::Failed(why) => Some(why.to_string()),
                _ => None,
            })
    });
}

/// Builds every environment a loaded skill needs and does not have yet (at `serve` start,
/// before the first call), one line each on stderr; a failed build makes its skill `Blocked`.
pub async fn prepare_environments(parts: &HostParts, console: Console) {
    prepare_missing_environments(&parts.skills, &parts.files, console).await;
}

/// While `serve` runs: every [`RETRY_FIRST`], when a skill is `Blocked` by an environment
/// build that failed, builds the ones whose failure is due again (a package index that was
/// down) and re-judges, so the skill comes back without a restart.
pub fn retry_failed_environments(parts: &HostParts, console: Console) {
    if !parts.files.scripts_enabled() {
        return;
    }
    let (skills, files) = (Arc::clone(&parts.skills), parts.files.clone());
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(RETRY_FIRST).await;
            let blocked = skills
                .skills()
                .iter()
                .any(|s| s.blockers.environment_failed.is_some());
            if blocked {
                prepare_missing_environments(&skills, &files, console).await;
            }
        }
    });
}

/// Builds the environments the skills of `skills` need and do not have yet, then re-judges.
pub(crate) async fn prepare_missing_environments(
    skills: &Registry,
    files: &FileSupport,
    console: Console,
) {
    if !files.scripts_enabled() {
        return;
    }
    let environments = files.environments();
    for skill in skills.skills() {
        if !skill.compiled.resources.has_scripts() {
            continue;
        }
        let folder = SkillFolder::of(&skill.compiled);
        for state in environments.states(&folder) {
            let EnvironmentState::NotBuilt { kind, .. } = state else {
                continue;
            };
            let name = skill.compiled.name().to_owned();
            let on_build = |requirements: &skillet_engine::environments::Requirements| {
                console.notice(kind.build_notice(&name, requirements));
            };
            let built = environments.prepare_kind(kind, &folder, &on_build).await;
            if let Err(why) = built {
                console.warn(format!("skill `{name}` is Blocked: environment: {why}"));
            }
        }
    }
    judge_environments(skills, files);
}

/// Registers every secret the configuration names (`Config::register_secrets`) and the chosen
/// provider's key with the process's redactor, so no log line, event or status can print them.
fn redact_configured_secrets(config: &Config, choice: &ProviderChoice) {
    let redactor = &*super::logging::REDACTOR;
    config.register_secrets(redactor);
    if let ProviderChoice::Real { config, .. } = choice
        && let Some(var) = config.provider_credentials.get("api_key_env")
    {
        redactor.add_env(secrecy::ExposeSecret::expose_secret(var));
    }
}

/// Marks the skills whose own provider settings `[skill_provider]` does not allow `Blocked`,
/// judged against the chosen provider (the embedded mock is an `openai-compatible` endpoint), so
/// every command (`discover`, `card`, ...) shows them as a served host would. Building the
/// executor judges again against the running model.
fn judge_skill_providers(skills: &Registry, config: &Config, choice: &ProviderChoice) {
    let host = match choice {
        ProviderChoice::Real { config, .. } => HostEndpoint::of_config(config),
        ProviderChoice::EmbeddedMock { .. } => {
            Some(HostEndpoint::default_for(ProviderKind::OpenaiCompatible))
        }
    };
    skills.resolve_providers(&|skill| {
        let llm_config = skill.spec.llm_config.as_ref()?;
        let denial = config
            .skill_provider
            .admit(llm_config, host.as_ref())
            .err()?;
        Some(format!("provider: {denial}"))
    });
}

fn load_root(
    skills: &Registry,
    root: &Path,
    explicit: bool,
    console: Console,
) -> Result<(), Failure> {
    if !root.is_dir() {
        if explicit {
            return Err(Failure::setup(format!(
                "{}: not a directory of skills",
                root.display()
            )));
        }
        console.warn(format!(
            "{}: no skills directory here (nor in the user data directory, \
             $XDG_DATA_HOME/skillet/skills); use --skills-dir DIR",
            root.display()
        ));
        return Ok(());
    }
    let report = skill::load_skills_root(root, skill::SkillSource::Project);
    for problem in &report.errors {
        console.warn(format!("skipped: {problem}"));
    }
    for refused in skills.register_all(report.skills) {
        console.warn(refused);
    }
    Ok(())
}

/// The tools the binary offers: the built-ins, the configured command tools (sandboxed) and
/// MCP toolkits (not started yet).
fn tool_registry(
    config: &Config,
    backend: &Arc<dyn SandboxBackend>,
) -> Result<ToolRegistry, Failure> {
    let mut tools = ToolRegistry::new();
    for tool in builtin::all() {
        tools.register_tool(tool).map_err(Failure::setup)?;
    }
    for (name, tool) in &config.tools {
        let ToolConfig::Command(command) = tool;
        let tool = CommandTool::new(name.clone(), command.clone(), Arc::clone(backend))
            .map_err(|e| Failure::setup(format!("{}: tools.{name}: {e}", config.origin())))?;
        tools
            .register_tool(Arc::new(tool))
            .map_err(|e| Failure::setup(format!("{}: tools.{name}: {e}", config.origin())))?;
    }
    for (name, toolkit) in &config.toolkits {
        let ToolkitConfig::Mcp(mcp) = toolkit;
        tools
            .register_toolkit(mcp::build(name, mcp.clone()))
            .map_err(|e| Failure::setup(format!("{}: toolkits.{name}: {e}", config.origin())))?;
    }
    Ok(tools)
}

/// The running model: a configured provider's `LLMConfig`, or the embedded mock (kept alive by
/// the returned handle, accepting what `[server] max_message_bytes` lets in) with
/// `scenario_files` unless the configuration names its own scenario.
pub async fn start_model(
    parts: &HostParts,
    scenario_files: Vec<PathBuf>,
) -> Result<(LLMConfig, Option<EmbeddedMock>), Failure> {
    let choice = &parts.choice;
    match choice {
        ProviderChoice::Real { config, .. } => Ok((config.clone(), None)),
        ProviderChoice::EmbeddedMock { scenario, .. } => {
            let files = match scenario {
                Some(file) => vec![file.clone()],
                None => scenario_files,
            };
            let max_message_bytes = parts.config.server.max_message_bytes;
            let mock = EmbeddedMock::start(files, max_message_bytes)
                .await
                .map_err(Failure::setup)?;
            Ok((mock.llm_config(), Some(mock)))
        }
    }
}

/// The model a server runs on: [`start_model`] with every loaded skill's `mock-scenario.yaml`
/// (used only by the embedded mock), warning on stderr when it is the mock.
pub async fn start_serving_model(
    parts: &HostParts,
    console: Console,
) -> Result<(LLMConfig, Option<EmbeddedMock>), Failure> {
    let scenarios: Vec<PathBuf> = parts
        .skills
        .skills()
        .iter()
        .filter_map(|s| {
            s.compiled
                .dir
                .as_deref()
                .and_then(crate::embedded::scenario_in)
        })
        .collect();
    let (default, mock) = start_model(parts, scenarios).await?;
    if let Some(mock) = &mock {
        console.warn(mock.notice());
    }
    Ok((default, mock))
}

/// Builds the executor over `parts` with `default` as the host's model.
pub fn build_executor(
    parts: &HostParts,
    default: Option<LLMConfig>,
    identity: CardIdentity,
) -> Result<Executor, Failure> {
    executor_builder(parts, default, identity)
        .build()
        .map_err(Failure::setup)
}

/// The builder [`build_executor`] builds, for a command that adds to it (a checkpoint store).
pub fn executor_builder(
    parts: &HostParts,
    default: Option<LLMConfig>,
    identity: CardIdentity,
) -> skillet_engine::run::ExecutorBuilder {
    let mut builder = Executor::builder()
        .skills(Arc::clone(&parts.skills))
        .tools(Arc::clone(&parts.tools))
        .limits(parts.config.limits.clone())
        .files(parts.files.clone())
        .card_identity(identity)
        .pricing(parts.config.pricing.clone())
        .capture_content(parts.config.telemetry.capture_content)
        .reasoning_events(parts.config.telemetry.reasoning_events)
        .approvals(parts.config.approval_policy());
    if let Some(policy) = &parts.config.llm_override {
        builder = builder.override_policy(policy.clone());
    }
    builder = builder.skill_provider_policy(parts.config.skill_provider.clone());
    if let Some(default) = default {
        builder = builder.default_llm(default);
        if let ProviderChoice::Real { name, .. } = &parts.choice {
            for (fallback, config) in parts.config.fallbacks_of(name) {
                builder = builder.fallback_llm(fallback, config);
            }
        }
    }
    builder
}
