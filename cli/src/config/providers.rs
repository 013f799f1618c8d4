//! `[providers.NAME]` tables and the choice of the model a command runs on.
//!
//! A provider entry names an API (`kind`), a model, an optional base URL, and its credential as
//! the *name* of an environment variable (`api_key_env`) — never the key itself. Other
//! `provider_config` keys (timeouts, retries, sampling defaults) go in its `options` table and
//! are checked by `skillet_providers::ProviderSpec` at startup.
//!
//! # Which provider a command uses ([`ProviderChoice::resolve`])
//! 1. `--provider P` (or `SKILLET_PROVIDER`): the `[providers.P]` table when there is one;
//!    otherwise `P` is a kind (`openai`, `openai-compatible`, `ollama`, `anthropic`, `gemini`,
//!    `mock`) and the provider is made from `--model` / `--base-url` and the standard
//!    environment: the key from `OPENAI_API_KEY` (both OpenAI kinds; required by `openai`),
//!    `ANTHROPIC_API_KEY` or `GEMINI_API_KEY`, the endpoint (unless `--base-url`) from
//!    `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`, `GOOGLE_GEMINI_BASE_URL` or
//!    `OLLAMA_HOST` (read as the Ollama CLI reads it: `127.0.0.1:9`, `http://h`, `:1234`,
//!    `0.0.0.0` for this machine; `skillet_providers::ollama_base_url`). `--provider ollama`
//!    without a model fails with the models the server has
//!    ([`ProviderChoice::resolve_listing_models`]), or with the URL where nothing answered.
//! 2. else `default_provider`; else the only configured provider.
//! 3. else the **embedded mock** (mock-llm in-process): nothing configured.
//!
//! The chosen provider's `fallback` list names further `[providers.NAME]` tables tried in
//! order for a turn it could not answer ([`Config::fallbacks_of`]); a fallback is a real
//! provider (never `mock`) with no fallbacks of its own.
//!
//! `--model` and `--base-url` override the chosen entry's values. Several providers and no
//! `default_provider` is an error (which one would be a guess).

use std::path::PathBuf;

use secrecy::SecretString;
use serde::Deserialize;
use serde_json::{Map, Value};
use skillet_providers::{EnvError, ProviderKind};

use super::{Config, ConfigError};
use skillet_protocol::{Credentials, LLMConfig};

/// What a configured provider is: a real provider kind (every kind `skillet_providers` speaks,
/// read from its table, so a new provider needs no change here) or the embedded mock-llm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderEntryKind {
    /// A real API.
    Real(ProviderKind),
    /// mock-llm started in-process (offline, deterministic).
    Mock,
}

impl ProviderEntryKind {
    /// The spelling in config files and `--provider`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderEntryKind::Real(kind) => kind.as_str(),
            ProviderEntryKind::Mock => "mock",
        }
    }

    /// Parses a kind name (`_` accepted for `-`, any case).
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "mock" | "mock-llm" | "mock_llm" => Some(ProviderEntryKind::Mock),
            _ => ProviderKind::parse(name).map(ProviderEntryKind::Real),
        }
    }

    /// Every accepted spelling, for messages.
    pub fn names() -> String {
        let mut names: Vec<&str> = ProviderKind::ALL.iter().map(|k| k.as_str()).collect();
        names.push("mock");
        names.join(", ")
    }

    /// The environment variable an ad-hoc provider of this kind reads its key from.
    pub fn conventional_key_env(self) -> Option<&'static str> {
        match self {
            ProviderEntryKind::Real(kind) => kind.conventional_key_env(),
            ProviderEntryKind::Mock => None,
        }
    }
}

impl<'de> Deserialize<'de> for ProviderEntryKind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        ProviderEntryKind::parse(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown provider kind {name:?}, expected one of {}",
                ProviderEntryKind::names()
            ))
        })
    }
}

