//! Provider configuration: [`ProviderSpec`] (which API, model, base URL, credential, timeouts,
//! headers, retry settings) and its constructor from the raw pieces of an A2E `LLMConfig`.
//!
//! This module parses outside input once, at the edge: after [`ProviderSpec::from_llm_config`]
//! the spec is known-good (URL parsed, headers valid, numbers in range). It does no I/O except
//! reading the environment variable a config names with `api_key_env`.
//!
//! # `provider_config` keys
//!
//! | key | type | default | meaning |
//! |---|---|---|---|
//! | `model` | string | required | model name as the API knows it |
//! | `base_url` | string | per kind, see [`ProviderKind::default_base_url`] | `http(s)://host[:port][/path]`; required for `openai-compatible` |
//! | `connect_timeout_ms` | integer | 10 000 | time allowed to connect; with `read_timeout_ms` it bounds the wait for the response head (per request: all specs share one HTTP client) |
//! | `read_timeout_ms` | integer | 120 000 | longest silence between two reads of a response (applied per request: every spec shares one HTTP client) |
//! | `headers` | object of strings | `{}` | extra request headers (values are treated as secrets) |
//! | `max_attempts` | integer ≥ 1 | 3 | total tries per call, including the first |
//! | `initial_backoff_ms` | integer | 500 | first backoff wait (exponential, jittered) |
//! | `max_backoff_ms` | integer | 30 000 | cap on one backoff wait |
//! | `max_retry_after_ms` | integer | 60 000 | a `Retry-After` longer than this is not waited for |
//! | `max_tokens`, `temperature`, `top_p`, `seed` | number | unset | default [`Hints`] for requests that set none |
//! | `anthropic_version` | string | `2023-06-01` | `anthropic-version` header (Anthropic only) |
//! | `http2_prior_knowledge` | boolean | `false` | speak HTTP/2 from the first byte, without negotiating it (`h2c` on `http://`): every call to the host multiplexes over one connection instead of one connection per call in flight. Only for servers that accept it (mock-llm, vLLM behind an HTTP/2 proxy, gateways); `https://` hosts negotiate HTTP/2 by ALPN without it |
//! | `reasoning_effort` | string | unset | OpenAI kinds: `reasoning_effort` (`none`, `minimal`, `low`, `medium`, `high`, `xhigh`) for reasoning models; Gemini: `thinkingConfig.thinkingLevel` (`xhigh` as `high`, `none` as `thinkingBudget: 0`) |
//! | `thinking_budget_tokens` | integer ≥ 1024 | unset | Anthropic: extended thinking with this budget; `max_tokens` is raised above it when it is not, the answer tool is offered rather than forced (the API allows no forced tool with thinking), and the thinking blocks go back unchanged with the turn's tool calls. Gemini: `thinkingConfig.thinkingBudget` with `includeThoughts` |
//! | `think` | boolean | unset | Ollama: `think` for thinking models |
//! | `vision` | boolean | `true` | whether the model takes images; `false` refuses a request with images before sending it (`UnsupportedInput`) |
//! | `max_image_bytes` | integer ≥ 1 | 20 MiB | largest image (decoded bytes) sent; a larger one is refused before sending |
//! | `requests_per_minute` | integer ≥ 1 | unset | most requests sent per minute by every call to this provider together (retries count); a wait is reported to the call and never crosses its deadline (`rate_limit.rs`) |
//! | `tokens_per_minute` | integer ≥ 1 | unset | most prompt tokens per minute, estimated from each request body (4 bytes a token) before it is sent |
//! | `prompt_cache` | boolean | `true` | mark the prompt's stable prefix for the provider's prompt cache: Anthropic `cache_control` breakpoints on the system prompt, the last tool and (from the second turn) the conversation so far. OpenAI and Ollama cache without being asked; the flag changes nothing there |
//!
//! Unknown keys are rejected, so a typo does not silently fall back to a default.
//!
//! # `provider_credentials` keys
//!
//! `api_key` (the key itself) or `api_key_env` (the name of an environment variable holding it).
//! Required for `openai` and `anthropic`, optional for `openai-compatible` and `ollama`.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use secrecy::{ExposeSecret, SecretString};
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::config_values::{
    ConfigError, KNOWN_KEYS, get_f32, get_per_minute, get_str, get_u64, invalid, normalize_base_url,
};
use crate::kind::ProviderKind;
use crate::modes::{OutputMode, ToolMode};
use crate::rate_limit::RateLimits;
use crate::types::{Hints, REASONING_EFFORTS, Reasoning};
use crate::wire::WireSettings;

