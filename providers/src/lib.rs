//! `skillet-providers`: one [`Provider`] trait over OpenAI-compatible, Ollama, Anthropic and
//! Gemini chat APIs, with one retry policy, deadlines, cancellation and secret credentials, plus the
//! [`OverridePolicy`] a host uses to restrict request-supplied provider configs.
//!
//! This crate never sees a skill: the engine translates its turns into [`ChatRequest`]s and maps
//! [`ProviderError`] kinds onto A2E error codes. Dependency direction: engine → providers.
//!
//! # API at a glance
//!
//! - [`ProviderSpec`] — which API, model, base URL, credential ([`secrecy::SecretString`]),
//!   timeouts, extra headers, retry settings. Built with [`ProviderSpec::from_llm_config`] from an
//!   A2E `LLMConfig`'s `provider_name`, `provider_config` and `provider_credentials`.
//! - [`ProviderPool`] — turns a spec into an `Arc<dyn Provider>`; equal specs share a provider,
//!   at most [`ProviderPool::DEFAULT_CAPACITY`] providers are cached (least recently used goes
//!   first), and every provider shares the pool's one HTTP client (timeouts apply per request).
//! - [`Provider::chat`] — [`ChatRequest`] (system, [`ChatMessage`]s, [`ToolSpec`]s, optional
//!   [`ResponseSchema`], [`Hints`]; schemas are [`SharedJson`], written as JSON text once) + [`CallOptions`] (deadline, cancellation, [`StreamSink`],
//!   [`RetryObserver`]) → [`ChatResponse`] (text, [`ToolCall`]s, [`FinishReason`], [`Usage`],
//!   request id) or [`ProviderError`] (a [`ProviderErrorKind`] plus `retryable` and `status`).
//! - [`EnvProvider`] — the provider the standard environment variables name (`OPENAI_API_KEY`,
//!   `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`, `OLLAMA_HOST`, `SKILLET_PROVIDER`,
//!   `SKILLET_MODEL`),
//!   as a spec.
//! - [`OverridePolicy`] — deserializable from the host's config; `check(&spec)` → `Ok` or a
//!   [`PolicyDenial`] with a [`DenialReason`].
//! - [`FallbackChain`] — a `Provider` over providers tried in order: a turn moves on after a
//!   link's retries are spent on a retryable failure, or on a context-length or quota refusal
//!   (`fallback.rs`), told to the observer as a [`FallbackNotice`].
//! - [`RateLimits`] — a spec's `requests_per_minute` / `tokens_per_minute`, enforced before
//!   every attempt by the provider itself and shared by every call to it (`rate_limit.rs`);
//!   waits are told to the observer as a [`RateLimitNotice`] and never cross the deadline.
//! - [`enable_mode_cache`] — a process that calls it (the `skillet` binary) keeps the modes a
//!   server + model refused in a cache file across processes (`mode_cache.rs`,
//!   [`MODE_CACHE_VAR`] relocates or turns it off).
//!
//! Contract details the engine relies on:
//! - A tool call whose arguments are not a JSON object comes back with
//!   [`ToolCall::invalid_arguments`] set (arguments kept as the raw string) instead of failing
//!   the chat; answer it with [`ChatMessage::tool_error`].
//! - `finish_reason` is [`FinishReason::ToolCalls`] whenever `tool_calls` is non-empty.
//! - Retries happen inside `chat`; an error that comes out has already used its attempts.
//!   `retryable` still says whether the failure was transient. A retry wait that would cross
//!   the deadline fails at once with [`ProviderErrorKind::Timeout`] (keeping the HTTP status).
//! - Structured output on Anthropic goes through a forced tool ([`anthropic::ANSWER_TOOL`]);
//!   the answer comes back as `text` like on the other providers.
//!
//! # One provider shape
//!
//! Every provider is the same generic `HttpProvider<W>` over a crate-private `Wire` (see
//! `wire.rs`): the wire maps requests to typed serde structs and decodes whole bodies, stream
//! events and error bodies; the generic provider owns retry, send, stream tracking and size
//! limits, cancellation, the deadline and redaction. Each wire is a folder of the same shape
//! (`openai/`, `anthropic/`, `gemini/`, `ollama/`: `mod.rs` the `Wire` impl, `request.rs`,
//! `response.rs`, `stream.rs`), and no wire imports another: what two share lives in the
//! shared modules (`wire.rs`, `transport.rs`, `modes.rs`, `types.rs`). **Adding a provider is
//! one folder of that shape (a unit type implementing `Wire`) plus one row in the
//! `with_provider_kinds!` table in `kind.rs`**, which declares the [`ProviderKind`] variant and
//! reads its name, default base URL and credential rule from the wire. The unit test
//! `wire_extension_tests` proves it with a throwaway fourth wire run through the generic
//! provider against a real server.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use skillet_providers::*;
//! let config = serde_json::json!({"model": "llama3.2", "base_url": "http://127.0.0.1:11434"});
//! let spec = ProviderSpec::from_llm_config("ollama", config.as_object(), &|_| None)?;
//! let provider = ProviderPool::new().provider(&spec)?;
//! let request = ChatRequest { messages: vec![ChatMessage::user("hi")], ..Default::default() };
//! let sink = |delta: &str| print!("{delta}");
//! let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
//! let options = CallOptions::default().with_deadline(deadline).with_stream(&sink);
//! let response = provider.chat(request, options).await?;
//! let tokens = response.usage.map(|u| u.output_tokens.to_string());
//! println!("{} ({} tokens out)", response.text, tokens.as_deref().unwrap_or("unknown"));
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod anthropic;
mod config_values;
mod error;
mod fallback;
mod frames;
mod from_env;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod gemini;
mod hints;
mod http_provider;
mod images;
#[cfg(test)]
mod json_writer_tests;
mod kind;
mod mode_cache;
mod mode_names;
mod modes;
mod notices;
mod ollama;
mod openai;
mod policy;
mod pool;
mod provider;
mod rate_limit;
mod refusal;
mod retry;
mod shared_json;
mod spec;
mod strict_schema;
mod text_reply;
mod toolshim;
mod transport;
mod types;
mod wire;
#[cfg(test)]
mod wire_extension_tests;

