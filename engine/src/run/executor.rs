//! [`Executor`] and [`ExecutorBuilder`]: the engine's implementation of
//! [`SkillService`](crate::service::SkillService), shared by every call of a host.
//!
//! An executor is an `Arc` around immutable state plus read-mostly caches (tool schemas per
//! toolkit tool, providers per skill), so cloning it is one atomic increment and thousands of
//! concurrent calls share it without a global lock on the hot path: skill lookup reads the
//! registry's snapshot, schemas and templates were compiled at load, the host default provider
//! was resolved at build.
//!
//! Not here: what a call does (`call`), the turn loop (`agent`).

use std::sync::Arc;

use async_trait::async_trait;
use skillet_providers::{OverridePolicy, ProviderPool, ProviderSpec};
use tokio_util::sync::CancellationToken;

use super::Limits;
use super::gates::PreTerminalGate;
use super::hooks::TerminalHook;
use super::provider::{HostDefault, ProviderResolver, ProviderSetupError};
use super::provider_registry::ProviderRegistry;
use super::skill_provider::SkillProviderPolicy;
use super::tool_schemas::ToolSchemaCache;
use crate::checkpoint::CheckpointStore;
use crate::events::EventSink;
use crate::files::{FileSupport, ServedFolder, SkillFolder};
use crate::protocol::{
    ErrorCode, LLMConfig, ProtocolError, SkillCallRequest, SkillCallResponse, SkillDiscoverRequest,
    SkillDiscoverResponse,
};
use crate::schema::Violation;
use crate::service::{SkillPrompt, SkillService};
use crate::skill::Registry;
use crate::skill::a2a::{AgentCard, CardError};
use crate::telemetry::Pricing;
use crate::tools::ToolRegistry;
use skillet_core::approval::{ApprovalPolicy, Approver};

/// Runs skill calls. Cheap to clone; see the module docs.
#[derive(Clone)]
pub struct Executor {
    pub(crate) inner: Arc<ExecutorInner>,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("skills", &self.inner.skills.len())
            .field("tools", &self.inner.tools)
            .field("limits", &self.inner.limits)
            .field("gates", &self.inner.gates.len())
            .field("hooks", &self.inner.hooks.len())
            .finish_non_exhaustive()
    }
}

/// The shared state behind an [`Executor`].
pub(crate) struct ExecutorInner {
    pub(crate) skills: Arc<Registry>,
    pub(crate) tools: Arc<ToolRegistry>,
    pub(crate) providers: ProviderResolver,
    pub(crate) limits: Limits,
    pub(crate) gates: Vec<Arc<dyn PreTerminalGate>>,
    pub(crate) hooks: Vec<Arc<dyn TerminalHook>>,
    pub(crate) tool_schemas: ToolSchemaCache,
    pub(crate) card: CardIdentity,
    pub(crate) files: FileSupport,
    pub(crate) pricing: Pricing,
    pub(crate) capture_content: bool,
    /// Send each turn's reasoning to the caller as a `reasoning-N` artifact.
    pub(crate) reasoning_events: bool,
    pub(crate) approvals: ApprovalPolicy,
    pub(crate) checkpoints: Option<Arc<dyn CheckpointStore>>,
}

/// How the host presents itself in its A2A Agent Card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardIdentity {
    /// Agent name.
    pub name: String,
    /// Agent description.
    pub description: String,
    /// Agent version.
    pub version: String,
    /// URL the agent is served at.
    pub url: String,
}

impl Default for CardIdentity {
    fn default() -> Self {
        CardIdentity {
            name: "skillet".to_owned(),
            description: "Skillet skill host".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            url: "http://127.0.0.1/".to_owned(),
        }
    }
}

/// Why an executor could not be built.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BuildError {
    /// The host default LLM config or a fallback is unusable (names the key, never a secret).
    #[error(transparent)]
    DefaultProvider(ProviderSetupError),
}

/// Configures an [`Executor`]. Everything is optional: an empty skill and tool registry, a new
/// provider pool, no host default model, an override policy that denies everything, a skill
/// provider policy that lets skills choose only the model, default [`Limits`], no gates, no
/// hooks.
#[derive(Default)]
pub struct ExecutorBuilder {
    skills: Option<Arc<Registry>>,
    tools: Option<Arc<ToolRegistry>>,
    pool: Option<Arc<ProviderPool>>,
    default: Option<HostDefault>,
    fallbacks: Vec<(String, LLMConfig)>,
    registered: ProviderRegistry,
    policy: OverridePolicy,
    skill_policy: SkillProviderPolicy,
    limits: Limits,
    gates: Vec<Arc<dyn PreTerminalGate>>,
    hooks: Vec<Arc<dyn TerminalHook>>,
    card: CardIdentity,
    files: FileSupport,
    pricing: Pricing,
    capture_content: bool,
    reasoning_events: bool,
    approvals: ApprovalPolicy,
    checkpoints: Option<Arc<dyn CheckpointStore>>,
}

