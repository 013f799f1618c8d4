//! Which model a call runs on, and what a provider failure means as an A2E code.
//!
//! # Resolution: allowed override > skill `llm_config` > host default
//! - **`llm_override`** (from the request): mapped to a [`ProviderSpec`] as written, then checked
//!   against the host's [`OverridePolicy`]; a refusal is `unauthorized`. An `api_key_env` the
//!   policy does not list is refused *before* the variable is read, so a request cannot probe
//!   which variables the host has. Overrides are resolved per call through the pool.
//! - **skill `llm_config`**: admitted by the host's [`SkillProviderPolicy`] first (a skill may
//!   choose a model, never an endpoint or a credential, unless the host allows it; see
//!   `skill_provider`). On the host's provider, the host default's `provider_config` is the base
//!   and the skill's admitted keys override it (so a skill saying `ollama` + `llama3.2` runs on
//!   the host's Ollama base URL with the host's key); on an endpoint the host allowed for skills,
//!   the spec carries no credential of the host's. A denial is the skill's `Blocked` reason.
//!   Resolved once per skill (per loaded version) and cached.
//! - **host default**: resolved once when the executor is built; with fallbacks
//!   (`ExecutorBuilder::fallback_llm`) it is a `FallbackChain` of the default then each
//!   fallback, labelled by the default.
//!
//! A `provider_name` registered in the executor's [`ProviderRegistry`] (the host's own
//! providers, by name) is resolved there first, at each of the three steps; see
//! `provider_registry` for what a skill and an override may do with one.
//!
//! `provider_credentials` holds `api_key` or `api_key_env` (the name of an environment
//! variable); both stay `SecretString`s and are never logged.
//!
//! # Provider errors → A2E codes (by [`ProviderErrorKind`], never by message text)
//! | kind | code | why |
//! |---|---|---|
//! | `Timeout` | `timeout` | the call's deadline or the server's slowness |
//! | `Cancelled` | `timeout` when the deadline has passed, else `runtime_error` | cancellation comes from the host (or the deadline) |
//! | `RateLimited`, `Unavailable`, `Truncated`, `MalformedResponse` | `skill_error` | transient: the same call may succeed later (seed: retryable) |
//! | `QuotaExceeded`, `Auth`, `NotFound`, `BadRequest`, `ContextTooLong`, `Config` | `runtime_error` | the host's or the request's configuration; repeating fails the same way |
//! | `Unreachable` | `runtime_error` | nothing answered at the provider's URL: the host's setup, never the skill's fault |

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use secrecy::SecretString;
use serde_json::{Map, Value};
use skillet_providers::{
    ConfigError, FallbackChain, FallbackLink, OverridePolicy, Provider, ProviderError,
    ProviderErrorKind, ProviderPool, ProviderSpec,
};

use super::provider_registry::{ProviderRegistry, RegisteredConfigError};
use super::skill_provider::{HostEndpoint, SkillModel, SkillProviderDenial, SkillProviderPolicy};
use crate::deadline::Deadline;
use crate::protocol::{Credentials, ErrorCode, LLMConfig, ProtocolError};
use crate::skill::CompiledSkill;

/// A provider ready for a call, with the label shown in status events (`ollama/llama3.2`).
#[derive(Clone)]
pub struct ResolvedProvider {
    /// The provider (shared; from the pool).
    pub provider: Arc<dyn Provider>,
    /// `kind/model`.
    pub label: Arc<str>,
}

impl std::fmt::Debug for ResolvedProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolvedProvider")
            .field("label", &self.label)
            .finish()
    }
}

impl ResolvedProvider {
    fn new(provider: Arc<dyn Provider>) -> Self {
        let label = format!("{}/{}", provider.kind(), provider.model());
        ResolvedProvider {
            provider,
            label: label.into(),
        }
    }

    /// A registered provider, labelled with the name it was registered as.
    fn registered(name: &str, provider: &Arc<dyn Provider>) -> Self {
        ResolvedProvider {
            label: format!("{name}/{}", provider.model()).into(),
            provider: Arc::clone(provider),
        }
    }
}