/// One `[providers.NAME]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderEntry {
    /// The API.
    pub kind: ProviderEntryKind,
    /// Model name as the API knows it (required except for `mock`).
    #[serde(default)]
    pub model: Option<String>,
    /// Base URL (default: the kind's; required for `openai-compatible`).
    #[serde(default)]
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// `mock` only: a scenario file for the embedded mock (default: the skill folder's
    /// `mock-scenario.yaml`, else schema synthesis).
    #[serde(default)]
    pub scenario: Option<PathBuf>,
    /// Further `provider_config` keys (`read_timeout_ms`, `max_attempts`, `temperature`, ...).
    #[serde(default)]
    pub options: Map<String, Value>,
    /// Other `[providers.NAME]` tables a turn goes to, in order, when this one fails after its
    /// retries on a retryable error or refuses the context's length (`fallback = ["claude",
    /// "local"]`; see [`Config::fallbacks_of`]).
    #[serde(default)]
    pub fallback: Vec<String>,
    /// Present only to reject it with a helpful message: keys never go in the file (the value
    /// is skipped, never stored).
    #[serde(default)]
    api_key: Option<serde::de::IgnoredAny>,
}

impl ProviderEntry {
    /// An entry of `kind` with nothing else set.
    pub fn new(kind: ProviderEntryKind) -> Self {
        ProviderEntry {
            kind,
            model: None,
            base_url: None,
            api_key_env: None,
            scenario: None,
            options: Map::new(),
            fallback: Vec::new(),
            api_key: None,
        }
    }

    /// Problems as `(key, reason)`.
    pub(super) fn check(&self) -> Result<(), (String, String)> {
        if self.api_key.is_some() {
            return Err((
                "api_key".into(),
                "keys are never read from the config file; put the key in an environment \
                 variable and name it with api_key_env"
                    .into(),
            ));
        }
        for reserved in ["model", "base_url"] {
            if self.options.contains_key(reserved) {
                return Err((
                    format!("options.{reserved}"),
                    format!("set `{reserved}` on the provider table itself"),
                ));
            }
        }
        if let Some(key) = self.options.keys().find(|k| looks_like_a_credential(k)) {
            return Err((
                format!("options.{key}"),
                "credentials and extra headers are not accepted in the config file; use \
                 api_key_env"
                    .into(),
            ));
        }
        if self.kind != ProviderEntryKind::Mock && self.model.is_none() {
            return Err(("model".into(), "required for this kind".into()));
        }
        if self.kind != ProviderEntryKind::Mock && self.scenario.is_some() {
            return Err((
                "scenario".into(),
                "only a `mock` provider has a scenario".into(),
            ));
        }
        Ok(())
    }

    /// The A2E `LLMConfig` of a real provider (`None` for `mock`). Credentials carry only the
    /// variable's name; `skillet_providers` reads it.
    pub fn llm_config(&self) -> Option<LLMConfig> {
        if self.kind == ProviderEntryKind::Mock {
            return None;
        }
        let mut config = self.options.clone();
        if let Some(model) = &self.model {
            config.insert("model".into(), Value::String(model.clone()));
        }
        if let Some(base_url) = &self.base_url {
            config.insert("base_url".into(), Value::String(base_url.clone()));
        }
        let mut credentials = Credentials::new();
        if let Some(var) = &self.api_key_env {
            credentials.insert("api_key_env", SecretString::from(var.clone()));
        }
        Some(LLMConfig {
            provider_name: self.kind.as_str().to_owned(),
            provider_credentials: credentials,
            provider_config: Some(config),
            is_default: true,
        })
    }
}

/// The command-line shortcuts `--provider`, `--model`, `--base-url`.
#[derive(Debug, Clone, Default)]
pub struct ProviderShortcuts {
    /// A configured provider's name, or a kind.
    pub provider: Option<String>,
    /// Overrides the model.
    pub model: Option<String>,
    /// Overrides the base URL.
    pub base_url: Option<String>,
}

/// The model a command runs on.
#[derive(Debug, Clone)]
pub enum ProviderChoice {
    /// A real provider.
    Real {
        /// The configured name (or the kind, for `--provider KIND`).
        name: String,
        /// Its configuration (credentials by variable name only).
        config: LLMConfig,
    },
    /// mock-llm in-process.
    EmbeddedMock {
        /// Why: `None` when nothing was configured, else the provider name that asked for it.
        requested_by: Option<String>,
        /// A scenario file from the configuration (else per skill folder / synthesis).
        scenario: Option<PathBuf>,
    },
}

