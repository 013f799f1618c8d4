//! [`SkillProviderPolicy`]: what a skill's own provider settings (`a2e-provider`, `a2e-model`,
//! `a2a-provider-config`) may choose on this host.
//!
//! Skill folders come from public repositories; the trust model says a skill is data and never
//! gains the host's powers. So **a skill may choose a model, never an endpoint or a
//! credential**, unless the host allows more in `[skill_provider]` of `skillet.toml`:
//!
//! ```toml
//! [skill_provider]
//! allowed_models = ["*"]                         # default: any model on the host's provider
//! allowed_providers = ["ollama"]                 # default: none besides the host's own
//! allowed_base_urls = ["http://127.0.0.1:11434"] # default: none besides the host's own
//! allow_settings = false                         # timeouts, retries, headers, anthropic_version
//! ```
//!
//! A skill's settings are admitted in one of two ways ([`SkillModel`]):
//! - **on the host's provider** — the skill names the host default's provider kind and either no
//!   `base_url` or one with the host's origin. It contributes its `model` (matched against
//!   `allowed_models`), the sampling settings (`max_tokens`, `temperature`, `top_p`, `seed`) and,
//!   only with `allow_settings`, transport settings. Endpoint and credential stay the host's.
//! - **on its own endpoint** — any other kind or origin. The kind must be in `allowed_providers`
//!   and the origin in `allowed_base_urls` (the same check as a request's `[llm_override]`), and
//!   the spec is built **without any credential of the host's**: the host's key is only ever sent
//!   to the endpoint the host configured it for. A kind that needs a key (`openai`,
//!   `anthropic`) therefore cannot run on a skill's own endpoint.
//!
//! Anything else is a [`SkillProviderDenial`]: the registry marks the skill `Blocked` with the
//! reason (discover shows it, a call is refused), and `skillet validate` reports it.
//!
//! Not here: resolving and caching providers (`provider`), the request-override policy
//! ([`OverridePolicy`], which this reuses for the own-endpoint check).

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use serde_json::{Map, Value};
use skillet_providers::{
    ConfigError, OverridePolicy, OverridePolicyConfig, PolicyConfigError, ProviderKind,
    ProviderSpec,
};

use crate::protocol::LLMConfig;

/// Keys a skill may always set: which model, and how it samples.
const MODEL_KEYS: &[&str] = &["model", "max_tokens", "temperature", "top_p", "seed"];

/// The host's rules for skills' provider settings, as written in `[skill_provider]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SkillProviderPolicyConfig {
    /// Globs (`*`, `?`, `[..]`) for the models a skill may choose; default `["*"]`.
    pub allowed_models: Vec<String>,
    /// Provider kinds a skill may name besides the host default's; default none.
    pub allowed_providers: Vec<ProviderKind>,
    /// Origins (scheme, host, port) a skill may send its prompts to besides the host's own;
    /// default none. The host's credentials are never sent there.
    pub allowed_base_urls: Vec<String>,
    /// Whether a skill may set transport settings (timeouts, retries, extra headers,
    /// `anthropic_version`); default `false`.
    pub allow_settings: bool,
}

impl Default for SkillProviderPolicyConfig {
    fn default() -> Self {
        SkillProviderPolicyConfig {
            allowed_models: vec!["*".to_owned()],
            allowed_providers: Vec::new(),
            allowed_base_urls: Vec::new(),
            allow_settings: false,
        }
    }
}

/// [`SkillProviderPolicyConfig`] with its globs compiled and URLs parsed. The default lets a
/// skill choose any model on the host's provider and nothing else.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "SkillProviderPolicyConfig")]
pub struct SkillProviderPolicy {
    config: SkillProviderPolicyConfig,
    models: GlobSet,
    endpoints: OverridePolicy,
}

impl Default for SkillProviderPolicy {
    fn default() -> Self {
        SkillProviderPolicy::from_config(SkillProviderPolicyConfig::default())
            .expect("the default skill provider policy is valid")
    }
}

impl TryFrom<SkillProviderPolicyConfig> for SkillProviderPolicy {
    type Error = SkillProviderPolicyError;