pub use policy::{
    DenialReason, OverridePolicy, OverridePolicyConfig, PolicyConfigError, PolicyDenial,
};
pub use pool::{ProviderPool, build_provider};

pub use from_env::{
    EnvError, EnvProvider, base_url_from_lookup, base_url_var, key_var, ollama_base_url,
};
pub use ollama::{OllamaModelsError, ollama_models};

pub use config_values::ConfigError;
pub use error::{ProviderError, ProviderErrorKind};
pub use fallback::{FallbackChain, FallbackLink};
pub use images::{DEFAULT_MAX_IMAGE_BYTES, ImageSettings};
pub use kind::ProviderKind;
pub use mode_cache::{MODE_CACHE_VAR, enable_mode_cache};
pub use mode_names::{Feature, OutputMode, ToolMode};
pub use modes::{Modes, SchemaDelivery};
pub use notices::{
    FallbackNotice, ModeNotice, RateLimitKind, RateLimitNotice, RetryNotice, RetryObserver,
};
pub use provider::{CallOptions, Provider};
pub use rate_limit::RateLimits;
pub use shared_json::SharedJson;
pub use spec::{CredentialSource, ProviderSpec, RetrySettings, Timeouts};
pub use text_reply::find_json_value;
pub use transport::POOL_MAX_IDLE_PER_HOST;
pub use types::{
    ChatMessage, ChatRequest, ChatResponse, FinishReason, Hints, ImageInput, ImageSource,
    REASONING_EFFORTS, Reasoning, ResponseSchema, StreamSink, ThinkingBlock, ToolCall, ToolSpec,
    TurnPhase, Usage,
};