impl std::fmt::Debug for ExecutorBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutorBuilder")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl ExecutorBuilder {
    /// The skills to serve.
    pub fn skills(mut self, skills: Arc<Registry>) -> Self {
        self.skills = Some(skills);
        self
    }

    /// The tools and toolkits skills may use.
    pub fn tools(mut self, tools: Arc<ToolRegistry>) -> Self {
        self.tools = Some(tools);
        self
    }

    /// The provider pool to share (e.g. with other executors); one is made when not given.
    pub fn provider_pool(mut self, pool: Arc<ProviderPool>) -> Self {
        self.pool = Some(pool);
        self
    }

    /// The host's default model, as an A2E `LLMConfig` (skills naming the same provider
    /// inherit its base URL, settings and credentials).
    pub fn default_llm(mut self, config: LLMConfig) -> Self {
        self.default = Some(HostDefault::Config(config));
        self
    }

    /// Adds a fallback for the host's default model, tried after the default and the
    /// fallbacks added before it (see `provider`'s module docs); `name` is how events and
    /// results name it.
    pub fn fallback_llm(mut self, name: impl Into<String>, config: LLMConfig) -> Self {
        self.fallbacks.push((name.into(), config));
        self
    }

    /// The host's default model, as a ready provider spec.
    pub fn default_provider(mut self, spec: ProviderSpec) -> Self {
        self.default = Some(HostDefault::Spec(Box::new(spec)));
        self
    }

    /// The host's own providers by name, resolved before any spec (see
    /// [`ProviderRegistry`]).
    pub(crate) fn provider_registry(mut self, registry: ProviderRegistry) -> Self {
        self.registered = registry;
        self
    }

    /// The host's default model: the provider registered as `name` (see
    /// [`Self::provider_registry`]; an unregistered name fails [`Self::build`]).
    pub(crate) fn default_registered(mut self, name: impl Into<String>) -> Self {
        self.default = Some(HostDefault::Registered(name.into()));
        self
    }

    /// The rules for request `llm_override`s (default: deny all).
    pub fn override_policy(mut self, policy: OverridePolicy) -> Self {
        self.policy = policy;
        self
    }

    /// What skills' own provider settings may choose (default: the model only, on the host's
    /// provider; see [`SkillProviderPolicy`]).
    pub fn skill_provider_policy(mut self, policy: SkillProviderPolicy) -> Self {
        self.skill_policy = policy;
        self
    }

    /// The host's limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Adds a pre-terminal gate (gates run in the order added).
    pub fn gate(mut self, gate: Arc<dyn PreTerminalGate>) -> Self {
        self.gates.push(gate);
        self
    }

    /// Adds a terminal hook.
    pub fn hook(mut self, hook: Arc<dyn TerminalHook>) -> Self {
        self.hooks.push(hook);
        self
    }

    /// How the Agent Card presents this host.
    pub fn card_identity(mut self, identity: CardIdentity) -> Self {
        self.card = identity;
        self
    }

    /// What skill runs may touch: skill files, workspaces, scripts (default: no scripts).
    pub fn files(mut self, files: FileSupport) -> Self {
        self.files = files;
        self
    }

    /// Prices per model, for the cost estimate in `SkillResult.usage` (default: none, no estimate).
    pub fn pricing(mut self, pricing: Pricing) -> Self {
        self.pricing = pricing;
        self
    }

    /// Whether spans record message content (model answers, tool arguments and results).
    /// Off by default.
    pub fn capture_content(mut self, capture: bool) -> Self {
        self.capture_content = capture;
        self
    }

    /// Whether a turn's reasoning (thinking blocks, `reasoning_content`, `<think>` text) reaches
    /// the caller, as one `artifact` event named `reasoning-N` (`text/plain`) per turn that had
    /// some. Off by default: the model's thoughts may quote what it was given, so they leave
    /// only when the host says so; a `log` event still tells that there was reasoning and how
    /// long it was.
    pub fn reasoning_events(mut self, send: bool) -> Self {
        self.reasoning_events = send;
        self
    }

    /// Which tool calls need a person's approval, and what calls nobody can be asked about
    /// get (default: none needs it; see [`ApprovalPolicy`]).
    pub fn approvals(mut self, policy: ApprovalPolicy) -> Self {
        self.approvals = policy;
        self
    }

    /// Where manifest-skill runs keep their checkpoints, so a call redelivered to another
    /// process continues at the turn it reached (default: none, nothing is written; see
    /// [`crate::checkpoint`]).
    pub fn checkpoints(mut self, store: Arc<dyn CheckpointStore>) -> Self {
        self.checkpoints = Some(store);
        self
    }

    /// Builds the executor: compiles the registered tools' schemas and resolves the host
    /// default provider.
    pub fn build(self) -> Result<Executor, BuildError> {
        let tools = self.tools.unwrap_or_default();
        let pool = self.pool.unwrap_or_default();
        let has_default = self.default.is_some();
        let providers = ProviderResolver::new(
            pool,
            self.default,
            self.policy,
            self.skill_policy,
            self.registered,
        )
        .and_then(|resolver| resolver.with_fallbacks(self.fallbacks))
        .map_err(BuildError::DefaultProvider)?;
        let skills = self.skills.unwrap_or_default();
        // With a host default, mark the skills whose own provider settings the host does not
        // allow `Blocked` (`Registry::resolve_providers`). Without one the registry's verdicts
        // are left as the host set them; a call is judged either way.
        if has_default {
            skills.resolve_providers(&|skill| {
                providers.admit_skill(skill).err().map(|d| d.to_string())
            });
        }
        Ok(Executor {
            inner: Arc::new(ExecutorInner {
                skills,
                tool_schemas: ToolSchemaCache::for_registry(&tools),
                tools,
                providers,
                limits: self.limits,
                gates: self.gates,
                hooks: self.hooks,
                card: self.card,
                files: self.files,
                pricing: self.pricing,
                capture_content: self.capture_content,
                reasoning_events: self.reasoning_events,
                approvals: self.approvals,
                checkpoints: self.checkpoints,
            }),
        })
    }
}