/// Why no provider can be had: for the host default and its fallbacks when the executor is
/// built, for a skill when it is called. The text names the provider, the skill and the key,
/// never a credential.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProviderSetupError {
    /// The host default names a provider nobody registered.
    #[error(
        "host default provider `{name}` is not registered (registered: {})",
        if registered.is_empty() { "none".to_owned() } else { registered.join(", ") }
    )]
    NotRegistered {
        /// The name it gave.
        name: String,
        /// The names that are registered.
        registered: Vec<String>,
    },
    /// The host default's `LLMConfig` does not make a spec.
    #[error("host default LLM config: {0}")]
    HostDefaultConfig(ConfigError),
    /// The host default's provider cannot be built.
    #[error("host default provider: {0}")]
    HostDefaultProvider(Box<ProviderError>),
    /// Fallbacks were configured without a host default to fall back from.
    #[error("fallback providers need a host default provider")]
    FallbackWithoutDefault,
    /// A fallback's `LLMConfig` does not make a spec.
    #[error("fallback provider `{name}`: {error}")]
    FallbackConfig {
        /// The fallback's name.
        name: String,
        /// Why.
        error: ConfigError,
    },
    /// A fallback's provider cannot be built.
    #[error("fallback provider `{name}`: {error}")]
    FallbackProvider {
        /// The fallback's name.
        name: String,
        /// Why.
        error: Box<ProviderError>,
    },
    /// Neither the skill nor the host names a model.
    #[error("no model configured: the skill has no llm_config and the host has no default")]
    NoModel,
    /// The host does not allow the skill's provider settings.
    #[error("skill `{skill}` is Blocked ({denial})")]
    SkillBlocked {
        /// The skill's name.
        skill: String,
        /// Why.
        denial: Box<ProviderDenial>,
    },
    /// The skill's settings on the host's provider do not make a spec.
    #[error("skill `{skill}` llm_config: {error}")]
    SkillConfig {
        /// The skill's name.
        skill: String,
        /// Why.
        error: ConfigError,
    },
    /// The skill's provider cannot be built.
    #[error("skill `{skill}` provider: {error}")]
    SkillProvider {
        /// The skill's name.
        skill: String,
        /// Why.
        error: Box<ProviderError>,
    },
}

/// Why a skill's own provider settings are not allowed on this host: its `Blocked` reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderDenial {
    /// A registered provider's name with a config it does not take.
    #[error("provider: {0}")]
    Registered(RegisteredConfigError),
    /// Refused by the host's skill provider policy.
    #[error("provider: {0}")]
    Policy(SkillProviderDenial),
}

/// The host's default model: an A2E `LLMConfig` (inheritable by skills naming the same
/// provider) or a ready [`ProviderSpec`].
#[derive(Debug, Clone)]
pub enum HostDefault {
    /// An `LLMConfig`, as a host's `skillet.toml` writes it.
    Config(LLMConfig),
    /// A spec built by the host itself (boxed: a spec is several times the size of the other
    /// variants).
    Spec(Box<ProviderSpec>),
    /// The provider registered under this name in the executor's [`ProviderRegistry`].
    Registered(String),
}

/// Maps an `LLMConfig` onto a provider spec (reads `api_key_env` from the environment).
pub fn spec_from_llm_config(config: &LLMConfig) -> Result<ProviderSpec, ConfigError> {
    spec_with_credentials(
        &config.provider_name,
        config.provider_config.as_ref(),
        &config.provider_credentials,
    )
}

fn spec_with_credentials(
    provider_name: &str,
    provider_config: Option<&Map<String, Value>>,
    credentials: &Credentials,
) -> Result<ProviderSpec, ConfigError> {
    let lookup = |key: &str| -> Option<SecretString> { credentials.get(key).cloned() };
    ProviderSpec::from_llm_config(provider_name, provider_config, &lookup)
}

/// Resolves and caches the providers of one executor.
pub(crate) struct ProviderResolver {
    pool: Arc<ProviderPool>,
    default: Option<(HostDefault, ResolvedProvider)>,
    /// The host default's endpoint (what a skill may run on with the host's credentials).
    host_endpoint: Option<HostEndpoint>,
    policy: OverridePolicy,
    skill_policy: SkillProviderPolicy,
    /// The host's providers by name, resolved before any spec.
    registered: ProviderRegistry,
    /// Per skill name: the compiled skill the entry was made for (a reload makes a new one)
    /// and its provider.
    skills: RwLock<HashMap<String, SkillEntry>>,
}

type SkillEntry = (
    Arc<CompiledSkill>,
    Result<ResolvedProvider, ProviderSetupError>,
);