    fn try_from(config: SkillProviderPolicyConfig) -> Result<Self, SkillProviderPolicyError> {
        SkillProviderPolicy::from_config(config)
    }
}

/// The host's own endpoint for its default provider: what a skill may run on with the host's
/// credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostEndpoint {
    kind: ProviderKind,
    origin: String,
}

impl HostEndpoint {
    /// The endpoint of a host default given as an `LLMConfig` (reads no environment variable).
    pub fn of_config(config: &LLMConfig) -> Option<HostEndpoint> {
        let kind = ProviderKind::parse(&config.provider_name)?;
        let base_url = config
            .provider_config
            .as_ref()
            .and_then(|c| c.get("base_url"))
            .and_then(Value::as_str);
        let spec = ProviderSpec::new(kind, "host-model", base_url).ok()?;
        Some(HostEndpoint::of_spec(&spec))
    }

    /// A host running `kind` at its default endpoint (for judging a skill when no provider is
    /// configured: only its endpoint, credential and setting requests can then be refused).
    pub fn default_for(kind: ProviderKind) -> HostEndpoint {
        let origin = ProviderSpec::new(kind, "host-model", None)
            .map(|spec| spec.origin())
            .unwrap_or_else(|_| "(the host's configured base URL)".to_owned());
        HostEndpoint { kind, origin }
    }

    /// The endpoint of a host default given as a spec.
    pub(crate) fn of_spec(spec: &ProviderSpec) -> HostEndpoint {
        HostEndpoint {
            kind: spec.kind,
            origin: spec.origin(),
        }
    }
}

/// How a skill's admitted provider settings run.
#[derive(Debug, Clone)]
pub enum SkillModel {
    /// On the host's provider (its endpoint and credentials); the skill contributes these
    /// `provider_config` keys (its model and sampling settings; transport settings only when
    /// allowed).
    HostProvider(Map<String, Value>),
    /// On an endpoint the host allowed for skills, with no credential of the host's.
    OwnEndpoint(Box<ProviderSpec>),
}

/// Why a `[skill_provider]` policy cannot be loaded; the text names the entry.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SkillProviderPolicyError {
    /// An `allowed_models` pattern is not a glob.
    #[error("allowed_models entry {pattern:?}: {error}")]
    ModelPattern {
        /// As written.
        pattern: String,
        /// Why.
        error: globset::Error,
    },
    /// The `allowed_models` patterns do not build together.
    #[error("allowed_models: {0}")]
    Models(globset::Error),
    /// A provider or base URL entry is refused by the endpoint rules the override policy
    /// shares (its text names that policy; this one is `skill_provider`).
    #[error("{}", .0.to_string().replace("llm_override policy", "skill_provider"))]
    Endpoints(PolicyConfigError),
}

/// Why a skill may not use its provider settings on this host (safe to show: names keys,
/// kinds, origins and models, never a credential).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SkillProviderDenial(pub String);

impl SkillProviderPolicy {
    /// Compiles the globs and parses the URLs; an invalid entry is an error naming it.
    pub fn from_config(
        config: SkillProviderPolicyConfig,
    ) -> Result<Self, SkillProviderPolicyError> {
        let mut models = GlobSetBuilder::new();
        for pattern in &config.allowed_models {
            let glob =
                Glob::new(pattern).map_err(|error| SkillProviderPolicyError::ModelPattern {
                    pattern: pattern.clone(),
                    error,
                })?;
            models.add(glob);
        }
        let models = models.build().map_err(SkillProviderPolicyError::Models)?;
        let endpoints = OverridePolicy::from_config(OverridePolicyConfig {
            allowed_providers: config.allowed_providers.clone(),
            allowed_base_urls: config.allowed_base_urls.clone(),
            allowed_models: config.allowed_models.clone(),
            allow_request_credentials: config.allow_settings,
            allowed_credential_envs: Vec::new(),
        })
        .map_err(SkillProviderPolicyError::Endpoints)?;
        Ok(SkillProviderPolicy {
            config,
            models,
            endpoints,
        })
    }

    /// The configuration this policy was built from.
    pub fn config(&self) -> &SkillProviderPolicyConfig {
        &self.config
    }

