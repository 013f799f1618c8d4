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

use crate::kind::ProviderKind;
use crate::spec::{CredentialSource, ProviderSpec};

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
    pub(crate) fn deny_all() -> Self {
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

#[cfg(test)]
mod tests {
    use secrecy::SecretString;

    use super::*;

    fn policy() -> OverridePolicy {
        let toml_like = serde_json::json!({
            "allowed_providers": ["ollama", "openai-compatible"],
            "allowed_base_urls": ["http://127.0.0.1:11434", "https://openrouter.ai/api/v1"],
            "allowed_models": ["llama3*", "qwen2.5:*"],
            "allow_request_credentials": false,
            "allowed_credential_envs": ["OPENROUTER_API_KEY"],
        });
        serde_json::from_value(toml_like).expect("policy parses")
    }

    fn ollama(model: &str, base: Option<&str>) -> ProviderSpec {
        ProviderSpec::new(ProviderKind::Ollama, model, base).unwrap()
    }

    fn reason(spec: &ProviderSpec) -> DenialReason {
        policy().check(spec).expect_err("should be denied").reason
    }

    #[test]
    fn allowed_override_passes() {
        assert_eq!(policy().check(&ollama("llama3.2", None)), Ok(()));
        let spec = ProviderSpec::new(
            ProviderKind::OpenaiCompatible,
            "qwen2.5:7b",
            Some("https://openrouter.ai/api/v1"),
        )
        .unwrap();
        assert_eq!(policy().check(&spec), Ok(()));
    }

    #[test]
    fn provider_not_in_the_list_is_denied() {
        let spec = ProviderSpec::new(ProviderKind::Anthropic, "llama3", None).unwrap();
        assert_eq!(reason(&spec), DenialReason::ProviderNotAllowed);
    }

    #[test]
    fn metadata_address_and_internal_hosts_are_denied() {
        for base in [
            "http://169.254.169.254/latest",
            "http://2852039166/", // 169.254.169.254 spelled as a decimal number
            "http://127.0.0.1:8080",
            "https://127.0.0.1:11434", // right host and port, wrong scheme
            "http://internal.corp:11434",
            "http://127.0.0.1.nip.io:11434",
        ] {
            assert_eq!(
                reason(&ollama("llama3", Some(base))),
                DenialReason::BaseUrlNotAllowed,
                "{base}"
            );
        }
    }

    #[test]
    fn same_origin_with_another_path_or_explicit_default_port_is_allowed() {
        let spec = ProviderSpec::new(
            ProviderKind::OpenaiCompatible,
            "llama3",
            Some("https://OpenRouter.ai:443/other/path"),
        )
        .unwrap();
        assert_eq!(policy().check(&spec), Ok(()));
    }

    #[test]
    fn model_outside_the_globs_is_denied() {
        assert_eq!(
            reason(&ollama("gpt-4o", None)),
            DenialReason::ModelNotAllowed
        );
        assert_eq!(
            reason(&ollama("qwen2.5", None)),
            DenialReason::ModelNotAllowed
        );
    }

    #[test]
    fn request_supplied_key_or_headers_are_denied_unless_allowed() {
        let with_key = ollama("llama3", None).with_api_key(SecretString::from("k"));
        assert_eq!(
            reason(&with_key),
            DenialReason::RequestCredentialsNotAllowed
        );
        let with_header = ollama("llama3", None)
            .with_header("x-token", SecretString::from("t"))
            .unwrap();
        assert_eq!(
            reason(&with_header),
            DenialReason::RequestCredentialsNotAllowed
        );

        let mut config = policy().config().clone();
        config.allow_request_credentials = true;
        let lenient = OverridePolicy::from_config(config).unwrap();
        assert_eq!(lenient.check(&with_key), Ok(()));
        assert_eq!(lenient.check(&with_header), Ok(()));
    }

    #[test]
    fn credential_env_outside_the_list_is_denied() {
        let mut spec = ollama("llama3", None);
        spec.credential_source = CredentialSource::Env {
            var: "AWS_SECRET_ACCESS_KEY".into(),
        };
        let denial = policy().check(&spec).unwrap_err();
        assert_eq!(denial.reason, DenialReason::CredentialEnvNotAllowed);
        assert!(denial.to_string().contains("AWS_SECRET_ACCESS_KEY"));
        spec.credential_source = CredentialSource::Env {
            var: "OPENROUTER_API_KEY".into(),
        };
        assert_eq!(policy().check(&spec), Ok(()));
    }

    #[test]
    fn default_policy_denies_everything() {
        let denial = OverridePolicy::default()
            .check(&ollama("llama3", None))
            .unwrap_err();
        assert_eq!(denial.reason, DenialReason::ProviderNotAllowed);
    }

    #[test]
    fn broken_policy_fails_to_load_with_the_entry_named() {
        let bad_url = serde_json::json!({"allowed_base_urls": ["not a url"]});
        let e = serde_json::from_value::<OverridePolicy>(bad_url).unwrap_err();
        assert!(e.to_string().contains("not a url"), "{e}");
        let bad_glob = serde_json::json!({"allowed_models": ["llama[3"]});
        let e = serde_json::from_value::<OverridePolicy>(bad_glob).unwrap_err();
        assert!(e.to_string().contains("llama[3"), "{e}");
        let unknown = serde_json::json!({"allowed_provider": ["ollama"]});
        assert!(serde_json::from_value::<OverridePolicy>(unknown).is_err());
    }

    #[test]
    fn policy_round_trips_through_serde() {
        let value = serde_json::to_value(policy()).unwrap();
        let again: OverridePolicy = serde_json::from_value(value).unwrap();
        assert_eq!(again.config(), policy().config());
    }
}