impl ProviderResolver {
    /// Resolves the host default once.
    pub(crate) fn new(
        pool: Arc<ProviderPool>,
        default: Option<HostDefault>,
        policy: OverridePolicy,
        skill_policy: SkillProviderPolicy,
        registered: ProviderRegistry,
    ) -> Result<Self, ProviderSetupError> {
        let mut host_endpoint = None;
        let default = match default {
            None => None,
            Some(HostDefault::Registered(name)) => {
                let provider =
                    registered
                        .get(&name)
                        .ok_or_else(|| ProviderSetupError::NotRegistered {
                            name: name.clone(),
                            registered: registered.names().map(str::to_owned).collect(),
                        })?;
                let resolved = ResolvedProvider::registered(&name, provider);
                Some((HostDefault::Registered(name), resolved))
            }
            Some(HostDefault::Config(config)) => {
                let spec =
                    spec_from_llm_config(&config).map_err(ProviderSetupError::HostDefaultConfig)?;
                host_endpoint = Some(HostEndpoint::of_spec(&spec));
                Some((HostDefault::Config(config), default_provider(&pool, &spec)?))
            }
            Some(HostDefault::Spec(spec)) => {
                host_endpoint = Some(HostEndpoint::of_spec(&spec));
                let resolved = default_provider(&pool, &spec)?;
                Some((HostDefault::Spec(spec), resolved))
            }
        };
        Ok(ProviderResolver {
            pool,
            default,
            host_endpoint,
            policy,
            skill_policy,
            registered,
            skills: RwLock::default(),
        })
    }

    /// Puts the host default in front of `fallbacks` (named `LLMConfig`s, tried in order): a
    /// turn on the host default that fails after its retries on a retryable error, or is
    /// refused for its context length or quota, goes to the next (see
    /// `skillet_providers::FallbackChain`). Skills with their own provider settings and
    /// request overrides run without fallbacks. Each fallback resolves as a host default does.
    pub(crate) fn with_fallbacks(
        mut self,
        fallbacks: Vec<(String, LLMConfig)>,
    ) -> Result<Self, ProviderSetupError> {
        if fallbacks.is_empty() {
            return Ok(self);
        }
        let Some((_, primary)) = &mut self.default else {
            return Err(ProviderSetupError::FallbackWithoutDefault);
        };
        let mut links = Vec::with_capacity(fallbacks.len());
        for (name, config) in fallbacks {
            let spec = match spec_from_llm_config(&config) {
                Ok(spec) => spec,
                Err(error) => return Err(ProviderSetupError::FallbackConfig { name, error }),
            };
            let provider = match self.pool.provider(&spec) {
                Ok(provider) => provider,
                Err(error) => {
                    let error = Box::new(error);
                    return Err(ProviderSetupError::FallbackProvider { name, error });
                }
            };
            links.push(FallbackLink {
                name: name.into(),
                provider,
            });
        }
        let first = FallbackLink {
            name: Arc::clone(&primary.label),
            provider: Arc::clone(&primary.provider),
        };
        primary.provider = Arc::new(FallbackChain::new(first, links));
        Ok(self)
    }