impl ProviderChoice {
    /// Applies the rules of the module docs, reading the process environment.
    pub fn resolve(config: &Config, shortcuts: &ProviderShortcuts) -> Result<Self, ConfigError> {
        Self::resolve_with_env(config, shortcuts, &|name| std::env::var(name).ok())
    }

    /// [`ProviderChoice::resolve`]; when `--provider ollama` names no model, the error lists the
    /// models the server has (`GET /api/tags`), or names the URL where nothing answered and
    /// `ollama serve`.
    pub async fn resolve_listing_models(
        config: &Config,
        shortcuts: &ProviderShortcuts,
    ) -> Result<Self, ConfigError> {
        let lookup = |name: &str| std::env::var(name).ok();
        match Self::ad_hoc_ollama_without_model(config, shortcuts, &lookup) {
            Some(base_url) => Err(no_ollama_model(&base_url?).await),
            None => Self::resolve_with_env(config, shortcuts, &lookup),
        }
    }

    /// The base URL of an ad-hoc `--provider ollama` given no model (`None`: any other case).
    fn ad_hoc_ollama_without_model(
        config: &Config,
        shortcuts: &ProviderShortcuts,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Option<Result<String, ConfigError>> {
        let name = shortcuts.provider.as_deref()?;
        if shortcuts.model.is_some()
            || config.providers.contains_key(name)
            || ProviderEntryKind::parse(name) != Some(ProviderEntryKind::Real(ProviderKind::Ollama))
        {
            return None;
        }
        Some(match &shortcuts.base_url {
            Some(url) => Ok(url.clone()),
            None => env_base_url(ProviderKind::Ollama, lookup)
                .map(|url| url.unwrap_or_else(|| "http://127.0.0.1:11434".to_owned())),
        })
    }

    /// [`ProviderChoice::resolve`] with the standard variables read through `lookup`.
    pub fn resolve_with_env(
        config: &Config,
        shortcuts: &ProviderShortcuts,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let invalid = |key: &str, reason: String| ConfigError::Invalid {
            path: "command line".into(),
            key: key.into(),
            reason,
        };
        let mut ad_hoc = false;
        let (name, mut entry) = match &shortcuts.provider {
            Some(name) => match config.providers.get(name) {
                Some(entry) => (name.clone(), entry.clone()),
                None => {
                    let kind = ProviderEntryKind::parse(name).ok_or_else(|| {
                        invalid(
                            "--provider",
                            format!(
                                "{name:?} is neither a [providers.NAME] of {} nor a kind \
                                 ({})",
                                config.origin(),
                                ProviderEntryKind::names()
                            ),
                        )
                    })?;
                    let mut entry = ProviderEntry::new(kind);
                    if let ProviderEntryKind::Real(real) = kind {
                        entry.api_key_env = ad_hoc_key_env(real, lookup);
                        if shortcuts.base_url.is_none() {
                            entry.base_url = env_base_url(real, lookup)?;
                        }
                    }
                    ad_hoc = true;
                    (kind.as_str().to_owned(), entry)
                }
            },
            None => match (&config.default_provider, config.providers.len()) {
                (Some(name), _) => (name.clone(), config.providers[name].clone()),
                (None, 1) => {
                    let (name, entry) = config.providers.iter().next().expect("one provider");
                    (name.clone(), entry.clone())
                }
                (None, 0) => {
                    if shortcuts.model.is_some() || shortcuts.base_url.is_some() {
                        return Err(invalid(
                            "--model/--base-url",
                            "no provider to apply them to: add --provider (e.g. --provider \
                             ollama --model llama3.2)"
                                .into(),
                        ));
                    }
                    return Ok(ProviderChoice::EmbeddedMock {
                        requested_by: None,
                        scenario: None,
                    });
                }
                (None, _) => {
                    return Err(ConfigError::Invalid {
                        path: config.origin(),
                        key: "default_provider".into(),
                        reason: "several providers are configured; name one with \
                                 default_provider or --provider"
                            .into(),
                    });
                }
            },
        };
        if let Some(model) = &shortcuts.model {
            entry.model = Some(model.clone());
        }
        if let Some(base_url) = &shortcuts.base_url {
            entry.base_url = Some(base_url.clone());
        }
        entry.check().map_err(|(key, reason)| {
            if ad_hoc {
                invalid(
                    &format!("--{}", key.replace('_', "-")),
                    format!("{reason} (with --provider {name})"),
                )
            } else {
                invalid(&format!("providers.{name}.{key}"), reason)
            }
        })?;
        Ok(match entry.llm_config() {
            Some(config) => ProviderChoice::Real { name, config },
            None => ProviderChoice::EmbeddedMock {
                requested_by: Some(name),
                scenario: entry.scenario,
            },
        })
    }

    /// `kind/model` or `embedded mock-llm`, for messages.
    pub fn label(&self) -> String {
        match self {
            ProviderChoice::Real { config, .. } => {
                let model = config
                    .provider_config
                    .as_ref()
                    .and_then(|c| c.get("model"))
                    .and_then(Value::as_str)
                    .unwrap_or("?");
                format!("{}/{model}", config.provider_name)
            }
            ProviderChoice::EmbeddedMock { .. } => "embedded mock-llm".to_owned(),
        }
    }
}

/// The key variable of an ad-hoc provider: the kind's conventional one when the kind needs a
/// key (so a missing key is reported by name), else the standard one only when it is set
/// (`openai-compatible` servers take `OPENAI_API_KEY` as the OpenAI SDKs send it).
fn ad_hoc_key_env(kind: ProviderKind, lookup: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if let Some(var) = kind.conventional_key_env() {
        return Some(var.to_owned());
    }
    let var = skillet_providers::key_var(kind)?;
    lookup(var)
        .is_some_and(|v| !v.trim().is_empty())
        .then(|| var.to_owned())
}

/// The endpoint the standard environment gives `kind` (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`,
/// `OLLAMA_HOST`), an unusable value reported under the variable's name.
fn env_base_url(
    kind: ProviderKind,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<String>, ConfigError> {
    skillet_providers::base_url_from_lookup(kind, lookup).map_err(|e| {
        let reason = match e {
            EnvError::Invalid { reason, .. } => reason,
            other => other.to_string(),
        };
        ConfigError::Invalid {
            path: "environment".into(),
            key: skillet_providers::base_url_var(kind).into(),
            reason,
        }
    })
}

/// The error of `--provider ollama` without a model: what the server at `base_url` has, or
/// that nothing answers there.
async fn no_ollama_model(base_url: &str) -> ConfigError {
    let reason = match skillet_providers::ollama_models(base_url).await {
        Ok(models) if models.is_empty() => format!(
            "required with --provider ollama; the server at {base_url} has no models yet \
             (`ollama pull llama3.2`, then --model llama3.2)"
        ),
        Ok(models) => format!(
            "required with --provider ollama; the server at {base_url} has: {} (choose one \
             with --model NAME)",
            models.join(", ")
        ),
        Err(e) => format!("required with --provider ollama, and {e}"),
    };
    ConfigError::Invalid {
        path: "command line".into(),
        key: "--model".into(),
        reason,
    }
}

/// Whether an option's name says it carries a credential (`api_key`, `token`, `secret`,
/// `password`, `headers`). Token *counts* (`max_tokens`) are settings, not credentials.
fn looks_like_a_credential(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let token = name.contains("token") && !name.contains("tokens");
    name == "headers"
        || name.contains("key")
        || token
        || name.contains("secret")
        || name.contains("password")
}

#[cfg(test)]
mod kind_tests {
    use super::*;

    #[test]
    fn every_provider_kind_and_the_mock_parse_from_their_spelling() {
        for kind in ProviderKind::ALL {
            let parsed = ProviderEntryKind::parse(kind.as_str());
            assert_eq!(parsed, Some(ProviderEntryKind::Real(*kind)));
        }
        assert_eq!(
            ProviderEntryKind::parse("Mock_LLM"),
            Some(ProviderEntryKind::Mock)
        );
        assert_eq!(ProviderEntryKind::parse("palm"), None);
    }

    #[test]
    fn an_unknown_kind_in_the_file_names_the_known_ones() {
        let error = serde_json::from_value::<ProviderEntry>(serde_json::json!({"kind": "palm"}))
            .unwrap_err()
            .to_string();
        assert!(error.contains("\"palm\""), "{error}");
        assert!(
            error.contains("openai-compatible") && error.contains("mock"),
            "{error}"
        );
    }
}