/// HTTP timeouts. The call's overall deadline is separate (per call, in
/// [`CallOptions`](crate::CallOptions)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Timeouts {
    /// Time allowed to connect. Applied per request together with `read`: the response head
    /// must arrive within `connect + read`.
    pub connect: Duration,
    /// Longest silence between two reads of the response; catches hung servers and stalled
    /// streams without limiting long generations that keep sending.
    pub read: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(10),
            read: Duration::from_secs(120),
        }
    }
}

/// Settings of the one retry policy (see `retry.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct RetrySettings {
    /// Total tries per call, including the first (≥ 1).
    pub max_attempts: u32,
    /// First backoff wait; doubles each retry, with jitter.
    pub initial_backoff: Duration,
    /// Cap on a single backoff wait.
    pub max_backoff: Duration,
    /// A server-requested wait (`Retry-After`) longer than this fails the call instead.
    pub max_retry_after: Duration,
}

impl Default for RetrySettings {
    fn default() -> Self {
        RetrySettings {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

/// Where the spec's credential came from; the override policy cares.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum CredentialSource {
    /// No credential.
    None,
    /// The key itself was in the config (`api_key`).
    Inline,
    /// The key was read from this environment variable (`api_key_env`).
    Env {
        /// The variable's name (not secret).
        var: String,
    },
}

/// Everything needed to build a provider. `Debug` and `Serialize` redact the key and header
/// values.
#[derive(Clone)]
pub struct ProviderSpec {
    /// Which API the provider speaks, and so which wire maps its requests.
    pub kind: ProviderKind,
    /// The model as sent to the server (e.g. `gpt-4o-mini`, `llama3.2`); the constructors refuse
    /// an empty one.
    pub model: String,
    /// The effective base URL (the kind's default when the config named none), without a
    /// trailing slash.
    pub base_url: String,
    /// The API key, if any.
    pub api_key: Option<SecretString>,
    /// Where `api_key` came from.
    pub credential_source: CredentialSource,
    /// HTTP timeouts.
    pub timeouts: Timeouts,
    /// Extra request headers; values are secrets (gateways put tokens there).
    pub headers: BTreeMap<String, SecretString>,
    /// Retry policy settings.
    pub retry: RetrySettings,
    /// Hints applied to requests that leave them unset.
    pub default_hints: Hints,
    /// `anthropic-version` header value (Anthropic only).
    pub anthropic_version: String,
    /// Send HTTP/2 without negotiating it (`h2c` on plain `http://`); such specs share the
    /// pool's second client.
    pub http2_prior_knowledge: bool,
    /// Mark the stable prefix for the provider's prompt cache (`prompt_cache`, default on).
    pub prompt_cache: bool,
    /// How much the model reasons (`reasoning_effort`, `thinking_budget_tokens`, `think`).
    pub reasoning: Reasoning,
    /// Whether the model takes images, and how large (`vision`, `max_image_bytes`).
    pub images: crate::images::ImageSettings,
    /// How the answer's schema is sent (`structured_output`; `auto` negotiates).
    pub output_mode: OutputMode,
    /// How tools are offered (`tool_calling`; `auto` negotiates).
    pub tool_mode: ToolMode,
    /// Requests and tokens per minute (`requests_per_minute`, `tokens_per_minute`).
    pub rate_limits: RateLimits,
}

/// Headers a config may not set: they would break framing or re-route the request.
const FORBIDDEN_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "content-type",
];

impl ProviderSpec {
    /// The view of these settings a wire reads when it builds headers and bodies.
    pub(crate) fn wire_settings(&self) -> WireSettings<'_> {
        WireSettings {
            model: &self.model,
            api_key: self.api_key.as_ref(),
            default_hints: &self.default_hints,
            anthropic_version: &self.anthropic_version,
            official_openai: self.kind == ProviderKind::Openai,
            prompt_cache: self.prompt_cache,
            reasoning: &self.reasoning,
        }
    }