    /// The registered provider a config names, if it names one.
    fn registered_for<'a>(
        &'a self,
        config: &'a LLMConfig,
    ) -> Option<(&'a str, &'a Arc<dyn Provider>)> {
        let name = config.provider_name.trim();
        self.registered.get(name).map(|p| (name, p))
    }

    /// Whether `skill`'s own provider settings are allowed on this host (`Err`: the reason it
    /// is `Blocked`). Reads no environment variable and sends nothing.
    pub(crate) fn admit_skill(&self, skill: &CompiledSkill) -> Result<(), ProviderDenial> {
        let Some(config) = &skill.spec.llm_config else {
            return Ok(());
        };
        match self.registered_for(config) {
            Some((name, provider)) => {
                ProviderRegistry::check_config(name, &**provider, config.provider_config.as_ref())
                    .map_err(ProviderDenial::Registered)
            }
            None => self
                .skill_policy
                .admit(config, self.host_endpoint.as_ref())
                .map(drop)
                .map_err(ProviderDenial::Policy),
        }
    }

    /// Checks and resolves a request's `llm_override` (`unauthorized` when the policy refuses
    /// it, `invalid_message` when it is not a usable config).
    pub(crate) fn authorize_override(
        &self,
        config: &LLMConfig,
    ) -> Result<ResolvedProvider, ProtocolError> {
        let denied = |message: String| {
            ProtocolError::new(
                ErrorCode::Unauthorized,
                format!("llm_override denied: {message}"),
            )
        };
        if let Some((name, provider)) = self.registered_for(config) {
            if !self.registered.is_overridable(name) {
                return Err(denied(format!(
                    "provider `{name}` may not be chosen by a request on this host"
                )));
            }
            if !config.provider_credentials.is_empty() {
                return Err(denied(format!(
                    "provider `{name}` is the host's own and takes no request credentials"
                )));
            }
            ProviderRegistry::check_config(name, &**provider, config.provider_config.as_ref())
                .map_err(|e| {
                    ProtocolError::new(ErrorCode::InvalidMessage, format!("llm_override: {e}"))
                })?;
            return Ok(ResolvedProvider::registered(name, provider));
        }
        if let Some(var) = config.provider_credentials.get("api_key_env") {
            let var = secrecy::ExposeSecret::expose_secret(var).trim().to_owned();
            if !self.policy.config().allowed_credential_envs.contains(&var) {
                return Err(denied(format!(
                    "api_key_env {var:?} is not an allowed credential variable"
                )));
            }
        }
        let spec = spec_from_llm_config(config).map_err(|e| {
            ProtocolError::new(ErrorCode::InvalidMessage, format!("llm_override: {e}"))
        })?;
        self.policy.check(&spec).map_err(|d| denied(d.message))?;
        let provider = self.pool.provider(&spec).map_err(|e| {
            ProtocolError::new(ErrorCode::InvalidMessage, format!("llm_override: {e}"))
        })?;
        Ok(ResolvedProvider::new(provider))
    }

    /// The provider for `skill` when the request has no override: its `llm_config` (merged
    /// with the host default, see the module docs), else the host default.
    pub(crate) fn for_skill(
        &self,
        skill: &Arc<CompiledSkill>,
    ) -> Result<ResolvedProvider, ProviderSetupError> {
        if skill.spec.llm_config.is_none() {
            return self.host_default();
        }
        {
            let cache = self.skills.read().unwrap_or_else(|p| p.into_inner());
            if let Some((compiled, resolved)) = cache.get(skill.name())
                && Arc::ptr_eq(compiled, skill)
            {
                return resolved.clone();
            }
        }
        let resolved = self.resolve_skill_config(skill);
        self.skills
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(skill.name().to_owned(), (skill.clone(), resolved.clone()));
        resolved
    }

    fn host_default(&self) -> Result<ResolvedProvider, ProviderSetupError> {
        self.default
            .as_ref()
            .map(|(_, p)| p.clone())
            .ok_or(ProviderSetupError::NoModel)
    }

    fn resolve_skill_config(
        &self,
        skill: &CompiledSkill,
    ) -> Result<ResolvedProvider, ProviderSetupError> {
        let Some(config) = &skill.spec.llm_config else {
            return self.host_default();
        };
        let skill_name = || skill.name().to_owned();
        let blocked = |denial| ProviderSetupError::SkillBlocked {
            skill: skill_name(),
            denial: Box::new(denial),
        };
        if let Some((name, provider)) = self.registered_for(config) {
            ProviderRegistry::check_config(name, &**provider, config.provider_config.as_ref())
                .map_err(|reason| blocked(ProviderDenial::Registered(reason)))?;
            return Ok(ResolvedProvider::registered(name, provider));
        }
        let admitted = self
            .skill_policy
            .admit(config, self.host_endpoint.as_ref())
            .map_err(|denial| blocked(ProviderDenial::Policy(denial)))?;
        let config_error = |error| ProviderSetupError::SkillConfig {
            skill: skill_name(),
            error,
        };
        let spec = match admitted {
            SkillModel::OwnEndpoint(spec) => *spec,
            SkillModel::HostProvider(keys) => match &self.default {
                Some((HostDefault::Config(host), _)) => {
                    let mut merged = host.provider_config.clone().unwrap_or_default();
                    merged.extend(keys);
                    spec_with_credentials(
                        &host.provider_name,
                        Some(&merged),
                        &host.provider_credentials,
                    )
                    .map_err(config_error)?
                }
                Some((HostDefault::Spec(host), _)) => {
                    on_host_spec(host, &keys).map_err(config_error)?
                }
                // `admit` only answers `HostProvider` when there is a host endpoint, which a
                // registered default does not have.
                Some((HostDefault::Registered(_), _)) | None => return self.host_default(),
            },
        };
        let provider =
            self.pool
                .provider(&spec)
                .map_err(|error| ProviderSetupError::SkillProvider {
                    skill: skill_name(),
                    error: Box::new(error),
                })?;
        Ok(ResolvedProvider::new(provider))
    }
}

/// The host default's provider, from the pool.
fn default_provider(
    pool: &ProviderPool,
    spec: &ProviderSpec,
) -> Result<ResolvedProvider, ProviderSetupError> {
    let provider = pool
        .provider(spec)
        .map_err(|e| ProviderSetupError::HostDefaultProvider(Box::new(e)))?;
    Ok(ResolvedProvider::new(provider))
}

