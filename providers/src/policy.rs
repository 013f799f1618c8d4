//! [`OverridePolicy`]: what a request's `llm_override` may ask for (A2E: "host may restrict
//! llm_override to approved providers"; "LLM credentials in llm_override must be scoped").
//!
//! Deny by default: an empty policy allows nothing. A spec must name an allowed provider, point
//! at an allowed origin (scheme + host + port; anything else, e.g. `169.254.169.254` or an
//! internal host, is refused), use a model matching an allowed glob, and bring credentials
//! only in an allowed way. The policy is plain config: it deserializes from a table of the
//! host's `skillet.toml`, e.g.
//!
//! ```toml
//! [llm_override]
//! allowed_providers = ["ollama", "openai-compatible"]
//! allowed_base_urls = ["http://127.0.0.1:11434", "https://openrouter.ai"]
//! allowed_models = ["llama3*", "qwen2.5:*"]
//! allow_request_credentials = false
//! allowed_credential_envs = ["OPENROUTER_API_KEY"]
//! ```
//!
//! Invalid entries (a base URL that does not parse, a bad glob) fail deserialization, so a
//! broken policy is caught at startup, not at the first request.

use std::fmt;

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use crate::spec::{CredentialSource, ProviderKind, ProviderSpec};

/// The host's rules for request-supplied provider configs. Build it by deserializing an
/// [`OverridePolicyConfig`] (or with [`OverridePolicy::from_config`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "OverridePolicyConfig", into = "OverridePolicyConfig")]
pub struct OverridePolicy {
    config: OverridePolicyConfig,
    origins: Vec<Origin>,
    models: GlobSet,
}

/// The policy as written in configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OverridePolicyConfig {
    /// Providers an override may name.
    pub allowed_providers: Vec<ProviderKind>,
    /// Base URLs an override may use; only scheme, host and port are compared (a path is
    /// ignored). A spec without `base_url` is checked with its kind's default URL.
    pub allowed_base_urls: Vec<String>,
    /// Globs (`*`, `?`, `[..]`) for allowed model names; `"*"` allows any model.
    pub allowed_models: Vec<String>,
    /// Whether an override may carry its own key (`api_key`) or extra headers.
    pub allow_request_credentials: bool,
    /// Environment variables an override may name with `api_key_env`. Without this list a
    /// request could make the host send any of its secrets to an allowed origin.
    pub allowed_credential_envs: Vec<String>,
}

/// Why an override was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DenialReason {
    /// The provider is not in `allowed_providers`.
    ProviderNotAllowed,
    /// The base URL's origin is not in `allowed_base_urls`.
    BaseUrlNotAllowed,
    /// The model matches no glob in `allowed_models`.
    ModelNotAllowed,
    /// The override carries its own credential (key or headers) and the policy forbids that.
    RequestCredentialsNotAllowed,
    /// The override names an environment variable not in `allowed_credential_envs`.
    CredentialEnvNotAllowed,
}

/// A refusal: the reason plus a message safe to show the caller (never a credential).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("llm_override denied: {message}")]
pub struct PolicyDenial {
    /// The machine-readable reason.
    pub reason: DenialReason,
    /// What was refused, for humans.
    pub message: String,
}

/// An invalid policy configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid llm_override policy: {0}")]
pub struct PolicyConfigError(String);

/// `scheme://host:port` with the port made explicit.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    fn parse(raw: &str) -> Option<Origin> {
        let url = reqwest::Url::parse(raw.trim()).ok()?;
        if !matches!(url.scheme(), "http" | "https") {
            return None;
        }
        Some(Origin {
            scheme: url.scheme().to_owned(),
            // The URL parser lowercases hosts and normalizes IP spellings (e.g. decimal IPv4),
            // so equal hosts compare equal.
            host: url.host_str()?.to_owned(),
            port: url.port_or_known_default()?,
        })
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}:{}", self.scheme, self.host, self.port)
    }
}

impl TryFrom<OverridePolicyConfig> for OverridePolicy {
    type Error = PolicyConfigError;

    fn try_from(config: OverridePolicyConfig) -> Result<Self, Self::Error> {
        OverridePolicy::from_config(config)
    }
}

impl From<OverridePolicy> for OverridePolicyConfig {
    fn from(policy: OverridePolicy) -> Self {
        policy.config
    }
}

impl Default for OverridePolicy {
    /// Denies every override.
    fn default() -> Self {
        OverridePolicy::deny_all()
    }
}

impl OverridePolicy {
    /// A policy that refuses every override.
    pub fn deny_all() -> Self {
        OverridePolicy {
            config: OverridePolicyConfig::default(),
            origins: Vec::new(),
            models: GlobSet::empty(),
        }
    }

    /// Parses base URLs and compiles model globs.
    pub fn from_config(config: OverridePolicyConfig) -> Result<Self, PolicyConfigError> {
        let origins = config
            .allowed_base_urls
            .iter()
            .map(|raw| {
                Origin::parse(raw).ok_or_else(|| {
                    PolicyConfigError(format!(
                        "allowed_base_urls entry {raw:?} is not an http(s) URL with a host"
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut models = GlobSetBuilder::new();
        for pattern in &config.allowed_models {
            let glob = Glob::new(pattern)
                .map_err(|e| PolicyConfigError(format!("allowed_models entry {pattern:?}: {e}")))?;
            models.add(glob);
        }
        let models = models
            .build()
            .map_err(|e| PolicyConfigError(format!("allowed_models: {e}")))?;
        Ok(OverridePolicy {
            config,
            origins,
            models,
        })
    }

    /// The configuration this policy was built from.
    pub fn config(&self) -> &OverridePolicyConfig {
        &self.config
    }

    /// Allows `spec` as an override, or says why not.
    pub fn check(&self, spec: &ProviderSpec) -> Result<(), PolicyDenial> {
        let deny = |reason, message: String| Err(PolicyDenial { reason, message });
        if !self.config.allowed_providers.contains(&spec.kind) {
            return deny(
                DenialReason::ProviderNotAllowed,
                format!("provider {} is not allowed", spec.kind),
            );
        }
        match Origin::parse(&spec.base_url) {
            Some(origin) if self.origins.contains(&origin) => {}
            Some(origin) => {
                return deny(
                    DenialReason::BaseUrlNotAllowed,
                    format!("base URL origin {origin} is not allowed"),
                );
            }
            None => {
                return deny(
                    DenialReason::BaseUrlNotAllowed,
                    "base URL is not an http(s) URL with a host".to_owned(),
                );
            }
        }
        if !self.models.is_match(&spec.model) {
            return deny(
                DenialReason::ModelNotAllowed,
                format!("model {:?} is not allowed", spec.model),
            );
        }
        match &spec.credential_source {
            CredentialSource::Inline if !self.config.allow_request_credentials => {
                return deny(
                    DenialReason::RequestCredentialsNotAllowed,
                    "credentials supplied in the request are not accepted".to_owned(),
                );
            }
            CredentialSource::Env { var } if !self.config.allowed_credential_envs.contains(var) => {
                return deny(
                    DenialReason::CredentialEnvNotAllowed,
                    format!("api_key_env {var:?} is not an allowed credential variable"),
                );
            }
            _ => {}
        }
        // Extra headers can carry tokens just like a key can.
        if !spec.headers.is_empty() && !self.config.allow_request_credentials {
            return deny(
                DenialReason::RequestCredentialsNotAllowed,
                "extra headers supplied in the request are not accepted".to_owned(),
            );
        }
        Ok(())
    }
}