    /// A spec with defaults for everything but kind, model and base URL. `base_url: None` takes
    /// the kind's default.
    pub fn new(
        kind: ProviderKind,
        model: impl Into<String>,
        base_url: Option<&str>,
    ) -> Result<Self, ConfigError> {
        let base_url = match base_url {
            Some(url) => normalize_base_url(url)?,
            None => kind
                .default_base_url()
                .ok_or(ConfigError::Missing("base_url"))?
                .to_owned(),
        };
        let model = model.into();
        if model.trim().is_empty() {
            return Err(ConfigError::Missing("model"));
        }
        Ok(ProviderSpec {
            kind,
            model,
            base_url,
            api_key: None,
            credential_source: CredentialSource::None,
            timeouts: Timeouts::default(),
            headers: BTreeMap::new(),
            retry: RetrySettings::default(),
            default_hints: Hints::default(),
            anthropic_version: "2023-06-01".to_owned(),
            http2_prior_knowledge: false,
            prompt_cache: true,
            reasoning: Reasoning::default(),
            images: Default::default(),
            output_mode: OutputMode::Auto,
            tool_mode: ToolMode::Auto,
            rate_limits: RateLimits::default(),
        })
    }

    /// Sets an inline API key.
    pub fn with_api_key(mut self, key: SecretString) -> Self {
        self.api_key = Some(key);
        self.credential_source = CredentialSource::Inline;
        self
    }