    /// Admits a skill's `llm_config` against the host's endpoint (`None`: the host has no
    /// default model or one given only as a config that does not parse), or says why not.
    /// Reads no environment variable and sends nothing.
    pub fn admit(
        &self,
        skill: &LLMConfig,
        host: Option<&HostEndpoint>,
    ) -> Result<SkillModel, SkillProviderDenial> {
        let deny = |message: String| Err(SkillProviderDenial(message));
        let Some(kind) = ProviderKind::parse(&skill.provider_name) else {
            return deny(format!("unknown provider {:?}", skill.provider_name));
        };
        let mut keys = skill.provider_config.clone().unwrap_or_default();
        // The loader accepts the provider's name as a `provider` key of the config.
        keys.remove("provider");
        if !self.config.allow_settings
            && let Some(setting) = keys
                .keys()
                .find(|k| *k != "base_url" && !MODEL_KEYS.contains(&k.as_str()))
        {
            return deny(format!(
                "provider_config.{setting} is a transport setting a skill may not choose on \
                 this host (allow it with [skill_provider] allow_settings = true)"
            ));
        }
        if let Some(model) = keys.get("model").and_then(Value::as_str)
            && !self.models.is_match(model)
        {
            return deny(format!(
                "model {model:?} is not in [skill_provider] allowed_models"
            ));
        }
        let base_url = keys.get("base_url").and_then(Value::as_str);
        if let Some(host) = host.filter(|h| h.kind == kind) {
            let same_origin = match base_url {
                None => true,
                Some(url) => ProviderSpec::new(kind, "m", Some(url))
                    .is_ok_and(|spec| spec.origin() == host.origin),
            };
            if same_origin {
                // The host's endpoint exactly: a different path on the same server is not a
                // skill's choice either.
                keys.remove("base_url");
                return Ok(SkillModel::HostProvider(keys));
            }
        }
        self.own_endpoint(kind, &keys, host)
    }

    fn own_endpoint(
        &self,
        kind: ProviderKind,
        keys: &Map<String, Value>,
        host: Option<&HostEndpoint>,
    ) -> Result<SkillModel, SkillProviderDenial> {
        let host_label = host.map_or_else(
            || "the host has no default provider".to_owned(),
            |h| format!("the host's provider is {} at {}", h.kind, h.origin),
        );
        if !self.config.allowed_providers.contains(&kind) {
            let asked = match keys.get("base_url").and_then(Value::as_str) {
                Some(_) => format!("its own endpoint for {kind}"),
                None => format!("provider {kind}"),
            };
            return Err(SkillProviderDenial(format!(
                "the skill asks for {asked}, but a skill may choose only the model ({host_label}); \
                 the host allows more with [skill_provider] allowed_providers and allowed_base_urls"
            )));
        }
        let endpoint_only = ProviderSpec::new(
            kind,
            keys.get("model")
                .and_then(Value::as_str)
                .unwrap_or("(no model)"),
            keys.get("base_url").and_then(Value::as_str),
        )
        .map_err(|e| SkillProviderDenial(format!("provider_config: {e}")))?;
        self.endpoints
            .check(&endpoint_only)
            .map_err(|d| SkillProviderDenial(format!("{} for skills on this host", d.message)))?;
        // Built with no credential at all: the host's keys stay with the host's endpoints.
        let spec = ProviderSpec::from_llm_config(kind.as_str(), Some(keys), &|_| None).map_err(
            |e| match e {
                ConfigError::MissingCredential(kind) => SkillProviderDenial(format!(
                    "provider {kind} needs a key, and the host's key is only sent to the host's \
                     own endpoint ({host_label})"
                )),
                other => SkillProviderDenial(format!("provider_config: {other}")),
            },
        )?;
        self.endpoints
            .check(&spec)
            .map_err(|d| SkillProviderDenial(format!("{} for skills on this host", d.message)))?;
        Ok(SkillModel::OwnEndpoint(Box::new(spec)))
    }
}

#[cfg(test)]
#[path = "skill_provider_tests.rs"]
mod tests;