/// The host's spec with a skill's admitted keys applied: the skill's model and the settings it
/// names; endpoint, credential and headers stay the host's.
fn on_host_spec(
    host: &ProviderSpec,
    keys: &Map<String, Value>,
) -> Result<ProviderSpec, ConfigError> {
    let mut config = keys.clone();
    config
        .entry("model")
        .or_insert_with(|| Value::String(host.model.clone()));
    config.insert("base_url".to_owned(), Value::String(host.base_url.clone()));
    // Parsed with the host's key only so that kinds needing one parse; the key is then taken
    // from the host's spec itself.
    let key = host.api_key.clone();
    let parsed = ProviderSpec::from_llm_config(host.kind.as_str(), Some(&config), &|name| {
        (name == "api_key").then(|| key.clone()).flatten()
    })?;
    let mut spec = host.clone();
    spec.model = parsed.model;
    let hints = parsed.default_hints;
    spec.default_hints.max_tokens = hints.max_tokens.or(spec.default_hints.max_tokens);
    spec.default_hints.temperature = hints.temperature.or(spec.default_hints.temperature);
    spec.default_hints.top_p = hints.top_p.or(spec.default_hints.top_p);
    spec.default_hints.seed = hints.seed.or(spec.default_hints.seed);
    let has = |names: &[&str]| names.iter().any(|n| keys.contains_key(*n));
    if has(&["connect_timeout_ms", "read_timeout_ms"]) {
        spec.timeouts = parsed.timeouts;
    }
    if has(&[
        "max_attempts",
        "initial_backoff_ms",
        "max_backoff_ms",
        "max_retry_after_ms",
    ]) {
        spec.retry = parsed.retry;
    }
    if keys.contains_key("anthropic_version") {
        spec.anthropic_version = parsed.anthropic_version;
    }
    spec.headers.extend(parsed.headers);
    Ok(spec)
}

/// The A2E code and message for a failed provider call (see the module docs' table).
pub(crate) fn provider_failure(
    error: &ProviderError,
    deadline: Deadline,
    label: &str,
) -> (ErrorCode, String) {
    let code = match &error.kind {
        ProviderErrorKind::Timeout => ErrorCode::Timeout,
        ProviderErrorKind::Cancelled if deadline.expired() => ErrorCode::Timeout,
        ProviderErrorKind::Cancelled => ErrorCode::RuntimeError,
        ProviderErrorKind::RateLimited { .. }
        | ProviderErrorKind::Unavailable
        | ProviderErrorKind::Truncated
        | ProviderErrorKind::MalformedResponse => ErrorCode::SkillError,
        ProviderErrorKind::QuotaExceeded
        | ProviderErrorKind::Auth
        | ProviderErrorKind::NotFound
        | ProviderErrorKind::BadRequest
        | ProviderErrorKind::ContextTooLong
        | ProviderErrorKind::Unreachable
        | ProviderErrorKind::Config => ErrorCode::RuntimeError,
        // Images to a model declared not to take them, or too large: the caller's input is
        // refused (A2E has no `invalid_input`; its nearest is the unusable message).
        ProviderErrorKind::UnsupportedInput => ErrorCode::InvalidMessage,
    };
    (code, format!("provider {label} failed: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_errors_map_by_kind() {
        let later = Deadline::after(std::time::Duration::from_secs(60));
        let past = Deadline::after(std::time::Duration::ZERO);
        let code =
            |kind, deadline| provider_failure(&ProviderError::new(kind, "x"), deadline, "p/m").0;
        assert_eq!(code(ProviderErrorKind::Timeout, later), ErrorCode::Timeout);
        assert_eq!(
            code(ProviderErrorKind::Cancelled, later),
            ErrorCode::RuntimeError
        );
        assert_eq!(code(ProviderErrorKind::Cancelled, past), ErrorCode::Timeout);
        assert_eq!(
            code(ProviderErrorKind::Unavailable, later),
            ErrorCode::SkillError
        );
        assert_eq!(
            code(ProviderErrorKind::Auth, later),
            ErrorCode::RuntimeError
        );
        assert_eq!(
            code(ProviderErrorKind::Unreachable, later),
            ErrorCode::RuntimeError
        );
        assert_eq!(
            code(ProviderErrorKind::RateLimited { retry_after: None }, later),
            ErrorCode::SkillError
        );
        assert_eq!(
            code(ProviderErrorKind::UnsupportedInput, later),
            ErrorCode::InvalidMessage
        );
    }
}