    /// Builds a spec from an A2E `LLMConfig`'s pieces. `credentials` looks up a key of
    /// `provider_credentials` (`api_key`, `api_key_env`). See the module docs for the keys.
    pub fn from_llm_config(
        provider_name: &str,
        provider_config: Option<&Map<String, Value>>,
        credentials: &dyn Fn(&str) -> Option<SecretString>,
    ) -> Result<Self, ConfigError> {
        let kind = ProviderKind::parse(provider_name)
            .ok_or_else(|| ConfigError::UnknownProvider(provider_name.to_owned()))?;
        let empty = Map::new();
        let config = provider_config.unwrap_or(&empty);
        if let Some(unknown) = config.keys().find(|k| !KNOWN_KEYS.contains(&k.as_str())) {
            return Err(ConfigError::UnknownKey(unknown.clone()));
        }
        let model = get_str(config, "model")?.ok_or(ConfigError::Missing("model"))?;
        let mut spec = ProviderSpec::new(kind, model, get_str(config, "base_url")?)?;

        if let Some(ms) = get_u64(config, "connect_timeout_ms", 1)? {
            spec.timeouts.connect = Duration::from_millis(ms);
        }
        if let Some(ms) = get_u64(config, "read_timeout_ms", 1)? {
            spec.timeouts.read = Duration::from_millis(ms);
        }
        if let Some(n) = get_u64(config, "max_attempts", 1)? {
            spec.retry.max_attempts = u32::try_from(n.min(100)).unwrap_or(100);
        }
        if let Some(ms) = get_u64(config, "initial_backoff_ms", 0)? {
            spec.retry.initial_backoff = Duration::from_millis(ms);
        }
        if let Some(ms) = get_u64(config, "max_backoff_ms", 0)? {
            spec.retry.max_backoff = Duration::from_millis(ms);
        }
        if let Some(ms) = get_u64(config, "max_retry_after_ms", 0)? {
            spec.retry.max_retry_after = Duration::from_millis(ms);
        }
        spec.rate_limits = RateLimits {
            requests_per_minute: get_per_minute(config, "requests_per_minute")?,
            tokens_per_minute: get_per_minute(config, "tokens_per_minute")?,
        };
        if let Some(n) = get_u64(config, "max_tokens", 1)? {
            spec.default_hints.max_tokens =
                Some(u32::try_from(n).map_err(|_| invalid("max_tokens", "too large"))?);
        }
        spec.default_hints.temperature = get_f32(config, "temperature")?;
        spec.default_hints.top_p = get_f32(config, "top_p")?;
        if let Some(seed) = config.get("seed") {
            spec.default_hints.seed = Some(
                seed.as_i64()
                    .ok_or_else(|| invalid("seed", "expected an integer"))?,
            );
        }
        if let Some(version) = get_str(config, "anthropic_version")? {
            HeaderValue::from_str(version)
                .map_err(|_| invalid("anthropic_version", "not a valid header value"))?;
            spec.anthropic_version = version.to_owned();
        }
        if let Some(flag) = config.get("http2_prior_knowledge") {
            spec.http2_prior_knowledge = flag
                .as_bool()
                .ok_or_else(|| invalid("http2_prior_knowledge", "expected true or false"))?;
        }
        if let Some(flag) = config.get("prompt_cache") {
            spec.prompt_cache = flag
                .as_bool()
                .ok_or_else(|| invalid("prompt_cache", "expected true or false"))?;
        }
        if let Some(flag) = config.get("vision") {
            spec.images.vision = flag
                .as_bool()
                .ok_or_else(|| invalid("vision", "expected true or false"))?;
        }
        if let Some(bytes) = get_u64(config, "max_image_bytes", 1)? {
            spec.images.max_image_bytes = u32::try_from(bytes)
                .map_err(|_| invalid("max_image_bytes", "expected at most 4294967295"))?;
        }
        if let Some(effort) = get_str(config, "reasoning_effort")? {
            if !REASONING_EFFORTS.contains(&effort) {
                return Err(invalid(
                    "reasoning_effort",
                    &format!("expected one of {}", REASONING_EFFORTS.join(", ")),
                ));
            }
            spec.reasoning.reasoning_effort = Some(effort.to_owned());
        }
        if let Some(budget) = config.get("thinking_budget_tokens") {
            let budget = budget
                .as_u64()
                .filter(|n| (1024..=u64::from(u32::MAX)).contains(n))
                .ok_or_else(|| {
                    invalid(
                        "thinking_budget_tokens",
                        "expected an integer of at least 1024",
                    )
                })?;
            spec.reasoning.thinking_budget_tokens = Some(budget as u32);
        }
        if let Some(flag) = config.get("think") {
            spec.reasoning.think = Some(
                flag.as_bool()
                    .ok_or_else(|| invalid("think", "expected true or false"))?,
            );
        }
        if let Some(mode) = get_str(config, "structured_output")? {
            spec.output_mode = OutputMode::parse(mode).ok_or_else(|| {
                invalid(
                    "structured_output",
                    &format!("expected one of {}", OutputMode::NAMES),
                )
            })?;
        }
        if let Some(mode) = get_str(config, "tool_calling")? {
            spec.tool_mode = ToolMode::parse(mode).ok_or_else(|| {
                invalid(
                    "tool_calling",
                    &format!("expected one of {}", ToolMode::NAMES),
                )
            })?;
        }
        if let Some(headers) = config.get("headers") {
            let headers = headers
                .as_object()
                .ok_or_else(|| invalid("headers", "expected an object of strings"))?;
            for (name, value) in headers {
                let value = value
                    .as_str()
                    .ok_or_else(|| invalid(&format!("headers.{name}"), "expected a string"))?;
                spec = spec.with_header(name, SecretString::from(value.to_owned()))?;
            }
        }

        if let Some(key) = credentials("api_key").filter(|k| !k.expose_secret().is_empty()) {
            spec = spec.with_api_key(key);
        } else if let Some(var) = credentials("api_key_env") {
            let var = var.expose_secret().trim().to_owned();
            let key = std::env::var(&var)
                .ok()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| ConfigError::MissingCredentialEnv(var.clone()))?;
            spec.api_key = Some(SecretString::from(key));
            spec.credential_source = CredentialSource::Env { var };
        }
        if spec.api_key.is_none() && kind.requires_credential() {
            return Err(ConfigError::MissingCredential(kind));
        }
        Ok(spec)
    }

    /// Adds an extra request header after checking its name and value.
    pub fn with_header(mut self, name: &str, value: SecretString) -> Result<Self, ConfigError> {
        let key = format!("headers.{name}");
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| invalid(&key, "not a valid header name"))?;
        if FORBIDDEN_HEADERS.contains(&header.as_str()) {
            return Err(invalid(&key, "this header may not be set by configuration"));
        }
        // Checked here so request building never fails on it; the message names no value.
        HeaderValue::from_str(value.expose_secret())
            .map_err(|_| invalid(&key, "not a valid header value"))?;
        self.headers.insert(header.as_str().to_owned(), value);
        Ok(self)
    }

    /// The extra headers as a `HeaderMap` (values marked sensitive so `Debug` of the map hides
    /// them).
    pub(crate) fn header_map(&self) -> http::HeaderMap {
        let mut map = http::HeaderMap::new();
        for (name, value) in &self.headers {
            if let (Ok(name), Ok(mut value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value.expose_secret()),
            ) {
                value.set_sensitive(true);
                map.insert(name, value);
            }
        }
        map
    }

    /// Every secret this spec carries (the key and the header values), for scrubbing.
    pub fn secrets(&self) -> impl Iterator<Item = &SecretString> {
        self.api_key.iter().chain(self.headers.values())
    }

    /// `scheme://host:port` of the base URL, for logs (never carries credentials: URLs with
    /// userinfo are rejected at construction).
    pub fn origin(&self) -> String {
        reqwest::Url::parse(&self.base_url)
            .map(|u| u.origin().ascii_serialization())
            .unwrap_or_default()
    }
}

