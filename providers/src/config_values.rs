//! The vocabulary `provider_config` is read in: [`ConfigError`], the keys a config may have,
//! typed readers of its values (each failing with the key and the reason) and the base URL's
//! normalization.
//!
//! Not here: what the values mean and how a spec is assembled from them (`spec.rs`).

use serde_json::{Map, Value};

use crate::kind::ProviderKind;

/// A config that cannot become a [`ProviderSpec`](crate::ProviderSpec).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// `provider_name` is not one we speak.
    #[error("unknown provider {0:?}: expected one of {known}", known = known_kinds())]
    UnknownProvider(String),
    /// A required key is missing.
    #[error("provider_config.{0} is required")]
    Missing(&'static str),
    /// A key has an unusable value.
    #[error("provider_config.{key}: {reason}")]
    Invalid {
        /// The `provider_config` key whose value is unusable, e.g. `base_url`.
        key: String,
        /// Why the value is unusable.
        reason: String,
    },
    /// A key we do not know.
    #[error("provider_config.{0} is not a known key (known: {known})", known = KNOWN_KEYS.join(", "))]
    UnknownKey(String),
    /// The provider needs a credential and none was given.
    #[error("provider {0} needs provider_credentials.api_key or api_key_env")]
    MissingCredential(ProviderKind),
    /// `api_key_env` names a variable that is not set (or empty).
    #[error("environment variable {0:?} named by api_key_env is not set")]
    MissingCredentialEnv(String),
}

fn known_kinds() -> String {
    let names: Vec<&str> = ProviderKind::ALL.iter().map(|k| k.as_str()).collect();
    names.join(", ")
}

pub(crate) const KNOWN_KEYS: &[&str] = &[
    "model",
    "base_url",
    "connect_timeout_ms",
    "read_timeout_ms",
    "headers",
    "max_attempts",
    "initial_backoff_ms",
    "max_backoff_ms",
    "max_retry_after_ms",
    "max_tokens",
    "temperature",
    "top_p",
    "seed",
    "anthropic_version",
    "http2_prior_knowledge",
    "prompt_cache",
    "reasoning_effort",
    "thinking_budget_tokens",
    "think",
    "vision",
    "max_image_bytes",
    "structured_output",
    "tool_calling",
    "requests_per_minute",
    "tokens_per_minute",
];

pub(crate) fn invalid(key: &str, reason: &str) -> ConfigError {
    ConfigError::Invalid {
        key: key.to_owned(),
        reason: reason.to_owned(),
    }
}

pub(crate) fn get_str<'a>(
    config: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a str>, ConfigError> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(invalid(key, "expected a string")),
    }
}

pub(crate) fn get_u64(
    config: &Map<String, Value>,
    key: &str,
    min: u64,
) -> Result<Option<u64>, ConfigError> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n >= min => Ok(Some(n)),
            _ => Err(invalid(key, &format!("expected an integer >= {min}"))),
        },
    }
}

pub(crate) fn get_per_minute(
    config: &Map<String, Value>,
    key: &str,
) -> Result<Option<std::num::NonZeroU32>, ConfigError> {
    get_u64(config, key, 1)?
        .map(|n| {
            u32::try_from(n)
                .ok()
                .and_then(std::num::NonZeroU32::new)
                .ok_or_else(|| invalid(key, "too large"))
        })
        .transpose()
}

pub(crate) fn get_f32(config: &Map<String, Value>, key: &str) -> Result<Option<f32>, ConfigError> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .filter(|f| f.is_finite())
            .map(|f| Some(f as f32))
            .ok_or_else(|| invalid(key, "expected a number")),
    }
}

/// Parses and normalizes a base URL: http(s) only, no userinfo, no query/fragment, no trailing
/// slash.
pub(crate) fn normalize_base_url(raw: &str) -> Result<String, ConfigError> {
    let url = reqwest::Url::parse(raw.trim())
        .map_err(|e| invalid("base_url", &format!("not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("base_url", "scheme must be http or https"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid("base_url", "has no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(
            "base_url",
            "must not embed credentials; use provider_credentials",
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("base_url", "must not have a query or fragment"));
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}
