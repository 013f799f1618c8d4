//! What a provider tells its caller while a call runs, and the observer that hears it: a retry
//! about to wait ([`RetryNotice`]), a refused mode stepped down ([`ModeNotice`]), a wait for
//! the provider's own rate limit ([`RateLimitNotice`]), a turn moved to a fallback
//! ([`FallbackNotice`]) — all told to one [`RetryObserver`].
//!
//! Plain data, so every module that tells one (`retry`, `http_provider`, `rate_limit`,
//! `fallback`) and the contract that carries the observer (`provider`) import it, and it
//! imports none of them. Not here: when each is told (those modules).

use std::fmt;
use std::time::Duration;

use crate::error::ProviderErrorKind;
use crate::kind::ProviderKind;
use crate::mode_names::Feature;

/// What the retry policy tells an observer before it waits and tries again.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryNotice {
    /// The kind of the provider whose attempt failed.
    pub provider: ProviderKind,
    /// The attempt that failed (1-based).
    pub attempt: u32,
    /// The attempts allowed in all, the first included (the spec's retry settings).
    pub max_attempts: u32,
    /// How long the policy waits before the next attempt.
    pub wait: Duration,
    /// What the failed attempt returned.
    pub error_kind: ProviderErrorKind,
    /// Its HTTP status, if the server answered.
    pub status: Option<u16>,
    /// Set when the server at this base URL answered that it is still loading its model (HTTP
    /// 503 `Loading model`): the policy then waits with backoff, without spending attempts, up
    /// to the call's deadline, and `wait` is that whole wait. Told once per call.
    pub loading_server: Option<String>,
}

impl fmt::Display for RetryNotice {
    /// E.g. `retrying after HTTP 429 (rate_limited), waiting 1.2s (attempt 2 of 3)`, or `the
    /// server at http://127.0.0.1:8080/v1 is still loading its model; waiting up to 28 s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(server) = &self.loading_server {
            return write!(
                f,
                "the server at {server} is still loading its model; waiting up to {:.0} s",
                self.wait.as_secs_f64().ceil()
            );
        }
        let cause = match self.status {
            Some(status) => format!("HTTP {status} ({})", self.error_kind.as_str()),
            None => self.error_kind.as_str().to_owned(),
        };
        write!(
            f,
            "retrying after {cause}, waiting {:.1}s (attempt {} of {})",
            self.wait.as_secs_f64(),
            self.attempt + 1,
            self.max_attempts
        )
    }
}

/// What a provider tells its caller when a refusal moved it to another mode.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeNotice {
    /// The provider's kind.
    pub provider: ProviderKind,
    /// The model the refusal is remembered for (per server + model).
    pub model: String,
    /// What was refused: the answer's schema or the tools.
    pub feature: Feature,
    /// The config spelling of the mode the server refused.
    pub from: String,
    /// The config spelling of the next mode on the ladder, used for this server + model from
    /// now on.
    pub to: String,
    /// The server's words (status and message, redacted and shortened).
    pub reason: String,
}

impl fmt::Display for ModeNotice {
    /// E.g. `the server refused structured output mode json_schema (HTTP 500: ...); using
    /// json_object for gemma from now on`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the server refused {} mode {} ({}); using {} for {} from now on",
            self.feature.as_str(),
            self.from,
            self.reason,
            self.to,
            self.model
        )
    }
}

/// Told about every retry, e.g. so the engine can emit a `log` event.
pub trait RetryObserver: Send + Sync {
    /// Called before the policy sleeps `notice.wait` and tries again.
    fn retrying(&self, notice: &RetryNotice);

    /// Called when the server refused a structured-output or tool mode and the turn is tried
    /// again in the next one (remembered for the server+model from then on).
    fn mode_changed(&self, notice: &ModeNotice) {
        let _ = notice;
    }

    /// Called before a request waits for the provider's own `requests_per_minute` or
    /// `tokens_per_minute` limit (`rate_limit.rs`).
    fn rate_limited(&self, notice: &RateLimitNotice) {
        let _ = notice;
    }

    /// Called when a [`FallbackChain`](crate::FallbackChain) sends the turn to its next
    /// provider (`fallback.rs`).
    fn fell_back(&self, notice: &FallbackNotice) {
        let _ = notice;
    }
}

impl<F: Fn(&RetryNotice) + Send + Sync> RetryObserver for F {
    fn retrying(&self, notice: &RetryNotice) {
        self(notice)
    }
}

/// Which limit made a request wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateLimitKind {
    /// `requests_per_minute`.
    Requests,
    /// `tokens_per_minute`.
    Tokens,
}

impl RateLimitKind {
    /// The `provider_config` key.
    pub fn as_str(self) -> &'static str {
        match self {
            RateLimitKind::Requests => "requests_per_minute",
            RateLimitKind::Tokens => "tokens_per_minute",
        }
    }
}

/// What a provider tells its observer before it waits for its own rate limit.
#[derive(Debug, Clone, PartialEq)]
pub struct RateLimitNotice {
    /// The provider's kind.
    pub provider: ProviderKind,
    /// The limit that is full.
    pub limit: RateLimitKind,
    /// Its value per minute.
    pub per_minute: u32,
    /// How long the request waits.
    pub wait: Duration,
}

impl fmt::Display for RateLimitNotice {
    /// E.g. `rate limit requests_per_minute = 60 reached, waiting 0.8s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "rate limit {} = {} reached, waiting {:.1}s",
            self.limit.as_str(),
            self.per_minute,
            self.wait.as_secs_f64()
        )
    }
}

/// What a chain tells its observer when a turn moves to the next provider.
#[derive(Debug, Clone, PartialEq)]
pub struct FallbackNotice {
    /// The link that failed.
    pub from: String,
    /// The link that gets the turn.
    pub to: String,
    /// The model of the link that gets the turn.
    pub to_model: String,
    /// The failure's kind.
    pub error_kind: ProviderErrorKind,
    /// Its HTTP status, if the server answered.
    pub status: Option<u16>,
}

impl fmt::Display for FallbackNotice {
    /// E.g. `primary failed (HTTP 500, unavailable); the turn goes to fallback backup`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cause = match self.status {
            Some(status) => format!("HTTP {status}, {}", self.error_kind.as_str()),
            None => self.error_kind.as_str().to_owned(),
        };
        write!(
            f,
            "{} failed ({cause}); the turn goes to fallback {} ({})",
            self.from, self.to, self.to_model
        )
    }
}