impl fmt::Debug for ProviderSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderSpec")
            .field("kind", &self.kind)
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[REDACTED]"))
            .field("credential_source", &self.credential_source)
            .field("timeouts", &self.timeouts)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("retry", &self.retry)
            .field("default_hints", &self.default_hints)
            .field("prompt_cache", &self.prompt_cache)
            .field("reasoning", &self.reasoning)
            .field("images", &self.images)
            .field("output_mode", &self.output_mode)
            .field("tool_mode", &self.tool_mode)
            .field("rate_limits", &self.rate_limits)
            .finish()
    }
}

/// Serializes for diagnostics and config dumps: the key is `"[REDACTED]"` when present and
/// header values are replaced the same way.
impl Serialize for ProviderSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let headers: BTreeMap<&str, &str> = self
            .headers
            .keys()
            .map(|k| (k.as_str(), "[REDACTED]"))
            .collect();
        let mut s = serializer.serialize_struct("ProviderSpec", 17)?;
        s.serialize_field("kind", &self.kind)?;
        s.serialize_field("model", &self.model)?;
        s.serialize_field("base_url", &self.base_url)?;
        s.serialize_field("api_key", &self.api_key.as_ref().map(|_| "[REDACTED]"))?;
        s.serialize_field("credential_source", &self.credential_source)?;
        s.serialize_field("timeouts", &self.timeouts)?;
        s.serialize_field("headers", &headers)?;
        s.serialize_field("retry", &self.retry)?;
        s.serialize_field("default_hints", &self.default_hints)?;
        s.serialize_field("anthropic_version", &self.anthropic_version)?;
        s.serialize_field("http2_prior_knowledge", &self.http2_prior_knowledge)?;
        s.serialize_field("prompt_cache", &self.prompt_cache)?;
        s.serialize_field("reasoning", &self.reasoning)?;
        s.serialize_field("images", &self.images)?;
        s.serialize_field("structured_output", &self.output_mode)?;
        s.serialize_field("tool_calling", &self.tool_mode)?;
        s.serialize_field("rate_limits", &self.rate_limits)?;
        s.end()
    }
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