impl Executor {
    /// Runs `request` to its one response, borrowing it (the facade keeps the request for its
    /// error path instead of copying its arguments). A panic anywhere in the call becomes a
    /// `runtime_error` answer: a bug in the engine must not cost the caller its one response
    /// (tool, handler, gate and hook panics are already contained closer to their source).
    pub(crate) async fn call_borrowed(
        &self,
        request: &SkillCallRequest,
        events: Option<Arc<dyn EventSink>>,
        cancel: CancellationToken,
        approver: Option<Arc<dyn Approver>>,
    ) -> SkillCallResponse {
        let call = std::panic::AssertUnwindSafe(self.inner.call(request, events, cancel, approver));
        match futures::FutureExt::catch_unwind(call).await {
            Ok(response) => response,
            Err(_panic) => {
                let (skill, req_id) = (&request.name, &request.id);
                tracing::error!(%skill, %req_id, "internal error: the call panicked");
                SkillCallResponse::rejected(
                    req_id,
                    skill,
                    ProtocolError::new(
                        ErrorCode::RuntimeError,
                        "internal error while running the skill",
                    ),
                )
            }
        }
    }

    /// Starts configuring an executor.
    pub fn builder() -> ExecutorBuilder {
        ExecutorBuilder::default()
    }

    /// The skills this executor serves.
    pub fn skills(&self) -> &Arc<Registry> {
        &self.inner.skills
    }

    /// The tools this executor offers.
    pub fn tools(&self) -> &Arc<ToolRegistry> {
        &self.inner.tools
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }
}

#[async_trait]
impl SkillService for Executor {
    fn discover(&self, request: &SkillDiscoverRequest) -> SkillDiscoverResponse {
        let skills = self
            .inner
            .skills
            .discover(&request.filter_tags, &request.filter_categories);
        SkillDiscoverResponse::new(request.id.clone(), skills)
    }

    async fn call(
        &self,
        request: SkillCallRequest,
        events: Option<Arc<dyn EventSink>>,
        cancel: CancellationToken,
    ) -> SkillCallResponse {
        self.call_borrowed(&request, events, cancel, None).await
    }

    async fn call_with_approver(
        &self,
        request: SkillCallRequest,
        events: Option<Arc<dyn EventSink>>,
        cancel: CancellationToken,
        approver: Arc<dyn Approver>,
    ) -> SkillCallResponse {
        self.call_borrowed(&request, events, cancel, Some(approver))
            .await
    }

    fn is_runnable(&self, name: &str) -> bool {
        self.inner
            .skills
            .get(name)
            .is_some_and(|skill| skill.is_runnable())
    }

    fn prompt(
        &self,
        name: &str,
        arguments: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<SkillPrompt, ProtocolError> {
        super::opening::prompt(&self.inner.skills, name, arguments)
    }

    fn skill_folder(&self, name: &str) -> Option<Arc<dyn ServedFolder>> {
        let skill = self.inner.skills.get(name)?;
        let dir = skill
            .compiled
            .dir
            .as_ref()
            .filter(|_| skill.is_runnable())?;
        Some(Arc::new(SkillFolder::new(dir)))
    }

    fn check_input(
        &self,
        name: &str,
        arguments: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), Vec<Violation>> {
        let Some(skill) = self.inner.skills.get(name).filter(|s| s.is_runnable()) else {
            return Ok(());
        };
        match &skill.compiled.input_schema {
            Some(schema) => schema.validate(&serde_json::Value::Object(arguments.clone())),
            None => Ok(()),
        }
    }

    fn agent_card(&self) -> Result<AgentCard, CardError> {
        let card = &self.inner.card;
        AgentCard::builder(&card.name, &card.description, &card.version)
            // The endpoint speaks A2E, not A2A's own HTTP+JSON binding: say so.
            .interface(&card.url, "A2E", crate::protocol::PROTOCOL_VERSION)
            .skills(crate::skill::a2a::published_skills(&self.inner.skills))
            .build()
    }
}
